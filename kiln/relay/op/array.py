"""Array operators TVM keeps in ``relay/op/transform.py`` beyond the data-movement set: ``stack arange meshgrid
trilu unravel_index sequence_mask reverse_sequence ndarray_size searchsorted sparse_to_dense einsum adv_index
matrix_set_diag`` and ``segment_sum`` (made of ``scatter_elements``, as in TVM).

``arange`` needs constant ``start``/``stop``/``step`` (its length is part of its type; a value known only at run
time is the dynamic-shapes issue's ``relay.Any``). ``einsum`` reads numpy's subscript notation, explicit
(``ij,jk->ik``) or implicit (``ij,jk``: the letters seen once, sorted), with ``...`` for leading broadcast axes.
"""

import math

import numpy as np

from ...error import TypeInferenceError
from ...ir.expr import RelayExpr
from ...ir.type import Any, TensorType, TupleType, is_any
from ...topi.einsum import einsum_shape
from ..expr import Tuple, TupleWrapper, const
from . import attrs_array as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import (
    ALL,
    INTEGER,
    NUMERIC,
    check_dtype,
    dims_match,
    normalize_axis,
    same_dtype,
    shapes_match,
    tensor_arg,
)


def _tuple_fields(types, what):
    tup = types[0]
    if not isinstance(tup, TupleType) or not tup.fields:
        raise TypeInferenceError(f"{what} takes a non-empty tuple of tensors, got {tup}")
    return [tensor_arg(tup.fields, i, "tuple field") for i in range(len(tup.fields))]


def _stack_rel(types, attrs):
    fields = _tuple_fields(types, "stack")
    dtype = same_dtype(fields, "stack: the stacked tensors")
    if not all(shapes_match(f.shape, fields[0].shape) for f in fields):
        raise TypeInferenceError(f"stack: the tensors must share one shape, got "
                                 f"{', '.join(str(f.shape) for f in fields)}")
    ndim = fields[0].ndim + 1
    axis = normalize_axis(attrs.axis, ndim, "stack axis")
    return TensorType(fields[0].shape[:axis] + (len(fields),) + fields[0].shape[axis:], dtype)


register_relay_op("stack", 1, _stack_rel, OpPattern.INJECTIVE, A.StackAttrs)


def _as_tuple(data):
    return Tuple(tuple(data)) if isinstance(data, list | tuple) else data


def stack(data, axis):
    """Join the same-shape tensors of ``data`` along a new axis ``axis``."""
    return make_call("stack", [_as_tuple(data)], A.StackAttrs(int(axis)))


def arange_length(start, stop, step) -> int:
    """The number of elements of ``arange(start, stop, step)``: ``ceil((stop - start) / step)``, at least 0."""
    return max(0, math.ceil((stop - start) / step))


def _arange_rel(types, attrs):
    check_dtype(attrs.dtype, NUMERIC, "the result", "arange")
    for i, name in enumerate(("start", "stop", "step")):
        t = tensor_arg(types, i, name)
        if t.shape:
            raise TypeInferenceError(f"arange: {name} must be a scalar, got {t}")
    return TensorType((arange_length(attrs.start, attrs.stop, attrs.step),), attrs.dtype)


register_relay_op("arange", 3, _arange_rel, OpPattern.OPAQUE, A.ArangeAttrs, dtypes=NUMERIC)


def _scalar_value(value, what):
    if isinstance(value, RelayExpr):
        data = getattr(value, "data", None)
        if data is None:
            raise TypeInferenceError(f"arange: {what} must be a constant (a value known only at run time needs "
                                     "dynamic shapes)")
        return data.numpy().item()
    return value


def arange(start, stop=None, step=None, dtype="float32"):
    """``start, start + step, ...`` up to ``stop`` (excluded), numpy's ``arange``; with one argument, ``0`` to it.

    ``start``, ``stop`` and ``step`` are numbers or expressions; a non-constant one makes ``dyn.arange``, whose
    length is known at run time.
    """
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    from .dispatch import dyn_ops, is_dynamic

    if any(is_dynamic(x) for x in (start, stop, step)):  # values known at run time: the length is too
        args = [x if isinstance(x, RelayExpr) else const(np.array(x).astype(dtype)) for x in (start, stop, step)]
        return dyn_ops().arange(*args, dtype)
    values = [_scalar_value(x, what) for x, what in ((start, "start"), (stop, "stop"), (step, "step"))]
    args = [x if isinstance(x, RelayExpr) else const(np.array(x).astype(dtype)) for x in (start, stop, step)]
    return make_call("arange", args, A.ArangeAttrs(*values, dtype))


def _meshgrid_rel(types, attrs):
    fields = _tuple_fields(types, "meshgrid")
    if any(f.ndim > 1 for f in fields):
        raise TypeInferenceError(f"meshgrid: every input must be a scalar or 1-D, got "
                                 f"{', '.join(str(f) for f in fields)}")
    sizes = [f.shape[0] if f.ndim else 1 for f in fields]
    if attrs.indexing == "xy" and len(sizes) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    return TupleType([TensorType(tuple(sizes), f.dtype) for f in fields])


register_relay_op("meshgrid", 1, _meshgrid_rel, OpPattern.INJECTIVE, A.MeshgridAttrs)


def meshgrid(data, indexing="ij"):
    """Coordinate grids of the 1-D tensors of ``data`` (numpy's ``meshgrid``; ``"xy"`` swaps the first two axes);
    index the result for each grid."""
    data = _as_tuple(data)
    count = len(data.fields) if isinstance(data, Tuple) else None
    call = make_call("meshgrid", [data], A.MeshgridAttrs(indexing))
    return TupleWrapper(call, count) if count is not None else call


def _trilu_rel(types, attrs):
    data, k = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "k")
    if data.ndim < 2 or k.shape:
        raise TypeInferenceError(f"trilu: data {data} must have rank >= 2 and k {k} must be a scalar")
    return data


register_relay_op("trilu", 2, _trilu_rel, OpPattern.INJECTIVE, A.TriluAttrs, dtypes=(ALL, INTEGER))


def trilu(data, k, upper=True):
    """The upper (``upper``) or lower triangle of the last two axes of ``data`` from diagonal ``k`` on (numpy's
    ``triu``/``tril``), zeros elsewhere; ``k`` is an int scalar expression or number."""
    if not isinstance(k, RelayExpr):
        k = const(np.array(k, "int32"))
    return make_call("trilu", [data, k], A.TriluAttrs(upper))


def _unravel_index_rel(types, attrs):
    indices, shape = tensor_arg(types, 0, "indices"), tensor_arg(types, 1, "shape")
    if indices.ndim > 1 or shape.ndim != 1:
        raise TypeInferenceError(f"unravel_index: indices {indices} must have rank 0 or 1 and shape {shape} rank 1")
    same_dtype([indices, shape], "unravel_index indices and shape")
    return TensorType((shape.shape[0],) + indices.shape, indices.dtype)


register_relay_op("unravel_index", 2, _unravel_index_rel, OpPattern.INJECTIVE, dtypes=INTEGER)


def unravel_index(indices, shape):
    """The coordinates of the flat ``indices`` in an array of ``shape``: one row per axis (numpy's
    ``unravel_index`` stacked)."""
    return make_call("unravel_index", [indices, shape])


def _sequence_mask_rel(types, attrs):
    data, length = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "valid_length")
    if attrs.axis not in (0, 1) or data.ndim < 2:
        raise TypeInferenceError(f"axis must be 0 or 1 of data of rank >= 2, got axis {attrs.axis} "
                                 f"and {data}")
    if not shapes_match(length.shape, (data.shape[1 - attrs.axis],)):
        raise TypeInferenceError(f"valid_length {length} must be 1-D of the batch size "
                                 f"{data.shape[1 - attrs.axis]} of {data}")
    if np.dtype(data.dtype).kind in "iu" and not (
            np.iinfo(data.dtype).min <= attrs.mask_value <= np.iinfo(data.dtype).max):
        raise TypeInferenceError(f"mask_value {attrs.mask_value} is outside the range of the data's "
                                 f"dtype {data.dtype}")
    return data


# valid lengths may be floats (TVM's tests give them so): a step is kept while it is less than the length
register_relay_op("sequence_mask", 2, _sequence_mask_rel, OpPattern.INJECTIVE, A.SequenceMaskAttrs,
                  dtypes=(NUMERIC, NUMERIC))


def sequence_mask(data, valid_length, mask_value=0, axis=0):
    """``data`` with the steps of each sequence at or after its ``valid_length`` set to ``mask_value``; ``axis``
    (0 or 1) is the time axis, the other of the two the batch axis."""
    return make_call("sequence_mask", [data, valid_length], A.SequenceMaskAttrs(float(mask_value), int(axis)))


def _reverse_sequence_rel(types, attrs):
    data, lengths = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "seq_lengths")
    seq = normalize_axis(attrs.seq_axis, data.ndim, "reverse_sequence seq_axis")
    batch = normalize_axis(attrs.batch_axis, data.ndim, "reverse_sequence batch_axis")
    if seq == batch:
        raise TypeInferenceError(f"reverse_sequence: seq_axis and batch_axis are both axis {seq} of {data}; they "
                                 f"must differ")
    if lengths.ndim != 1:
        raise TypeInferenceError(f"reverse_sequence: seq_lengths must be a 1-D vector, got {lengths}")
    if not shapes_match(lengths.shape, (data.shape[batch],)):
        # TVM's wording (its tests look for it), less its misspelling of the operator
        raise TypeInferenceError(f"reverse_sequence: seq_lengths size should match with dimension of batch axis, but "
                                 f"got dimension of batch_axis = {data.shape[batch]}, and seq_length size = "
                                 f"{lengths.shape[0]}")
    return data


register_relay_op("reverse_sequence", 2, _reverse_sequence_rel, OpPattern.INJECTIVE, A.ReverseSequenceAttrs,
                  dtypes=(ALL, INTEGER))


def reverse_sequence(data, seq_lengths, seq_axis=1, batch_axis=0):
    """``data`` with the first ``seq_lengths[b]`` elements along ``seq_axis`` of each batch ``b`` reversed."""
    return make_call("reverse_sequence", [data, seq_lengths], A.ReverseSequenceAttrs(int(seq_axis), int(batch_axis)))


def _ndarray_size_rel(types, attrs):
    tensor_arg(types, 0, "data")
    check_dtype(attrs.dtype, NUMERIC, "the result", "ndarray_size")
    return TensorType((), attrs.dtype)


register_relay_op("ndarray_size", 1, _ndarray_size_rel, OpPattern.OPAQUE, A.NdarraySizeAttrs)


def ndarray_size(data, dtype="int32"):
    """The number of elements of ``data``, a scalar of ``dtype``."""
    return make_call("ndarray_size", [data], A.NdarraySizeAttrs(dtype))


def _searchsorted_rel(types, attrs):
    seq, values = tensor_arg(types, 0, "sorted_sequence"), tensor_arg(types, 1, "values")
    check_dtype(attrs.dtype, INTEGER, "the result", "searchsorted")
    same_dtype([seq, values], "searchsorted sorted_sequence and values")
    if seq.ndim == 0 or (seq.ndim > 1 and (values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1])):
        raise TypeInferenceError(f"searchsorted: sorted_sequence {seq} must be 1-D or share all but its last axis "
                                 f"with values {values}")
    return TensorType(values.shape, attrs.dtype)


register_relay_op("searchsorted", 2, _searchsorted_rel, OpPattern.OPAQUE, A.SearchSortedAttrs, dtypes=NUMERIC)


def searchsorted(sorted_sequence, values, right=False, dtype="int32"):
    """For each value, the index in the (last axis of the) sorted sequence where it would be inserted to keep it
    sorted: before equal elements, or after them when ``right`` (numpy's ``searchsorted``)."""
    return make_call("searchsorted", [sorted_sequence, values], A.SearchSortedAttrs(right, dtype))


def _sparse_to_dense_rel(types, attrs):
    indices, values, default = (tensor_arg(types, i, n) for i, n in enumerate(["sparse_indices", "sparse_values",
                                                                              "default_value"]))
    if indices.ndim > 2 or values.ndim > 1 or default.shape:
        raise TypeInferenceError(f"sparse_to_dense: sparse_indices {indices} must have rank <= 2, sparse_values "
                                 f"{values} rank <= 1 and default_value {default} be a scalar")
    count = indices.shape[0] if indices.ndim else 1
    if values.ndim == 1 and not dims_match(values.shape[0], count):  # sizes known only at run time: the kernel
        raise TypeInferenceError(f"sparse_to_dense: {count} indices but sparse_values {values}")  # checks them
    rank = indices.shape[1] if indices.ndim == 2 else 1
    if not dims_match(rank, len(attrs.output_shape)):
        raise TypeInferenceError(f"sparse_to_dense: indices {indices} address rank {rank}, output_shape "
                                 f"{attrs.output_shape} has rank {len(attrs.output_shape)}")
    same_dtype([values, default], "sparse_to_dense sparse_values and default_value")
    return TensorType(attrs.output_shape, values.dtype)


register_relay_op("sparse_to_dense", 3, _sparse_to_dense_rel, OpPattern.OPAQUE, A.SparseToDenseAttrs,
                  dtypes=(INTEGER, ALL))


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0):
    """A dense tensor of ``output_shape`` holding ``sparse_values`` at ``sparse_indices`` (rows of coordinates)
    and ``default_value`` elsewhere; of repeated indices the last wins. A number as ``default_value`` takes the
    values' dtype. ``output_shape`` a non-constant Relay expression makes ``dyn.sparse_to_dense``."""
    from ..transform.infer_type import infer_type
    from .dispatch import constant_value, dyn_ops, is_dynamic

    if not isinstance(sparse_values, RelayExpr):
        sparse_values = const(sparse_values)
    if not isinstance(default_value, RelayExpr):
        dtype = infer_type(sparse_values).checked_type.dtype
        default_value = const(np.array(default_value).astype(dtype), dtype)
    if is_dynamic(output_shape):
        return dyn_ops().sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value)
    output_shape = constant_value(output_shape)  # a Relay constant's entries
    return make_call("sparse_to_dense", [sparse_indices, sparse_values, default_value],
                     A.SparseToDenseAttrs(tuple(output_shape) if isinstance(output_shape, list | tuple) else
                                          (output_shape,)))


def _einsum_rel(types, attrs):
    fields = _tuple_fields(types, "einsum")
    dtype = same_dtype(fields, "einsum operands")
    try:
        shape = einsum_shape(attrs.equation, [f.shape for f in fields])
    except ValueError as exc:
        raise TypeInferenceError(f"einsum {attrs.equation!r} of {', '.join(str(f) for f in fields)}: {exc}") from exc
    return TensorType(shape, dtype)


register_relay_op("einsum", 1, _einsum_rel, OpPattern.INJECTIVE, A.EinsumAttrs, dtypes=NUMERIC)


def einsum(data, equation):
    """numpy's ``einsum`` of the tensors of ``data`` by the subscripts ``equation``."""
    return make_call("einsum", [_as_tuple(data)], A.EinsumAttrs(str(equation)))


def _adv_index_rel(types, attrs):
    fields = _tuple_fields(types, "adv_index")
    data, indices = fields[0], fields[1:]
    if len(indices) > data.ndim:
        raise TypeInferenceError(f"adv_index: {len(indices)} index tensors for {data}")
    for t in indices:
        check_dtype(t.dtype, INTEGER, "an index", "adv_index")
    from .type_relations import broadcast_shapes

    return TensorType(broadcast_shapes(*[t.shape for t in indices]) + data.shape[len(indices):], data.dtype)


register_relay_op("adv_index", 1, _adv_index_rel, OpPattern.INJECTIVE)


def adv_index(inputs):
    """numpy's advanced indexing ``data[i0, i1, ...]`` of ``inputs = [data, i0, i1, ...]`` (index tensors
    broadcast together; the remaining axes of ``data`` follow)."""
    return make_call("adv_index", [_as_tuple(inputs)])


def _matrix_set_diag_rel(types, attrs):
    data, diagonal = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "diagonal")
    if data.ndim < 2:
        raise TypeInferenceError(f"matrix_set_diag: data {data} must have rank >= 2")
    rows, cols = data.shape[-2:]
    if is_any(rows) or is_any(cols):  # the diagonals' length is checked at run time (the kernel records it)
        longest = Any()
    else:
        lengths = [min(rows + min(0, d), cols - max(0, d)) for d in range(attrs.k1, attrs.k2 + 1)]
        if min(lengths) <= 0:
            raise TypeInferenceError(f"matrix_set_diag: diagonals {attrs.k1}..{attrs.k2} are outside {data}")
        longest = max(lengths)
    want = data.shape[:-2] + ((attrs.k2 - attrs.k1 + 1,) if attrs.k1 != attrs.k2 else ()) + (longest,)
    if not shapes_match(diagonal.shape, want):
        raise TypeInferenceError(f"matrix_set_diag: diagonal {diagonal} must have shape {want} for data {data}")
    same_dtype([data, diagonal], "matrix_set_diag data and diagonal")
    return data


register_relay_op("matrix_set_diag", 2, _matrix_set_diag_rel, OpPattern.INJECTIVE, A.MatrixSetDiagAttrs)


def matrix_set_diag(data, diagonal, k=0, align="RIGHT_LEFT"):
    """``data`` with the diagonals ``k`` (an int or a ``(low, high)`` range) of its last two axes replaced by
    ``diagonal`` (TensorFlow's ``matrix_set_diag``; ``align`` places diagonals shorter than the longest)."""
    k1, k2 = (k, k) if isinstance(k, int) else (int(k[0]), int(k[1]))
    return make_call("matrix_set_diag", [data, diagonal], A.MatrixSetDiagAttrs(
        k1, k2, align.startswith("RIGHT"), align.endswith("RIGHT")))


def segment_sum(data, segment_ids, num_segments=None):
    """The sums of the rows of ``data`` with the same segment id: a ``scatter_elements`` add into zeros, as in TVM.
    ``num_segments`` defaults to the largest id + 1; when that (or ``data``'s shape) is known only at run time,
    the zeros get their shape at run time (``dyn.zeros``) and the result's first dimension is dynamic."""
    from ...ir.type import is_any
    from ..transform.infer_type import infer_type
    from .like import broadcast_to_like, slice_like
    from .reduce import max as reduce_max
    from .tensor import concatenate, reshape, shape_of, strided_slice, zeros
    from .transform import scatter_elements

    data_type = infer_type(data).checked_type
    shape, dtype = tuple(data_type.shape), data_type.dtype
    # rows past the last segment id are not summed (TVM's scatter reads only as many rows as there are ids)
    column = reshape(segment_ids, (-1,) + (1,) * (len(shape) - 1))
    rows_type = infer_type(segment_ids).checked_type.shape[0]
    if not is_any(rows_type) and not is_any(shape[0]) and rows_type == shape[0]:
        updates = data
    else:
        updates = slice_like(data, column, axes=(0,))
    ids = broadcast_to_like(column, updates)
    values = getattr(segment_ids, "data", None)
    if num_segments is None and values is not None:
        num_segments = int(values.numpy().max()) + 1
    if num_segments is not None and not any(is_any(d) for d in shape[1:]):
        return scatter_elements(zeros((int(num_segments),) + shape[1:], dtype), ids, updates, 0, "add")
    # the shape of the sums is computed at run time: (number of segments, *data.shape[1:])
    if num_segments is None:
        count = reshape(reduce_max(segment_ids), (1,)).astype("int64") + const(np.array([1]), "int64")
    else:
        count = const(np.array([int(num_segments)]), "int64")
    rows = strided_slice(shape_of(data, "int64"), [1], [len(shape)])
    return scatter_elements(zeros(concatenate([count, rows], 0), dtype), ids, updates, 0, "add")


COMPOSITES = ["segment_sum"]
"""Builders of this module made of other operators (exported beside the operator builders)."""
