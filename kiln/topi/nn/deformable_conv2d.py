"""``deformable_conv2d`` (TVM's ``topi.nn.deformable_conv2d_nchw/nhwc``): a convolution whose taps read the input
bilinearly at their positions moved by learned offsets.

Two stages: ``T_deform_data`` ``(N, C, KH, KW, OH, OW)`` samples the input for every channel, tap and output pixel
(0 for a position outside ``[0, H) x [0, W)``, else :func:`kiln.topi.vision.bilinear_sample`; the offset pair
``(dy, dx)`` of a tap is channel ``(g * KH * KW + ky * KW + kx) * 2`` of ``offset`` for deformable group ``g``),
then ``T_deformable_conv2d`` reduces it against the kernel per group of ``groups`` as a convolution does. Data,
offset and result are NCHW (kernel OIHW) or NHWC (kernel HWIO).
"""

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import op as _op
from .. import tag as _tag
from ..utils import get_const_tuple
from ..vision import bilinear_sample
from .conv2d import _acc_dtype, _finish, conv_out_size

__all__ = ["deformable_conv2d"]


def deformable_conv2d(data, offset, kernel, strides, padding, dilation, deformable_groups, groups=1,
                      layout="NCHW", out_dtype=None):
    """Deformable 2-D convolution (see the module docstring).

    Parameters
    ----------
    data, offset : te.Tensor
        NCHW (or NHWC) data and offsets ``(N, deformable_groups * KH * KW * 2, OH, OW)`` (or NHWC).
    kernel : te.Tensor
        OIHW (or HWIO), ``I = C / groups``.
    strides, dilation : pair of int
    padding : 4 ints
        ``(top, left, bottom, right)``.
    deformable_groups, groups : int
    layout : str
        ``NCHW`` or ``NHWC``.
    out_dtype : str, optional

    Returns
    -------
    out : te.Tensor
        ``(N, O, OH, OW)`` (or NHWC), tagged ``deformable_conv2d_nchw``/``_nhwc``.
    """
    if layout not in ("NCHW", "NHWC"):
        raise OpAttributeInvalid(f"topi.deformable_conv2d: layout must be NCHW or NHWC, got {layout!r}")
    nhwc = layout == "NHWC"
    out_dtype = out_dtype or data.dtype
    if nhwc:
        n, height, width, c = get_const_tuple(data.shape)
        kh, kw, cg, o = get_const_tuple(kernel.shape)
    else:
        n, c, height, width = get_const_tuple(data.shape)
        o, cg, kh, kw = get_const_tuple(kernel.shape)
    if c % deformable_groups or cg * groups != c or o % groups:
        raise OpAttributeInvalid(f"topi.deformable_conv2d: data {data.shape}, kernel {kernel.shape}, groups {groups} "
                                 f"and deformable_groups {deformable_groups} do not fit")
    oh = conv_out_size(height, kh, strides[0], dilation[0], padding[0], padding[2])
    ow = conv_out_size(width, kw, strides[1], dilation[1], padding[1], padding[3])
    per_group = c // deformable_groups
    work = data.dtype

    def pixel(b, ch, r, col):
        return data(b, r, col, ch) if nhwc else data(b, ch, r, col)

    def shift(b, k, y, x):
        return offset(b, y, x, k) if nhwc else offset(b, k, y, x)

    def fsample(b, ch, ky, kx, y, x):
        base = (ch // per_group) * (kh * kw * 2) + (ky * kw + kx) * 2
        py = _op.cast(y * strides[0] - padding[0] + ky * dilation[0], work) + shift(b, base, y, x)
        px = _op.cast(x * strides[1] - padding[1] + kx * dilation[1], work) + shift(b, base + 1, y, x)
        zero = _op.const(0.0, work)
        outside = _op.any(_op.less(py, zero), _op.less(px, zero), _op.greater_equal(py, _op.const(float(height), work)),
                          _op.greater_equal(px, _op.const(float(width), work)))
        value = bilinear_sample(lambda r, col: pixel(b, ch, r, col), py, px, height, width)
        return _op.select(outside, zero, value)

    sampled = compute((n, c, kh, kw, oh, ow), fsample, name="T_deform_data", tag=_tag.INJECTIVE)
    acc = _acc_dtype(out_dtype)
    og = o // groups

    def reduce(b, f, y, x):
        rc, ry, rx = reduce_axis((0, cg), name="rc"), reduce_axis((0, kh), name="ry"), reduce_axis((0, kw), name="rx")
        ch = rc.var if groups == 1 else (f // og) * cg + rc.var
        tap = kernel(ry.var, rx.var, rc.var, f) if nhwc else kernel(f, rc.var, ry.var, rx.var)
        return _te_sum(_op.cast(sampled(b, ch, ry.var, rx.var, y, x), acc) * _op.cast(tap, acc), axis=[rc, ry, rx])

    if nhwc:
        out = compute((n, oh, ow, o), lambda b, y, x, f: reduce(b, f, y, x), name="T_deformable_conv2d",
                      tag="deformable_conv2d_nhwc")
    else:
        out = compute((n, o, oh, ow), reduce, name="T_deformable_conv2d", tag="deformable_conv2d_nchw")
    return _finish(out, out_dtype, "T_deformable_conv2d")
