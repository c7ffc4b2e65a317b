"""Sparse operators: ``sparse_fill_empty_rows`` (COO, its result size depends on the values), ``nn.sparse_conv2d``
(a convolution whose weight is a BSR matrix) and ``nn.sparse_transpose`` (of a square CSR matrix).

``sparse_fill_empty_rows(indices, values, dense_shape, default_value)`` adds an entry ``(r, 0, ..., 0)`` holding
``default_value[0]`` for every row ``r < dense_shape[0]`` that has no entry (the rows of ``indices`` are sorted by
their first coordinate), keeping the order by row; it returns ``(new_indices, new_values, empty_row_indicator)``.
The number of entries is known only at run time: the shape function counts the distinct rows.

``nn.sparse_conv2d(data, weight_data, weight_indices, weight_indptr)`` (TVM's, made by its ConvertSparseConv2D
pass): the BSR weight's rows are the output channels, its columns the input channels (1x1) or the 3x3 window of
them with the output keeping the input's size (see :mod:`kiln.topi.nn.sparse`). ``nn.sparse_transpose(data,
indices, indptr)`` returns the transpose's three arrays, of the input's shapes and dtypes.
"""

from ...error import TypeInferenceError
from ...ir.type import Any, TensorType, TupleType, is_any
from ...te import compute as te_compute
from ...tir import op as _tir
from ...topi.sparse import distinct_rows
from ..expr import Tuple, TupleGetItem, TupleWrapper
from . import attrs_array as A
from .op import OpPattern, make_call, register_relay_op, register_shape_func
from .type_relations import ALL, INTEGER, NUMERIC, same_dtype, tensor_arg


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


__all__ = ["sparse_fill_empty_rows", "sparse_conv2d", "sparse_transpose"]


def sparse_fill_empty_rows(sparse_indices, sparse_values, dense_shape, default_value):
    """Give every empty row of a sparse COO tensor an entry ``(r, 0, ...)`` holding ``default_value[0]``:
    ``(new_sparse_indices, new_sparse_values, empty_row_indicator)``, a Relay tuple of the three (as TVM's
    ``relay.sparse_fill_empty_rows`` returns)."""
    call = make_call("sparse_fill_empty_rows", [sparse_indices, sparse_values, dense_shape, default_value])
    return Tuple(tuple(TupleGetItem(call, i) for i in range(3)))


def _index_vectors(named):
    for name, t in named:
        if t.ndim != 1:
            raise TypeInferenceError(f"{name} {t} must be 1-D")


def _sparse_conv2d_rel(types, attrs):
    data, weight, indices, indptr = (tensor_arg(types, i, n) for i, n in enumerate(
        ["data", "weight_data", "weight_indices", "weight_indptr"]))
    if data.ndim != 4 or weight.ndim not in (2, 3):
        raise TypeInferenceError(f"data {data} must be 4-D ({attrs.layout}) and weight_data "
                                 f"{weight} (blocks, bs_r) or (blocks, bs_r, bs_c) (BSR)")
    _index_vectors([("weight_indices", indices), ("weight_indptr", indptr)])
    same_dtype([data, weight], "nn.sparse_conv2d data and weight_data")
    channels = data.shape[3] if attrs.layout == "NHWC" else data.shape[1]
    bs_c = weight.shape[2] if weight.ndim == 3 else 1
    columns = channels * attrs.kernel_size[0] * attrs.kernel_size[1] if not is_any(channels) else None
    if columns is not None and isinstance(bs_c, int) and isinstance(columns, int) and columns % bs_c:
        raise TypeInferenceError(f"the weight's {columns} columns ({channels} channels of a "
                                 f"{attrs.kernel_size} kernel) are not a multiple of its block width {bs_c}")
    if is_any(indptr.shape[0]) or is_any(weight.shape[1]):
        units = Any()
    else:
        units = (indptr.shape[0] - 1) * weight.shape[1]
    n, h, w = (data.shape[0], data.shape[1], data.shape[2]) if attrs.layout == "NHWC" else (
        data.shape[0], data.shape[2], data.shape[3])
    shape = (n, h, w, units) if attrs.layout == "NHWC" else (n, units, h, w)
    return TensorType(shape, data.dtype)


register_relay_op("nn.sparse_conv2d", 4, _sparse_conv2d_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.SparseConv2DAttrs,
                  dtypes=(NUMERIC, NUMERIC, INTEGER, INTEGER))


def sparse_conv2d(dense_data, weight_data, weight_indices, weight_indptr, layout="NHWC", kernel_size=(1, 1)):
    """Convolve ``dense_data`` (NHWC or NCHW) with the BSR weight ``(weight_data, weight_indices, weight_indptr)``
    whose rows are the output channels (TVM's ``relay.op.nn._make.sparse_conv2d``, which its ConvertSparseConv2D
    pass makes from a ``nn.conv2d`` of a sparse constant weight).

    Parameters
    ----------
    dense_data : relay.Expr
        ``(M, H, W, K)`` for NHWC, ``(M, K, H, W)`` for NCHW.
    weight_data, weight_indices, weight_indptr : relay.Expr
        The BSR matrix: ``(blocks, bs_r)`` or ``(blocks, bs_r, bs_c)`` values, ``(blocks,)`` block columns and
        ``(N / bs_r + 1,)`` block-row starts. Its columns are the ``K`` channels (``kernel_size`` 1), or the ``9 K``
        entries of the 3x3 window, ``(kh, kw, c)`` flattened for NHWC and ``(c, kh, kw)`` for NCHW.
    layout : str
    kernel_size : int or pair of int
        1x1, or 3x3 (padded by 1: the output keeps the input's size).

    Returns
    -------
    relay.Expr
        ``(M, H, W, N)`` for NHWC, ``(M, N, H, W)`` for NCHW.
    """
    return make_call("nn.sparse_conv2d", [dense_data, weight_data, weight_indices, weight_indptr],
                     A.SparseConv2DAttrs(layout, kernel_size))


def _sparse_transpose_rel(types, attrs):
    data, indices, indptr = (tensor_arg(types, i, n) for i, n in enumerate(["sparse_data", "sparse_indices",
                                                                             "sparse_indptr"]))
    _index_vectors([("sparse_data", data), ("sparse_indices", indices),
                                           ("sparse_indptr", indptr)])
    nnz, other = data.shape[0], indices.shape[0]
    if not is_any(nnz) and not is_any(other) and isinstance(nnz, int) and isinstance(other, int) and nnz != other:
        raise TypeInferenceError(f"sparse_data {data} and sparse_indices {indices} must hold "
                                 f"one entry each per nonzero")
    return TupleType([data, indices, indptr])


register_relay_op("nn.sparse_transpose", 3, _sparse_transpose_rel, OpPattern.OPAQUE, A.SparseTransposeAttrs,
                  dtypes=(ALL, INTEGER))


def sparse_transpose(x):
    """The transpose of a square sparse matrix in CSR form (TVM's ``relay.nn.sparse_transpose``).

    Parameters
    ----------
    x : namedtuple or tuple
        ``(data, indices, indptr)`` of the CSR matrix (an object with those fields, or a sequence of three).

    Returns
    -------
    TupleWrapper
        ``(data, indices, indptr)`` of the transpose, of the same shapes and dtypes.
    """
    parts = (x.data, x.indices, x.indptr) if hasattr(x, "indices") else tuple(x)
    return TupleWrapper(make_call("nn.sparse_transpose", list(parts), A.SparseTransposeAttrs()), 3)
