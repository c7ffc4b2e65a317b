"""Gradients of convolution and pooling (TVM's ``topi.nn.conv2d_backward_weight`` and ``topi.nn.pool_grad``), on
NCHW tensors.

``pool_grad`` gives each input pixel the output gradients of the windows that cover it: ``ceil(kernel / stride)``
candidate windows per axis, of which those in range whose window holds the pixel count -- for ``max`` only the window
whose maximum (the first in window order, padding below every value) is this pixel; for ``avg`` each window's
gradient divided by its cell count (the whole window with ``count_include_pad``).
"""

import math

from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import op as _op
from .. import tag as _tag
from ..reduction import argmax
from ..utils import get_const_tuple
from .conv2d import _acc_dtype, _finish
from .pad import pad
from .pooling import ceil_mode_extra

__all__ = ["conv2d_backward_weight_nchw", "pool_grad_nchw"]


def conv2d_backward_weight_nchw(grad, data, kernel_size, strides, padding, dilation, groups, out_dtype=None):
    """The gradient of ``conv2d(data, weight)`` with respect to the OIHW ``weight``, given the output gradient
    ``grad``: ``sum over n, y, x of grad[n, o, y, x] * data_pad[n, c, y * s + ky * d, x * s + kx * d]``."""
    out_dtype = out_dtype or data.dtype
    n, c, _, _ = get_const_tuple(data.shape)
    _, o, gh, gw = get_const_tuple(grad.shape)
    kh, kw = kernel_size
    top, left, bottom, right = padding
    padded = pad(data, (0, 0, top, left), (0, 0, bottom, right), name="data_pad") if any(padding) else data
    cg, og = c // groups, o // groups
    acc = _acc_dtype(out_dtype)

    def fcompute(f, ch, ky, kx):
        rn, ry, rx = reduce_axis((0, n), name="rn"), reduce_axis((0, gh), name="ry"), reduce_axis((0, gw), name="rx")
        channel = (f // og) * cg + ch
        value = _op.cast(grad(rn.var, f, ry.var, rx.var), acc) * _op.cast(
            padded(rn.var, channel, ry.var * strides[0] + ky * dilation[0], rx.var * strides[1] + kx * dilation[1]),
            acc)
        return _te_sum(value, axis=[rn, ry, rx])

    out = compute((o, cg, kh, kw), fcompute, name="T_conv2d_backward_weight", tag="conv2d_backward_weight")
    return _finish(out, out_dtype, "T_conv2d_backward_weight")


def pool_grad_nchw(out_grad, data, pool_size, strides, padding, pool_type, ceil_mode=False, count_include_pad=True):
    """The gradient of ``max``/``avg`` 2-D pooling of ``data`` with respect to ``data`` (see the module
    docstring)."""
    n, c, h, w = get_const_tuple(data.shape)
    _, _, oh, ow = get_const_tuple(out_grad.shape)
    (kh, kw), (sh, sw) = pool_size, strides
    top, left, bottom, right = padding
    wh, ww = math.ceil(kh / sh), math.ceil(kw / sw)
    dtype = out_grad.dtype
    if pool_type == "max":
        extra_h = ceil_mode_extra(h, oh, kh, sh, 1, top, bottom)
        extra_w = ceil_mode_extra(w, ow, kw, sw, 1, left, right)
        padded = pad(data, (0, 0, top, left), (0, 0, bottom + extra_h, right + extra_w),
                     pad_value=_op.min_value(data.dtype), name="pad_temp")
        windows = compute((n, c, oh, ow, kh * kw), lambda b, ch, y, x, t: padded(b, ch, y * sh + t // kw,
                                                                                  x * sw + t % kw),
                          name="T_pool_windows", tag=_tag.INJECTIVE)
        which = argmax(windows, axis=(4,))

        def picked(b, ch, oy, ox, y, x):
            t = which(b, ch, oy, ox)
            return _op.logical_and(_op.equal(oy * sh + t // kw, y + top), _op.equal(ox * sw + t % kw, x + left))

    def fcompute(b, ch, y, x):
        ry, rx = reduce_axis((0, wh), name="rh"), reduce_axis((0, ww), name="rw")
        oy = (y + top) // sh - ry.var
        ox = (x + left) // sw - rx.var
        in_range = [_op.greater_equal(oy, 0), _op.less(oy, oh), _op.greater_equal(ox, 0), _op.less(ox, ow),
                    _op.less(y + top, oy * sh + kh), _op.less(x + left, ox * sw + kw)]
        cy = _op.minimum(_op.maximum(oy, 0), oh - 1)
        cx = _op.minimum(_op.maximum(ox, 0), ow - 1)
        g = out_grad(b, ch, cy, cx)
        if pool_type == "max":
            value = _op.select(_op.all(*in_range, picked(b, ch, cy, cx, y, x)), g, _op.const(0, dtype))
        else:
            if count_include_pad:
                count = _op.const(kh * kw, dtype)
            else:
                ys = _op.maximum(cy * sh - top, 0)
                ye = _op.minimum(cy * sh - top + kh, h)
                xs = _op.maximum(cx * sw - left, 0)
                xe = _op.minimum(cx * sw - left + kw, w)
                count = _op.cast(_op.maximum((ye - ys) * (xe - xs), 1), dtype)
            value = _op.select(_op.all(*in_range), g / count, _op.const(0, dtype))
        return _te_sum(value, axis=[ry, rx])

    return compute(data.shape, fcompute, name=f"T_{pool_type}_pool2d_grad", tag="pool_grad")
