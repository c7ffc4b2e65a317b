"""Sparse (COO) operators whose result size depends on the values: ``sparse_fill_empty_rows``.

``sparse_fill_empty_rows(indices, values, dense_shape, default_value)`` adds an entry ``(r, 0, ..., 0)`` holding
``default_value[0]`` for every row ``r < dense_shape[0]`` that has no entry (the rows of ``indices`` are sorted by
their first coordinate), keeping the order by row; it returns ``(new_indices, new_values, empty_row_indicator)``.
The number of entries is known only at run time: the shape function counts the distinct rows.
"""

from ...error import TypeInferenceError
from ...ir.type import Any, TensorType, TupleType
from ...te import compute as te_compute
from ...tir import op as _tir
from ...topi.sparse import distinct_rows
from ..expr import Tuple, TupleGetItem
from .op import OpPattern, make_call, register_relay_op, register_shape_func
from .type_relations import ALL, INTEGER, tensor_arg


def _sparse_fill_empty_rows_rel(types, attrs):
    indices, values, dense_shape, default = (tensor_arg(types, i, n) for i, n in enumerate(
        ["sparse_indices", "sparse_values", "dense_shape", "default_value"]))
    if indices.ndim != 2 or values.ndim != 1 or dense_shape.ndim != 1 or default.ndim != 1:
        raise TypeInferenceError(f"sparse_fill_empty_rows: sparse_indices {indices} must be (N, ndim), "
                                 f"sparse_values {values} (N,), dense_shape {dense_shape} (ndim,) and default_value "
                                 f"{default} (1,)")
    if values.dtype != default.dtype:
        raise TypeInferenceError(f"sparse_fill_empty_rows: default_value {default} must have the dtype of "
                                 f"sparse_values {values}")
    return TupleType([TensorType((Any(), indices.shape[1]), indices.dtype), TensorType((Any(),), values.dtype),
                      TensorType((Any(),), "bool")])


register_relay_op("sparse_fill_empty_rows", 4, _sparse_fill_empty_rows_rel, OpPattern.OPAQUE,
                  dtypes=(INTEGER, ALL, INTEGER, ALL))


@register_shape_func("sparse_fill_empty_rows", True)
def _sparse_fill_empty_rows_shape_func(attrs, inputs, out_types):
    """``N + rows - distinct rows`` entries (of ``ndim`` coordinates), and ``rows = dense_shape[0]``."""
    indices, _, dense_shape, _ = inputs
    n, ndim = (_tir.cast(d, "int64") if not isinstance(d, int) else _tir.const(d, "int64") for d in indices.shape)
    distinct = distinct_rows(indices)
    rows = te_compute((), lambda: _tir.cast(dense_shape(0), "int64"), name="sfer_rows")
    count = te_compute((), lambda: n + rows() - _tir.cast(distinct(), "int64"), name="sfer_count")
    entries = te_compute((2,), lambda j: _tir.select(_tir.equal(j, 0), count(), ndim), name="sfer_shape0")
    return [entries, te_compute((1,), lambda j: count(), name="sfer_shape1"),
            te_compute((1,), lambda j: rows(), name="sfer_shape2")], []


__all__ = ["sparse_fill_empty_rows"]


def sparse_fill_empty_rows(sparse_indices, sparse_values, dense_shape, default_value):
    """Give every empty row of a sparse COO tensor an entry ``(r, 0, ...)`` holding ``default_value[0]``:
    ``(new_sparse_indices, new_sparse_values, empty_row_indicator)``, a Relay tuple of the three (as TVM's
    ``relay.sparse_fill_empty_rows`` returns)."""
    call = make_call("sparse_fill_empty_rows", [sparse_indices, sparse_values, dense_shape, default_value])
    return Tuple(tuple(TupleGetItem(call, i) for i in range(3)))
