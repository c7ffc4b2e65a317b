"""Convolution and pooling in numpy: ``nn.conv2d``, ``nn.max_pool2d``, ``nn.avg_pool2d``, ``nn.global_avg_pool2d``,
``nn.global_max_pool2d``.

conv2d converts data to NCHW and the kernel to OIHW (any layouts with those primal axes), computes there and
converts the result to ``out_layout``. The computation is im2col: a strided view of the padded input gives, for
every output pixel, its ``C/groups x KH x KW`` receptive field; reshaped to ``(N, groups, C/groups*KH*KW, OH*OW)``
it is multiplied by the kernel reshaped to ``(groups, O/groups, C/groups*KH*KW)`` in one batched matmul (BLAS for
floats). Integer inputs are widened to ``out_dtype`` first, as TVM does; float16 computes in float32.

Pooling works on the H and W axes of any layout in place (other axes are independent). The input is padded with
TVM's ``min_value`` (max) or zero (avg), plus extra cells at the end when ``ceil_mode`` makes the last window run
past the padding; the result is the max/sum over the ``KH x KW`` strided slices. The average divides by the number
of cells the window covers inside the data (or inside data plus padding when ``count_include_pad``); cells added
for ``ceil_mode`` never count, matching TVM's ``poolnd_python`` reference.
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...tir.layout import layout as parse_layout
from ...topi.nn.conv2d import conv_out_size
from ...topi.nn.pooling import ceil_mode_extra, pool_out_size
from .common import accumulator, as_dtype, is_float, is_int, lowest, np_dtype, register, trunc_divide
from .transform import convert_layout


def _compute_dtype(out_dtype):
    return np.dtype("float32") if out_dtype == np.float16 else out_dtype


def conv2d_nchw(data, weight, strides, padding, dilation, groups, out_dtype):
    """2-D convolution of NCHW ``data`` with an OIHW ``weight``; ``padding`` is ``(top, left, bottom, right)``."""
    work = _compute_dtype(out_dtype)
    data, weight = data.astype(work, copy=False), weight.astype(work, copy=False)
    n, _, h, w = data.shape
    o, cg, kh, kw = weight.shape
    top, left, bottom, right = padding
    (sh, sw), (dh, dw) = strides, dilation
    oh = conv_out_size(h, kh, sh, dh, top, bottom)
    ow = conv_out_size(w, kw, sw, dw, left, right)
    if any(padding):
        data = np.pad(data, ((0, 0), (0, 0), (top, bottom), (left, right)))
    data = np.ascontiguousarray(data)
    s_n, s_c, s_h, s_w = data.strides
    cols = as_strided(
        data,
        shape=(n, groups, cg, kh, kw, oh, ow),
        strides=(s_n, cg * s_c, s_c, s_h * dh, s_w * dw, s_h * sh, s_w * sw),
        writeable=False,
    ).reshape(n, groups, cg * kh * kw, oh * ow)
    kernel = weight.reshape(groups, o // groups, cg * kh * kw)
    out = np.matmul(kernel, cols)  # (n, groups, o // groups, oh * ow)
    return as_dtype(out.reshape(n, o, oh, ow), out_dtype)


@register("nn.conv2d", "nn.contrib_conv2d_NCHWc", "nn.contrib_depthwise_conv2d_NCHWc")
def conv2d(attrs, data, weight):
    """2-D convolution in any data/kernel layout (see the module docstring)."""
    out_dtype = np_dtype(attrs.out_dtype or data.dtype)
    x = convert_layout(data, attrs.data_layout, "NCHW")
    k = convert_layout(weight, attrs.kernel_layout, "OIHW")
    out = conv2d_nchw(x, k, attrs.strides, attrs.padding, attrs.dilation, attrs.groups, out_dtype)
    return convert_layout(out, "NCHW", attrs.out_layout or attrs.data_layout)


def _hw_last(data, layout_name):
    lay = parse_layout(layout_name)
    h, w = lay.index_of("H"), lay.index_of("W")
    return np.moveaxis(data, (h, w), (-2, -1)), (h, w)


def _window_slices(out_size, kernel, stride, dilation):
    """For each kernel offset, the slice of the padded axis that feeds every output position."""
    return [slice(k * dilation, k * dilation + (out_size - 1) * stride + 1, stride) for k in range(kernel)]


def _pool2d(attrs, data, kind):
    x, (h_axis, w_axis) = _hw_last(data, attrs.layout)
    h, w = x.shape[-2:]
    (kh, kw), (sh, sw), (dh, dw) = attrs.pool_size, attrs.strides, attrs.dilation
    top, left, bottom, right = attrs.padding
    oh = pool_out_size(h, kh, sh, dh, top, bottom, attrs.ceil_mode)
    ow = pool_out_size(w, kw, sw, dw, left, right, attrs.ceil_mode)
    extra_h = ceil_mode_extra(h, oh, kh, sh, dh, top, bottom)
    extra_w = ceil_mode_extra(w, ow, kw, sw, dw, left, right)
    pad = [(0, 0)] * (x.ndim - 2) + [(top, bottom + extra_h), (left, right + extra_w)]
    rows_h, rows_w = _window_slices(oh, kh, sh, dh), _window_slices(ow, kw, sw, dw)
    if kind == "max":
        xp = np.pad(x, pad, constant_values=lowest(x.dtype))
        out = None
        for rh in rows_h:
            for rw in rows_w:
                piece = xp[..., rh, rw]
                out = piece if out is None else np.maximum(out, piece)
    else:
        acc = "float32" if x.dtype == np.float16 else ("int64" if is_int(x.dtype) else x.dtype)
        xp = np.pad(x.astype(acc, copy=False), pad)
        # 1 where a cell counts in the divisor
        inside = np.zeros((h + top + bottom + extra_h, w + left + right + extra_w), "int64")
        if attrs.count_include_pad:
            inside[: h + top + bottom, : w + left + right] = 1
        else:
            inside[top : top + h, left : left + w] = 1
        total, count = 0, 0
        for rh in rows_h:
            for rw in rows_w:
                total = total + xp[..., rh, rw]
                count = count + inside[rh, rw]
        count = np.maximum(count, 1)
        out = trunc_divide(total, count) if is_int(x.dtype) else total / count.astype(total.dtype)
        out = as_dtype(out, x.dtype)
    out = np.moveaxis(out, (-2, -1), (h_axis, w_axis))
    return convert_layout(out, attrs.layout, attrs.out_layout or attrs.layout)


@register("nn.max_pool2d")
def max_pool2d(attrs, data):
    """2-D max pooling (padding with TVM's ``min_value``, so an all-padding window gives the lowest finite value)."""
    return _pool2d(attrs, data, "max")


@register("nn.avg_pool2d")
def avg_pool2d(attrs, data):
    """2-D average pooling (see the module docstring for the divisor)."""
    return _pool2d(attrs, data, "avg")


@register("nn.global_avg_pool2d")
def global_avg_pool2d(attrs, data):
    """Mean over the whole H x W plane, keeping H and W as size 1."""
    x, (h, w) = _hw_last(data, attrs.layout)
    if is_float(x.dtype):
        out = as_dtype(np.mean(x, axis=(-2, -1), keepdims=True, dtype=accumulator(x.dtype)), x.dtype)
    else:
        total = np.sum(x, axis=(-2, -1), keepdims=True, dtype="int64")
        out = as_dtype(trunc_divide(total, np.int64(max(x.shape[-1] * x.shape[-2], 1))), x.dtype)
    return convert_layout(np.moveaxis(out, (-2, -1), (h, w)), attrs.layout, attrs.out_layout or attrs.layout)


@register("nn.global_max_pool2d")
def global_max_pool2d(attrs, data):
    """Maximum over the whole H x W plane, keeping H and W as size 1."""
    x, (h, w) = _hw_last(data, attrs.layout)
    out = np.max(x, axis=(-2, -1), keepdims=True, initial=lowest(x.dtype))
    return convert_layout(np.moveaxis(out, (-2, -1), (h, w)), attrs.layout, attrs.out_layout or attrs.layout)
