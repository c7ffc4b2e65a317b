"""Convolutions over any number of spatial axes (TVM's ``conv1d``, ``conv3d`` and the transposed convolutions
``conv1d_transpose_ncw``, ``conv2d_transpose_nchw``, ``conv3d_transpose_ncdhw``).

Both computes work on channel-first tensors (``N, C, spatial...`` data, ``O, I, spatial...`` kernels);
:func:`conv` and :func:`conv_transpose` move other layouts there and back with ``layout_transform``.

A transposed convolution is the gradient of a convolution with respect to its input: the input dilated by the
stride (``stride - 1`` zeros between elements), padded by ``dilation * (k - 1) - pad`` on each side (plus
``output_padding`` at the end), convolved with the kernel flipped in space and with its I and O axes swapped. The
dilated, padded input is never materialized: each read checks that the position falls on an input element.
"""

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import op as _op
from ...tir.layout import layout as parse_layout
from ..transform import layout_transform, reshape
from ..utils import get_const_tuple, known_nonpositive
from .conv2d import _acc_dtype, _finish, conv_out_size
from .pad import pad

__all__ = ["conv_ncx", "conv_transpose_ncx", "conv", "conv_transpose", "conv_transpose_out_size", "primal_layout"]


def primal_layout(layout_name, channel="C"):
    """The channel-first primal layout with the spatial axes of ``layout_name`` in order (``NWC`` -> ``NCW``)."""
    spatial = "".join(a for a in parse_layout(layout_name).name if a.isupper() and a not in "NCOI")
    return ("NC" if channel == "C" else channel) + spatial


def conv_transpose_out_size(size, kernel, stride, dilation, before, after, output_padding) -> int:
    """The output length of a transposed convolution along one axis."""
    return (size - 1) * stride + dilation * (kernel - 1) + 1 - before - after + output_padding


def conv_ncx(data, kernel, strides, padding, dilation, groups=1, out_dtype=None):
    """Convolution of ``(N, C, *S)`` data with an ``(O, C / groups, *K)`` kernel.

    Parameters
    ----------
    data, kernel : te.Tensor
        A depthwise kernel may also be TVM's ``(C, multiplier, *K)`` (with ``groups == C``).
    strides, dilation : tuple of int
        One per spatial axis.
    padding : tuple of int
        Before on each spatial axis, then after.
    groups : int
    out_dtype : str, optional

    Returns
    -------
    out : te.Tensor
        ``(N, O, *OS)``, tagged ``convnd``.
    """
    out_dtype = out_dtype or data.dtype
    dshape, kshape = get_const_tuple(data.shape), get_const_tuple(kernel.shape)
    n, c, space = dshape[0], dshape[1], dshape[2:]
    o, cg, ksize = kshape[0], kshape[1], kshape[2:]
    nd = len(space)
    if groups == c == o and cg != 1:  # TVM's depthwise (C, multiplier, ...) kernel: the (C * multiplier, 1) one
        kernel = reshape(kernel, (o * cg, 1, *ksize))
        o, cg = o * cg, 1
    if c != cg * groups or o % groups or len(ksize) != nd:
        raise OpAttributeInvalid(f"topi.conv: data {dshape} and kernel {kshape} do not fit groups={groups}")
    before, after = tuple(padding[:nd]), tuple(padding[nd:])
    out_space = tuple(conv_out_size(space[a], ksize[a], strides[a], dilation[a], before[a], after[a])
                      for a in range(nd))
    if known_nonpositive(*out_space):
        raise OpAttributeInvalid(f"topi.conv: kernel {kshape} does not fit the padded input {dshape}")
    padded = pad(data, (0, 0) + before, (0, 0) + after, name="data_pad") if any(padding) else data
    acc = _acc_dtype(out_dtype)
    og = o // groups

    def fcompute(b, f, *pos):
        rc = reduce_axis((0, cg), name="rc")
        rk = [reduce_axis((0, ksize[a]), name=f"rk{a}") for a in range(nd)]
        channel = rc.var if groups == 1 else (f // og) * cg + rc.var
        idx = [pos[a] * strides[a] + rk[a].var * dilation[a] for a in range(nd)]
        weight = kernel(f, rc.var, *[r.var for r in rk])
        return _te_sum(_op.cast(padded(b, channel, *idx), acc) * _op.cast(weight, acc), axis=[rc, *rk])

    out = compute((n, o) + out_space, fcompute, name="convnd", tag="convnd")
    return _finish(out, out_dtype, "convnd")


def conv_transpose_ncx(data, kernel, strides, padding, output_padding, dilation, groups=1, out_dtype=None):
    """Transposed convolution of ``(N, C, *S)`` data with a ``(C, O / groups, *K)`` kernel (see the module
    docstring); ``padding`` is before on each axis, then after.

    Returns
    -------
    out : te.Tensor
        ``(N, O, *OS)``, tagged ``conv_transposend``.
    """
    out_dtype = out_dtype or data.dtype
    dshape, kshape = get_const_tuple(data.shape), get_const_tuple(kernel.shape)
    n, c, space = dshape[0], dshape[1], dshape[2:]
    cin, og, ksize = kshape[0], kshape[1], kshape[2:]
    nd = len(space)
    if cin != c or c % groups or len(ksize) != nd:
        raise OpAttributeInvalid(f"topi.conv_transpose: data {dshape} and kernel {kshape} do not fit "
                                 f"groups={groups}")
    cg = c // groups
    out_space = tuple(conv_transpose_out_size(space[a], ksize[a], strides[a], dilation[a], padding[a],
                                              padding[nd + a], output_padding[a]) for a in range(nd))
    if known_nonpositive(*out_space):
        raise OpAttributeInvalid(f"topi.conv_transpose: padding {tuple(padding)} leaves no output of {dshape}")
    front = [dilation[a] * (ksize[a] - 1) - padding[a] for a in range(nd)]
    acc = _acc_dtype(out_dtype)

    def fcompute(b, f, *pos):
        rc = reduce_axis((0, cg), name="rc")
        rk = [reduce_axis((0, ksize[a]), name=f"rk{a}") for a in range(nd)]
        channel = (f // og) * cg + rc.var
        ok, idx = [], []
        for a in range(nd):
            # position in the dilated input: pos + k * dilation - front, an input element when divisible by stride
            p = pos[a] + rk[a].var * dilation[a] - front[a]
            ok += [_op.greater_equal(p, 0), _op.equal(_op.floormod(p, strides[a]), 0),
                   _op.less(_op.floordiv(p, strides[a]), space[a])]
            idx.append(_op.maximum(_op.minimum(_op.floordiv(p, strides[a]), space[a] - 1), 0))
        weight = kernel(channel, f % og, *[ksize[a] - 1 - rk[a].var for a in range(nd)])
        value = _op.cast(data(b, channel, *idx), acc) * _op.cast(weight, acc)
        return _te_sum(_op.select(_op.all(*ok), value, _op.const(0, acc)), axis=[rc, *rk])

    out = compute((n, og * groups) + out_space, fcompute, name="conv_transposend", tag="conv_transposend")
    return _finish(out, out_dtype, "conv_transposend")


def _to(tensor, src, dst):
    return tensor if src == dst else layout_transform(tensor, src, dst)


def conv(data, kernel, strides, padding, dilation, groups, data_layout, kernel_layout, out_layout="",
         out_dtype=None):
    """:func:`conv_ncx` in any layouts with the primal axes of ``NC<spatial>`` and ``OI<spatial>``."""
    primal = primal_layout(data_layout)
    out = conv_ncx(_to(data, data_layout, primal), _to(kernel, kernel_layout, "OI" + primal[2:]), strides, padding,
                   dilation, groups, out_dtype)
    return _to(out, primal, out_layout or data_layout)


def conv_transpose(data, kernel, strides, padding, output_padding, dilation, groups, data_layout, kernel_layout,
                   out_layout="", out_dtype=None):
    """:func:`conv_transpose_ncx` in any layouts with the primal axes of ``NC<spatial>`` and ``IO<spatial>``."""
    primal = primal_layout(data_layout)
    out = conv_transpose_ncx(_to(data, data_layout, primal), _to(kernel, kernel_layout, "IO" + primal[2:]), strides,
                             padding, output_padding, dilation, groups, out_dtype)
    return _to(out, primal, out_layout or data_layout)

