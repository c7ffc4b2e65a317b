"""``crop_and_resize`` and ``dilation2d`` (TVM's ``topi.image.crop_and_resize``, ``topi.image.dilation2d``), and
FlowNet's ``correlation_nchw`` (``topi.nn``).

``crop_and_resize`` maps output row ``i`` of a box ``[y1, x1, y2, x2]`` (normalized) to the image row
``y1 * (H - 1) + i * (y2 - y1) * (H - 1) / (crop_h - 1)`` (the box centre for a single row; columns alike), gives
``extrapolation_value`` outside ``[0, H - 1]`` and samples bilinearly (or the nearest row, ties away from zero).
"""

from ...te.operation import compute, reduce_axis
from ...te.operation import max as _te_max
from ...te.operation import sum as _te_sum
from ...tir import intrin as _intrin
from ...tir import op as _op
from .. import tag as _tag
from ..elemwise import cast_expr, round_half_away
from ..nn.conv2d import conv_out_size
from ..nn.pad import pad
from ..utils import get_const_tuple

__all__ = ["crop_and_resize", "dilation2d", "correlation_nchw"]


def crop_and_resize(data, boxes, box_indices, crop_size, layout="NCHW", method="bilinear", extrapolation_value=0.0,
                    out_dtype=None):
    """Crop ``boxes`` out of the images ``box_indices`` of ``data`` and resize them to ``crop_size``."""
    out_dtype = out_dtype or data.dtype
    shape = get_const_tuple(data.shape)
    c_axis, h_axis, w_axis = (layout.index(a) for a in "CHW")
    height, width = shape[h_axis], shape[w_axis]
    crop_h, crop_w = crop_size
    num = get_const_tuple(boxes.shape)[0]
    work = "float32" if boxes.dtype == "float16" else boxes.dtype

    def coord(b, k0, k1, i, size, out):
        lo, hi = _op.cast(boxes(b, k0), work), _op.cast(boxes(b, k1), work)
        span = _op.const(float(size - 1), work)
        if out > 1:
            return lo * span + _op.cast(i, work) * (hi - lo) * span / _op.const(float(out - 1), work)
        return _op.const(0.5, work) * (lo + hi) * span

    def read(n, ch, y, x):
        idx = [0] * 4
        idx[0], idx[c_axis], idx[h_axis], idx[w_axis] = n, ch, y, x
        return _op.cast(data(*idx), work)

    def fcompute(*o):
        b, ch, i, j = o[0], o[c_axis], o[h_axis], o[w_axis]
        n = _op.cast(box_indices(b), "int32")
        y, x = coord(b, 0, 2, i, height, crop_h), coord(b, 1, 3, j, width, crop_w)
        outside = _op.any(_op.less(y, _op.const(0.0, work)), _op.greater(y, _op.const(float(height - 1), work)),
                          _op.less(x, _op.const(0.0, work)), _op.greater(x, _op.const(float(width - 1), work)))
        yc = _op.minimum(_op.maximum(y, _op.const(0.0, work)), _op.const(float(height - 1), work))
        xc = _op.minimum(_op.maximum(x, _op.const(0.0, work)), _op.const(float(width - 1), work))
        if method == "nearest_neighbor":  # TVM rounds box coordinates half away from zero (``te.round``)
            value = read(n, ch, _op.cast(round_half_away(yc), "int32"), _op.cast(round_half_away(xc), "int32"))
        else:
            y0f, x0f = _intrin.floor(yc), _intrin.floor(xc)
            y0, x0 = _op.cast(y0f, "int32"), _op.cast(x0f, "int32")
            y1 = _op.minimum(y0 + 1, _op.const(height - 1, "int32"))
            x1 = _op.minimum(x0 + 1, _op.const(width - 1, "int32"))
            ty, tx = yc - y0f, xc - x0f
            one = _op.const(1.0, work)
            top = read(n, ch, y0, x0) * (one - tx) + read(n, ch, y0, x1) * tx
            bottom = read(n, ch, y1, x0) * (one - tx) + read(n, ch, y1, x1) * tx
            value = top * (one - ty) + bottom * ty
        return cast_expr(_op.select(outside, _op.const(float(extrapolation_value), work), value), out_dtype)

    out_shape = [0] * 4
    out_shape[0], out_shape[c_axis], out_shape[h_axis], out_shape[w_axis] = num, shape[c_axis], crop_h, crop_w
    return compute(tuple(out_shape), fcompute, name="T_crop_and_resize", tag=f"{_tag.INJECTIVE},crop_and_resize")


def dilation2d(data, weight, strides, padding, dilations, data_layout="NCHW", out_dtype=None):
    """Morphological dilation: ``max`` over the window of ``data + weight`` per channel (zero padding)."""
    out_dtype = out_dtype or data.dtype
    shape = get_const_tuple(data.shape)
    c_axis, h_axis, w_axis = (data_layout.index(a) for a in "CHW")
    kshape = get_const_tuple(weight.shape)
    kh, kw = (kshape[0], kshape[1]) if data_layout == "NHWC" else (kshape[1], kshape[2])
    before, after = [0] * 4, [0] * 4
    before[h_axis], before[w_axis], after[h_axis], after[w_axis] = padding[0], padding[1], padding[2], padding[3]
    padded = pad(data, before, after, name="pad_temp") if any(padding) else data
    out_shape = list(shape)
    out_shape[h_axis] = conv_out_size(shape[h_axis], kh, strides[0], dilations[0], padding[0], padding[2])
    out_shape[w_axis] = conv_out_size(shape[w_axis], kw, strides[1], dilations[1], padding[1], padding[3])

    def fcompute(*o):
        ry, rx = reduce_axis((0, kh), name="ry"), reduce_axis((0, kw), name="rx")
        idx = list(o)
        idx[h_axis] = o[h_axis] * strides[0] + ry.var * dilations[0]
        idx[w_axis] = o[w_axis] * strides[1] + rx.var * dilations[1]
        tap = weight(ry.var, rx.var, o[c_axis]) if data_layout == "NHWC" else weight(o[c_axis], ry.var, rx.var)
        return _te_max(_op.cast(padded(*idx) + tap, out_dtype), axis=[ry, rx])

    return compute(tuple(out_shape), fcompute, name="T_dilation2d", tag="dilation2d")


def correlation_nchw(data1, data2, kernel_size, max_displacement, stride1, stride2, padding, is_multiply):
    """FlowNet's correlation of two NCHW feature maps (TVM's ``correlation_nchw``): for each displacement
    ``(dy, dx)`` in ``[-max_displacement, max_displacement]`` (step ``stride2``) the mean over channels and a
    ``kernel_size`` window of ``data1 * data2`` shifted (or ``|data1 - data2|``)."""
    n, c, h, w = get_const_tuple(data1.shape)
    before, after = [0, 0, padding, padding], [0, 0, padding, padding]
    p1 = pad(data1, before, after, name="pad_data1") if padding else data1
    p2 = pad(data2, before, after, name="pad_data2") if padding else data2
    border = max_displacement + (kernel_size - 1) // 2
    radius = max_displacement // stride2
    size = 2 * radius + 1
    out_h = (h + 2 * padding - 2 * border + stride1 - 1) // stride1
    out_w = (w + 2 * padding - 2 * border + stride1 - 1) // stride1

    def fcompute(b, q, i, j):
        rc, ry, rx = reduce_axis((0, c), name="rc"), reduce_axis((0, kernel_size), name="ry"), \
            reduce_axis((0, kernel_size), name="rx")
        y1, x1 = i * stride1 + max_displacement, j * stride1 + max_displacement
        y2 = y1 + (q // size - radius) * stride2
        x2 = x1 + (q % size - radius) * stride2
        a, bb = p1(b, rc.var, y1 + ry.var, x1 + rx.var), p2(b, rc.var, y2 + ry.var, x2 + rx.var)
        return _te_sum(a * bb if is_multiply else _op.abs(a - bb), axis=[rc, ry, rx])

    total = compute((n, size * size, out_h, out_w), fcompute, name="T_correlation_sum", tag="correlation_nchw")
    scale = _op.const(1.0 / (kernel_size * kernel_size * c), data1.dtype)
    return compute(total.shape, lambda *i: total(*i) * scale, name="T_correlation", tag=_tag.ELEMWISE)
