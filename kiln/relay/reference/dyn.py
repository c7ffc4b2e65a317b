"""The ``dyn.*`` operators in numpy: the static operator's reference with the shape-deciding attribute read from
the tensor argument. A value the operator cannot take raises a :class:`~kiln.error.KilnError` naming the operator,
as the compiled shape function does."""

import dataclasses

import numpy as np

from ...error import KilnError
from ..op import attrs as A
from ..op.dyn.image import static_attrs
from ..op.tensor import reshape_shape
from . import algorithm as AL
from . import elemwise as EL
from . import image as IM
from . import nn as NN
from . import nn_extra as NE
from . import transform as TR
from .common import register


def _ints(values) -> list:
    return [int(v) for v in np.asarray(values).reshape(-1)]


def _static(op_name, fn, *args):
    """``fn(*args)``, a static reference, with what it refuses reported as an error of ``op_name``."""
    try:
        return fn(*args)
    except (KilnError, ValueError, IndexError) as exc:
        raise KilnError(f"{op_name}: {exc}") from exc


def _nonnegative(op_name, what, values):
    if any(v < 0 for v in values):
        raise KilnError(f"{op_name}: {what} {values} has a negative entry")
    return values


@register("dyn.reshape")
def dyn_reshape(attrs, data, newshape):
    """Reshape to the values of ``newshape`` (TVM's 0 and -1 resolved as ``reshape`` resolves them)."""
    if any(v < -1 for v in newshape):
        raise KilnError(f"dyn.reshape: newshape {list(newshape)} has a negative entry other than -1")
    return data.reshape(reshape_shape(data.shape, [int(v) for v in newshape], attrs.allowzero))


@register("dyn.broadcast_to")
def dyn_broadcast_to(attrs, data, shape):
    """``data`` broadcast to the values of ``shape``."""
    shape = _nonnegative("dyn.broadcast_to", "shape", _ints(shape))
    return _static("dyn.broadcast_to", np.broadcast_to, data, tuple(shape))


@register("dyn.tile")
def dyn_tile(attrs, data, reps):
    """numpy's ``tile`` with the values of ``reps``."""
    return np.tile(data, _nonnegative("dyn.tile", "reps", _ints(reps)))


@register("dyn.expand_dims")
def dyn_expand_dims(attrs, data, axis):
    """``num_newaxis`` size-1 axes inserted at the value of ``axis``."""
    (axis,) = _ints(axis)
    if not -data.ndim - 1 <= axis <= data.ndim:
        raise KilnError(f"dyn.expand_dims: axis {axis} is out of range for data of rank {data.ndim}")
    return TR.expand_dims(A.ExpandDimsAttrs(axis, attrs.num_newaxis), data)


@register("dyn.squeeze")
def dyn_squeeze(attrs, data, axis):
    """The size-1 axes listed in ``axis`` removed."""
    axes = _ints(axis)
    if len({a % data.ndim if -data.ndim <= a < data.ndim else a for a in axes}) != len(axes):
        raise KilnError(f"dyn.squeeze: axis {axes} names a dimension twice")
    return _static("dyn.squeeze", TR.squeeze, A.SqueezeAttrs(tuple(axes)), data)


@register("dyn.strided_slice")
def dyn_strided_slice(attrs, data, begin, end, strides):
    """``data[begin:end:strides]`` with the values of the three tensors."""
    strides = _ints(strides)
    if 0 in strides:
        raise KilnError(f"dyn.strided_slice: strides {strides} has a 0")
    static = A.StridedSliceAttrs(tuple(_ints(begin)), tuple(_ints(end)), tuple(strides) or None, attrs.axes,
                                 attrs.slice_mode)
    return TR.strided_slice(static, data)


@register("dyn.one_hot")
def dyn_one_hot(attrs, indices, on_value, off_value, depth):
    """``one_hot`` with the new axis as long as the value of ``depth``."""
    (depth,) = _nonnegative("dyn.one_hot", "depth", _ints(depth))
    return TR.one_hot(A.OneHotAttrs(depth, attrs.axis, attrs.dtype), indices, on_value, off_value)


@register("dyn.zeros")
def dyn_zeros(attrs, shape):
    """Zeros of the shape held by ``shape``."""
    return EL.zeros(A.InitOpAttrs(tuple(_nonnegative("dyn.zeros", "shape", _ints(shape))), attrs.dtype))


@register("dyn.ones")
def dyn_ones(attrs, shape):
    """Ones of the shape held by ``shape``."""
    return EL.ones(A.InitOpAttrs(tuple(_nonnegative("dyn.ones", "shape", _ints(shape))), attrs.dtype))


@register("dyn.full")
def dyn_full(attrs, fill_value, shape):
    """``fill_value`` in the shape held by ``shape``."""
    shape = tuple(_nonnegative("dyn.full", "shape", _ints(shape)))
    return EL.full(A.InitOpAttrs(shape, attrs.dtype), fill_value)


@register("dyn.topk")
def dyn_topk(attrs, data, k):
    """``topk`` with ``k`` the value of the tensor."""
    (k,) = _ints(k)
    return AL.topk(A.TopKAttrs(k, attrs.axis, attrs.ret_type, attrs.is_ascend, attrs.dtype), data)


@register("dyn.nn.pad")
def dyn_pad(attrs, data, pad_width, pad_value):
    """``nn.pad`` with the widths held by ``pad_width``."""
    widths = np.asarray(pad_width).astype("int64").tolist()
    _nonnegative("dyn.nn.pad", "pad_width", [v for pair in widths for v in pair])
    if attrs.pad_mode == "wrap":
        return np.pad(data, widths, mode="wrap") if data.size else np.zeros(
            [b + d + a for d, (b, a) in zip(data.shape, widths, strict=True)], data.dtype)
    return NN.pad(A.PadAttrs(tuple(tuple(p) for p in widths), attrs.pad_mode), data, pad_value)


@register("dyn.image.resize2d")
def dyn_resize2d(attrs, data, size, roi):
    """``image.resize2d`` to the height and width held by ``size``."""
    size = _nonnegative("dyn.image.resize2d", "size", _ints(size))
    return IM.resize_nd(A.Resize2DAttrs(**static_attrs(attrs, size, np.asarray(roi).reshape(-1))), data)


def _positive_scales(op_name, scales):
    values = [float(np.asarray(v).reshape(-1)[0]) for v in scales]
    if not all(v > 0 for v in values):
        raise KilnError(f"{op_name}: the scales {values} must be positive")
    return values


@register("dyn.nn.upsampling")
def dyn_upsampling(attrs, data, scale_h, scale_w):
    """``nn.upsampling`` by the scales held by ``scale_h`` and ``scale_w``."""
    scale_h, scale_w = _positive_scales("dyn.nn.upsampling", (scale_h, scale_w))
    return NE.upsampling(dataclasses.replace(attrs, scale_h=scale_h, scale_w=scale_w), data)


@register("dyn.nn.upsampling3d")
def dyn_upsampling3d(attrs, data, scale_d, scale_h, scale_w):
    """``nn.upsampling3d`` by the scales held by the three tensors."""
    scale_d, scale_h, scale_w = _positive_scales("dyn.nn.upsampling3d", (scale_d, scale_h, scale_w))
    return NE.upsampling3d(dataclasses.replace(attrs, scale_d=scale_d, scale_h=scale_h, scale_w=scale_w), data)


@register("dyn.sparse_to_dense")
def dyn_sparse_to_dense(attrs, sparse_indices, sparse_values, default_value, output_shape):
    """``sparse_to_dense`` with the values of ``output_shape``."""
    from types import SimpleNamespace

    from .array import sparse_to_dense

    shape = tuple(_nonnegative("dyn.sparse_to_dense", "output_shape", _ints(output_shape)))
    return sparse_to_dense(SimpleNamespace(output_shape=shape), sparse_indices, sparse_values,
                           np.asarray(default_value).reshape(()))


@register("dyn.arange")
def dyn_arange(attrs, start, stop, step):
    """numpy's ``arange`` of the three values, in the result dtype."""
    first, last, delta = (np.asarray(v).reshape(-1)[0] for v in (start, stop, step))
    if delta == 0:
        raise KilnError("dyn.arange: step is 0")
    count = max(0, int(np.ceil((float(last) - float(first)) / float(delta))))
    dtype = np.dtype(attrs.dtype)
    return (np.asarray(first).astype(dtype) + np.asarray(delta).astype(dtype) * np.arange(count).astype(dtype))
