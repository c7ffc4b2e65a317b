"""Data-movement operators beyond reshape/slice (TVM keeps them in ``relay/op/transform.py``): ``broadcast_to tile
repeat reverse gather gather_nd one_hot cumsum cumprod scatter_elements scatter_nd argwhere``.

Each relation gives the static result type; ``gather`` indexes along one axis with an index tensor of the data's
rank (numpy's ``take_along_axis``), ``gather_nd`` takes its index tuples from the *first* axis of ``indices`` (TVM's
convention: ``indices`` is ``(M, Y0, ..., Yk)``), ``one_hot`` inserts the ``depth`` axis at ``axis``.
"""

from dataclasses import dataclass

from ...error import TypeInferenceError
from ...ir.attrs import Attrs
from ...ir.expr import RelayExpr
from ...ir.type import Any, TensorType, is_any
from ...te import compute as te_compute
from ...tir.expr import Cast as _tir_cast
from ...tir.expr import Select as _tir_select
from ...tir.op import const as _tir_const
from ...topi.argwhere import count_nonzero
from ..expr import const
from . import attrs as A
from .dispatch import constant_value, dyn_ops, is_dynamic
from .op import OpPattern, make_call, register_relay_op, register_shape_func
from .type_relations import (
    ALL,
    INTEGER,
    broadcast_shapes,
    check_dtype,
    normalize_axis,
    same_dtype,
    shapes_match,
    tensor_arg,
)


def _broadcast_to_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    shape = tuple(attrs.shape)
    if len(data.shape) > len(shape) or broadcast_shapes(data.shape, shape) != shape:
        raise TypeInferenceError(f"broadcast_to: {data} cannot be broadcast to shape {shape}")
    return TensorType(shape, data.dtype)


register_relay_op("broadcast_to", 1, _broadcast_to_rel, OpPattern.BROADCAST, A.InitOpAttrs)


def broadcast_to(data, shape):
    """Broadcast ``data`` to ``shape`` (numpy rules: size-1 axes stretch, missing leading axes are added); ``shape``
    a non-constant Relay expression makes ``dyn.broadcast_to``."""
    if is_dynamic(shape):
        return dyn_ops().broadcast_to(data, shape)
    shape = constant_value(shape)
    return make_call("broadcast_to", [data], A.InitOpAttrs(tuple(int(d) for d in shape)))


def tile_shape(shape, reps) -> tuple:
    """The shape ``tile`` produces: both padded with leading 1s to one rank, then multiplied."""
    ndim = max(len(shape), len(reps))
    shape = (1,) * (ndim - len(shape)) + tuple(shape)
    reps = (1,) * (ndim - len(reps)) + tuple(reps)
    return tuple(d * r for d, r in zip(shape, reps, strict=True))


def _tile_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    return TensorType(tile_shape(data.shape, attrs.reps), data.dtype)


register_relay_op("tile", 1, _tile_rel, OpPattern.BROADCAST, A.TileAttrs)


def tile(data, reps):
    """Repeat the whole of ``data`` ``reps[i]`` times along axis ``i`` (numpy's ``tile``); ``reps`` a non-constant
    Relay expression makes ``dyn.tile``."""
    if is_dynamic(reps):
        return dyn_ops().tile(data, reps)
    reps = constant_value(reps)
    return make_call("tile", [data], A.TileAttrs(tuple(reps)))


def _repeat_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    axis = normalize_axis(attrs.axis, data.ndim, "repeat axis")
    shape = list(data.shape)
    shape[axis] *= attrs.repeats
    return TensorType(tuple(shape), data.dtype)


register_relay_op("repeat", 1, _repeat_rel, OpPattern.BROADCAST, A.RepeatAttrs)


def repeat(data, repeats, axis):
    """Repeat each element of ``data`` ``repeats`` times along ``axis`` (numpy's ``repeat``)."""
    return make_call("repeat", [data], A.RepeatAttrs(int(repeats), int(axis)))


def _reverse_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    normalize_axis(attrs.axis, data.ndim, "reverse axis")
    return data


register_relay_op("reverse", 1, _reverse_rel, OpPattern.INJECTIVE, A.ReverseAttrs)


def reverse(data, axis):
    """Reverse the order of the elements of ``data`` along ``axis``."""
    return make_call("reverse", [data], A.ReverseAttrs(int(axis)))


def _gather_rel(types, attrs):
    data, indices = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "indices")
    axis = normalize_axis(attrs.axis, data.ndim, "gather axis")
    if indices.ndim != data.ndim or any(i != d for k, (i, d) in enumerate(zip(indices.shape, data.shape, strict=True))
                                        if k != axis and not is_any(i) and not is_any(d) and i > d):
        raise TypeInferenceError(f"gather: indices {indices} must have the rank of data {data} and fit it off "
                                 f"axis {axis}")
    return TensorType(indices.shape, data.dtype)


register_relay_op("gather", 2, _gather_rel, OpPattern.INJECTIVE, A.GatherAttrs, dtypes=(ALL, INTEGER))


def gather(data, axis, indices):
    """``out[i][j][k] = data[i][indices[i][j][k]][k]`` for ``axis=1`` (numpy's ``take_along_axis``; TVM's order of
    arguments)."""
    return make_call("gather", [data, indices], A.GatherAttrs(int(axis)))


def _gather_nd_rel(types, attrs):
    data, indices = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "indices")
    if indices.ndim < 1:
        raise TypeInferenceError(f"gather_nd: indices {indices} must have rank >= 1")
    m, b = indices.shape[0], attrs.batch_dims
    if attrs.index_rank is not None and attrs.index_rank != m:
        raise TypeInferenceError(f"gather_nd: index_rank={attrs.index_rank} but indices {indices} index {m} axes")
    if m + b > data.ndim or not shapes_match(indices.shape[1 : 1 + b], data.shape[:b]):
        raise TypeInferenceError(f"gather_nd: indices {indices} do not fit data {data} with batch_dims={b}")
    return TensorType(indices.shape[1:] + data.shape[m + b :], data.dtype)


register_relay_op("gather_nd", 2, _gather_nd_rel, OpPattern.INJECTIVE, A.GatherNDAttrs, dtypes=(ALL, INTEGER))


def gather_nd(data, indices, batch_dims=0, index_rank=None):
    """Gather slices of ``data`` at the index tuples along the first axis of ``indices``: with ``indices`` of shape
    ``(M, Y0, ..., Yk)`` the result is ``(Y0, ..., Yk, X[M + batch_dims], ...)``."""
    return make_call("gather_nd", [data, indices], A.GatherNDAttrs(int(batch_dims), index_rank))


def _one_hot_rel(types, attrs):
    indices, on, off = (tensor_arg(types, i, name) for i, name in enumerate(["indices", "on_value", "off_value"]))
    if on.shape or off.shape:
        raise TypeInferenceError(f"one_hot: on_value {on} and off_value {off} must be scalars")
    same_dtype([on, off], "one_hot on_value and off_value")
    check_dtype(attrs.dtype, ALL, "the result", "one_hot")
    axis = attrs.axis if attrs.axis >= 0 else attrs.axis + indices.ndim + 1
    if not 0 <= axis <= indices.ndim:
        raise TypeInferenceError(f"one_hot: axis {attrs.axis} is out of range for indices {indices}")
    return TensorType(indices.shape[:axis] + (attrs.depth,) + indices.shape[axis:], attrs.dtype)


register_relay_op("one_hot", 3, _one_hot_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.OneHotAttrs, dtypes=(INTEGER, ALL))


def one_hot(indices, on_value, off_value, depth, axis, dtype):
    """``on_value`` where the new ``depth`` axis (inserted at ``axis``) equals the index, ``off_value`` elsewhere;
    ``depth`` a non-constant Relay expression makes ``dyn.one_hot``."""
    if not isinstance(on_value, RelayExpr):
        on_value = const(on_value, dtype)
    if not isinstance(off_value, RelayExpr):
        off_value = const(off_value, dtype)
    if is_dynamic(depth):
        return dyn_ops().one_hot(indices, on_value, off_value, depth, axis, dtype)
    depth = constant_value(depth)
    return make_call("one_hot", [indices, on_value, off_value], A.OneHotAttrs(int(depth), int(axis), dtype))


def _scan_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    dtype = attrs.dtype or data.dtype
    check_dtype(dtype, ALL, "the result", "the scan")
    if attrs.axis is None:
        size = 1
        for d in data.shape:
            size *= d
        return TensorType((size,), dtype)
    normalize_axis(attrs.axis, data.ndim, "scan axis")
    return TensorType(data.shape, dtype)


register_relay_op("cumsum", 1, _scan_rel, OpPattern.OPAQUE, A.ScanopAttrs)
register_relay_op("cumprod", 1, _scan_rel, OpPattern.OPAQUE, A.ScanopAttrs)


def cumsum(data, axis=None, dtype=None, exclusive=None):
    """Cumulative sum along ``axis`` (of the flattened data when None); ``exclusive`` leaves out the element
    itself (the first result is 0)."""
    return make_call("cumsum", [data], A.ScanopAttrs(None if axis is None else int(axis), dtype or "",
                                                    bool(exclusive)))


def cumprod(data, axis=None, dtype=None, exclusive=None):
    """Cumulative product along ``axis`` (of the flattened data when None); ``exclusive`` starts from 1."""
    return make_call("cumprod", [data], A.ScanopAttrs(None if axis is None else int(axis), dtype or "",
                                                     bool(exclusive)))


def _scatter_elements_rel(types, attrs):
    data, indices, updates = (tensor_arg(types, i, n) for i, n in enumerate(["data", "indices", "updates"]))
    normalize_axis(attrs.axis, data.ndim, "scatter_elements axis")
    if indices.shape != updates.shape or indices.ndim != data.ndim:
        raise TypeInferenceError(f"scatter_elements: indices {indices} and updates {updates} must have one shape "
                                 f"and the rank of data {data}")
    same_dtype([data, updates], "scatter_elements data and updates")
    return data


register_relay_op("scatter_elements", 3, _scatter_elements_rel, OpPattern.OPAQUE, A.ScatterElementsAttrs,
                  dtypes=(ALL, INTEGER, ALL))


def scatter_elements(data, indices, updates, axis=0, reduction="update"):
    """A copy of ``data`` where ``out[..., indices[i, j, k], ...] = updates[i, j, k]`` along ``axis`` (or combined
    with the existing value by ``reduction``: add, mul, min, max, mean)."""
    return make_call("scatter_elements", [data, indices, updates], A.ScatterElementsAttrs(int(axis), reduction))


def _scatter_nd_rel(types, attrs):
    data, indices, updates = (tensor_arg(types, i, n) for i, n in enumerate(["data", "indices", "updates"]))
    m = indices.shape[0] if indices.ndim else 0
    if indices.ndim < 1 or m > data.ndim or not shapes_match(updates.shape, indices.shape[1:] + data.shape[m:]):
        raise TypeInferenceError(f"scatter_nd: updates {updates} must have shape indices.shape[1:] + "
                                 f"data.shape[M:] for indices {indices} and data {data}")
    same_dtype([data, updates], "scatter_nd data and updates")
    return data


register_relay_op("scatter_nd", 3, _scatter_nd_rel, OpPattern.OPAQUE, A.ScatterNDAttrs, dtypes=(ALL, INTEGER, ALL))


def scatter_nd(data, indices, updates, mode="update"):
    """A copy of ``data`` with the slices at the index tuples along the first axis of ``indices`` (TVM's
    convention, as in :func:`gather_nd`) replaced by ``updates`` (or combined by ``mode``: add, mul, min, max)."""
    return make_call("scatter_nd", [data, indices, updates], A.ScatterNDAttrs(mode))


@dataclass(frozen=True, slots=True)
class ArgWhereAttrs(Attrs):
    """``dtype``: the indices' (int32 as in TVM, or int64 as ONNX's ``NonZero`` gives them)."""

    dtype: str = "int32"


def _argwhere_rel(types, attrs):
    condition = tensor_arg(types, 0, "condition")
    if condition.ndim < 1:
        raise TypeInferenceError(f"condition must have at least one dimension, got {condition}")
    check_dtype(attrs.dtype, ("int32", "int64"), "the result", "argwhere")
    return TensorType((Any(), condition.ndim), attrs.dtype)


register_relay_op("argwhere", 1, _argwhere_rel, OpPattern.OPAQUE, ArgWhereAttrs)


@register_shape_func("argwhere", True)
def _argwhere_shape_func(attrs, inputs, out_types):
    """``(number of non-zero elements, ndim)``: the count is a reduction over the condition."""
    count = count_nonzero(inputs[0])
    ndim = _tir_const(len(inputs[0].shape), "int64")
    shape = te_compute((2,), lambda j: _tir_select(j == 0, _tir_cast("int64", count()), ndim), name="argwhere_shape")
    return [shape], []


def argwhere(condition, dtype="int32"):
    """The indices of the non-zero elements of ``condition``: a ``(count, ndim)`` tensor whose rows are in row-major
    order, ``count`` known only at run time."""
    return make_call("argwhere", [condition], ArgWhereAttrs(dtype))
