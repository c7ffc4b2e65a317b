"""Operators whose result takes its shape or dtype from another tensor (TVM's ``*_like`` family): ``zeros_like
ones_like full_like cast_like reshape_like broadcast_to_like collapse_sum_like collapse_sum_to slice_like``.

``collapse_sum_like``/``collapse_sum_to`` are the adjoint of broadcasting: they sum ``data`` over the axes that
broadcasting a tensor of the target shape to ``data``'s shape would have stretched (the leading axes it lacks and
its size-1 axes), which is how gradients flow back through a broadcast.
"""

import numpy as np

from ...error import TypeInferenceError
from ...ir.expr import RelayExpr
from ...ir.type import TensorType, is_any
from ..expr import const
from . import attrs_array as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import ALL, INTEGER, NUMERIC, broadcast_shapes, normalize_axis, tensor_arg


def _like_rel(types, attrs):
    return tensor_arg(types, 0, "data")


register_relay_op("zeros_like", 1, _like_rel, OpPattern.ELEMWISE)
register_relay_op("ones_like", 1, _like_rel, OpPattern.ELEMWISE)


def zeros_like(data):
    """A tensor of zeros of ``data``'s shape and dtype."""
    return make_call("zeros_like", [data])


def ones_like(data):
    """A tensor of ones of ``data``'s shape and dtype."""
    return make_call("ones_like", [data])


def _full_like_rel(types, attrs):
    data, fill = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "fill_value")
    if fill.shape:
        raise TypeInferenceError(f"full_like: fill_value must be a scalar, got {fill}")
    return data


register_relay_op("full_like", 2, _full_like_rel, OpPattern.ELEMWISE)


def full_like(data, fill_value):
    """A tensor of ``data``'s shape and dtype filled with the scalar ``fill_value`` (an expression or a number)."""
    if not isinstance(fill_value, RelayExpr):
        fill_value = const(fill_value)
    return make_call("full_like", [data, fill_value])


def _cast_like_rel(types, attrs):
    data, like = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "dtype_like")
    return TensorType(data.shape, like.dtype)


register_relay_op("cast_like", 2, _cast_like_rel, OpPattern.ELEMWISE)


def cast_like(data, dtype_like):
    """``data`` converted to the dtype of ``dtype_like``."""
    return make_call("cast_like", [data, dtype_like])


def _span(begin, end, ndim, what):
    """``[begin, end)`` of a rank-``ndim`` shape, negative values counting from the end (None: to the end)."""
    b = begin + ndim if begin < 0 else begin
    e = ndim if end is None else (end + ndim if end < 0 else end)
    if not 0 <= b <= e <= ndim:
        raise TypeInferenceError(f"reshape_like: {what} [{begin}, {end}) is out of range for rank {ndim}")
    return b, e


def reshape_like_shape(data_shape, like_shape, attrs) -> tuple:
    """The shape ``reshape_like`` gives: ``data_shape[lhs_begin:lhs_end]`` replaced by
    ``like_shape[rhs_begin:rhs_end]``."""
    lb, le = _span(attrs.lhs_begin, attrs.lhs_end, len(data_shape), "lhs")
    rb, re = _span(attrs.rhs_begin, attrs.rhs_end, len(like_shape), "rhs")
    return tuple(data_shape[:lb]) + tuple(like_shape[rb:re]) + tuple(data_shape[le:])


def _reshape_like_rel(types, attrs):
    data, like = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "shape_like")
    shape = reshape_like_shape(data.shape, like.shape, attrs)
    if any(is_any(d) for d in (*data.shape, *shape)):  # the sizes agree or the kernel reports it at run time
        return TensorType(shape, data.dtype)
    total, want = 1, 1
    for d in data.shape:
        total *= d
    for d in shape:
        want *= d
    if total != want:
        raise TypeInferenceError(f"reshape_like: cannot reshape {data} ({total} elements) to {shape} taken from "
                                 f"{like}")
    return TensorType(shape, data.dtype)


register_relay_op("reshape_like", 2, _reshape_like_rel, OpPattern.INJECTIVE, A.ReshapeLikeAttrs)


def reshape_like(data, shape_like, lhs_begin=0, lhs_end=None, rhs_begin=0, rhs_end=None):
    """``data`` reshaped so that its axes ``[lhs_begin, lhs_end)`` become the axes ``[rhs_begin, rhs_end)`` of
    ``shape_like`` (all of both by default)."""
    return make_call("reshape_like", [data, shape_like], A.ReshapeLikeAttrs(lhs_begin, lhs_end, rhs_begin, rhs_end))


def _broadcast_to_like_rel(types, attrs):
    data, like = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "broadcast_type")
    if len(data.shape) > len(like.shape) or broadcast_shapes(data.shape, like.shape) != tuple(like.shape):
        raise TypeInferenceError(f"broadcast_to_like: {data} cannot be broadcast to the shape of {like}")
    return TensorType(like.shape, data.dtype)


register_relay_op("broadcast_to_like", 2, _broadcast_to_like_rel, OpPattern.BROADCAST)


def broadcast_to_like(data, broadcast_type):
    """``data`` broadcast to the shape of ``broadcast_type`` (numpy rules)."""
    return make_call("broadcast_to_like", [data, broadcast_type])


def collapse_axes(data_shape, target_shape) -> tuple:
    """The axes of ``data_shape`` that ``collapse_sum_to(target_shape)`` sums over, or TypeInferenceError when
    ``target_shape`` does not broadcast to ``data_shape``."""
    data_shape, target_shape = tuple(data_shape), tuple(target_shape)
    lead = len(data_shape) - len(target_shape)
    if lead < 0 or any(t not in (1, d) for t, d in zip(target_shape, data_shape[lead:], strict=True)):
        raise TypeInferenceError(f"collapse_sum: shape {target_shape} does not broadcast to {data_shape}")
    return tuple(range(lead)) + tuple(lead + i for i, t in enumerate(target_shape) if t == 1 and
                                      data_shape[lead + i] != 1)


def _collapse_sum_like_rel(types, attrs):
    data, like = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "collapse_type")
    collapse_axes(data.shape, like.shape)
    return TensorType(like.shape, data.dtype)


def _collapse_sum_to_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    collapse_axes(data.shape, attrs.shape)
    return TensorType(attrs.shape, data.dtype)


register_relay_op("collapse_sum_like", 2, _collapse_sum_like_rel, OpPattern.COMM_REDUCE, dtypes=(NUMERIC, ALL))
register_relay_op("collapse_sum_to", 2, _collapse_sum_to_rel, OpPattern.COMM_REDUCE, A.CollapseSumToAttrs,
                  dtypes=(NUMERIC, INTEGER))


def collapse_sum_like(data, collapse_type):
    """``data`` summed down to the shape of ``collapse_type`` (the adjoint of broadcasting to ``data``)."""
    return make_call("collapse_sum_like", [data, collapse_type])


def collapse_sum_to(data, shape):
    """``data`` summed down to ``shape`` (a list of ints or a constant; the adjoint of broadcasting)."""
    if isinstance(shape, RelayExpr):
        values = getattr(shape, "data", None)
        if values is None:
            raise TypeInferenceError("collapse_sum_to: the shape must be a constant (dynamic shapes are not "
                                     "supported)")
        target = tuple(int(d) for d in values.numpy().reshape(-1))
    else:
        target = tuple(int(d) for d in shape)
        shape = const(np.array(target, "int32"))
    return make_call("collapse_sum_to", [data, shape], A.CollapseSumToAttrs(target))


def slice_like_ends(data_shape, like_shape, axes) -> tuple:
    """The end of each axis of ``data_shape`` that ``slice_like`` keeps (the slices start at 0)."""
    ends = list(data_shape)
    if axes is None:
        if len(like_shape) > len(data_shape):
            raise TypeInferenceError(f"slice_like: shape_like {tuple(like_shape)} has more axes than data "
                                     f"{tuple(data_shape)}")
        axes = range(len(like_shape))
    for a in axes:
        i = normalize_axis(a, len(data_shape), "slice_like axis")
        if not -len(like_shape) <= a < len(like_shape):
            raise TypeInferenceError(f"slice_like: axis {a} is out of range for shape_like {tuple(like_shape)}")
        if not is_any(like_shape[a]) and not is_any(data_shape[i]) and like_shape[a] > data_shape[i]:
            raise TypeInferenceError(f"slice_like: shape_like {tuple(like_shape)} is larger than data "
                                     f"{tuple(data_shape)} on axis {a}")
        ends[i] = like_shape[a]
    return tuple(ends)


def _slice_like_rel(types, attrs):
    data, like = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "shape_like")
    return TensorType(slice_like_ends(data.shape, like.shape, attrs.axes), data.dtype)


register_relay_op("slice_like", 2, _slice_like_rel, OpPattern.INJECTIVE, A.SliceLikeAttrs)


def slice_like(data, shape_like, axes=None):
    """The leading slice of ``data`` of the size of ``shape_like`` on ``axes`` (all of ``shape_like``'s axes by
    default)."""
    return make_call("slice_like", [data, shape_like], A.SliceLikeAttrs(None if axes is None else tuple(axes)))

