"""2-D convolution computes (TVM's ``topi/nn/conv2d.py``): NCHW/OIHW, NHWC/HWIO, grouped and depthwise, the packed
NCHW[x]c/OIHW[y]i[x]o form, and :func:`conv2d`, which dispatches on layouts.

All are direct convolutions over a padded input (:func:`kiln.topi.nn.pad`, inlined by schedules)::

    out[n, f, y, x] = sum_{c, ry, rx} pad[n, g(f) * C/groups + c, y * sh + ry * dh, x * sw + rx * dw]
                                      * kernel[f, c, ry, rx]

with ``g(f) = f // (O / groups)`` the group of output channel ``f``. Operands are cast to ``out_dtype`` before the
multiply (integers widen, as TVM does); float16 accumulates in float32 and is cast back in an element-wise stage.
``padding`` is ``(top, left, bottom, right)``.

Any other layout pair whose primal axes are NCHW/OIHW is computed by transforming the operands to NCHW/OIHW
(``layout_transform`` stages that schedules inline) and the result to ``out_layout``. The packed form
``conv2d_NCHWc`` reads ``data[n, c // bc, y, x, c % bc]``-style blocks directly: it is what a layout-altering pass
would hand to the x86 schedule, and what :mod:`kiln.topi.x86.conv2d` builds internally for NCHW.
``depthwise_conv2d_NCHWc`` is its depthwise sibling (one filter per channel, kernel OIHW1i[b]o).
"""

from collections import namedtuple

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import op as _op
from ...tir.layout import layout as parse_layout
from .. import tag as _tag
from ..transform import layout_transform
from ..utils import get_const_tuple, known_nonpositive
from .pad import pad
from .utils import get_pad_tuple

__all__ = [
    "conv2d", "conv2d_nchw", "conv2d_nhwc", "group_conv2d_nchw", "group_conv2d_nhwc", "depthwise_conv2d_nchw",
    "conv2d_NCHWc", "depthwise_conv2d_NCHWc", "conv_out_size", "pad_tuple", "is_packed", "is_packed_depthwise",
    "Workload",
]

Workload = namedtuple("Workload", ["in_dtype", "out_dtype", "height", "width", "in_filter", "groups", "out_filter",
                                   "kernel_h", "kernel_w", "padt", "padl", "padb", "padr", "dilation_h",
                                   "dilation_w", "stride_h", "stride_w"])
"""A convolution's geometry as TVM's x86 fallback schedules read it: input size and channels, groups, output
channels, kernel size, the four paddings, dilation and strides."""


def pad_tuple(padding) -> tuple:
    """``(top, left, bottom, right)`` from an int, ``(h, w)`` or four values (TVM's rule)."""
    if isinstance(padding, int):
        return (padding,) * 4
    if isinstance(padding, str):
        raise OpAttributeInvalid(f"padding {padding!r} depends on the kernel: resolve it with get_pad_tuple")
    padding = tuple(int(p) for p in padding)
    if len(padding) == 1:
        return padding * 4
    if len(padding) == 2:
        return padding + padding
    if len(padding) != 4:
        raise OpAttributeInvalid(f"padding {padding} must have 1, 2 or 4 values")
    return padding


def _pair(v) -> tuple:
    return (int(v), int(v)) if isinstance(v, int) else tuple(int(x) for x in v)


def conv_out_size(size, kernel, stride, dilation, before, after) -> int:
    """The output length of a convolution along one axis."""
    return (size + before + after - dilation * (kernel - 1) - 1) // stride + 1


def _acc_dtype(out_dtype):
    return "float32" if out_dtype == "float16" else out_dtype


def _finish(out, out_dtype, name):
    """Cast a float32 accumulation back to float16 in an element-wise stage (nothing for other dtypes)."""
    if out.dtype == out_dtype:
        return out
    return compute(out.shape, lambda *i: _op.cast(out(*i), out_dtype), name=f"{name}_cast", tag=_tag.ELEMWISE)


def _geometry(h, w, kh, kw, strides, padding, dilation, what):
    (sh, sw), (dh, dw) = _pair(strides), _pair(dilation)
    top, left, bottom, right = pad_tuple(padding)
    oh = conv_out_size(h, kh, sh, dh, top, bottom)
    ow = conv_out_size(w, kw, sw, dw, left, right)
    if known_nonpositive(oh, ow):
        raise OpAttributeInvalid(f"{what}: a {kh}x{kw} kernel does not fit the padded {h}x{w} input")
    return (sh, sw), (dh, dw), (top, left, bottom, right), oh, ow


def group_conv2d_nchw(data, kernel, strides, padding, dilation, groups, out_dtype=None):
    """Grouped convolution of NCHW ``data`` with an OIHW ``kernel`` of shape ``(O, C / groups, KH, KW)``.

    Returns
    -------
    out : te.Tensor
        ``(N, O, OH, OW)``, tagged ``conv2d_nchw`` (groups 1), ``depthwise_conv2d_nchw`` (one input channel per
        group) or ``group_conv2d_nchw``.
    """
    out_dtype = out_dtype or data.dtype
    n, c, h, w = get_const_tuple(data.shape)
    o, cg, kh, kw = get_const_tuple(kernel.shape)
    if c != cg * groups or o % groups:
        raise OpAttributeInvalid(f"topi.conv2d_nchw: data {(n, c, h, w)} and kernel {(o, cg, kh, kw)} do not fit "
                                 f"groups={groups}")
    (sh, sw), (dh, dw), (top, left, bottom, right), oh, ow = _geometry(h, w, kh, kw, strides, padding, dilation,
                                                                      "topi.conv2d_nchw")
    padded = pad(data, (0, 0, top, left), (0, 0, bottom, right), name="data_pad") if any(
        (top, left, bottom, right)) else data
    acc = _acc_dtype(out_dtype)
    og = o // groups
    rc = reduce_axis((0, cg), name="rc")
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")

    def fcompute(nn, ff, yy, xx):
        channel = rc if groups == 1 else (ff // og) * cg + rc
        return _te_sum(_op.cast(padded[nn, channel, yy * sh + ry * dh, xx * sw + rx * dw], acc)
                       * _op.cast(kernel[ff, rc, ry, rx], acc), axis=[rc, ry, rx])

    if groups == 1:
        tag, name = "conv2d_nchw", "conv2d_nchw"
    elif cg == 1:
        tag, name = "depthwise_conv2d_nchw", "depthwise_conv2d_nchw"
    else:
        tag, name = "group_conv2d_nchw", "group_conv2d_nchw"
    if kw == 1 and sh == sw == 1 and left == right == 0 and isinstance(oh, int) and isinstance(ow, int) and oh > 1:
        # A kernel one column wide at unit strides reads whole input rows, which follow each other in the input as
        # the output rows do: computed over the flattened map, a 14x14 output is 12 whole 16-lane vectors and a
        # remainder, not 14 vectors of 14 lanes. The flat result is viewed as NCHW by an injective stage.
        flat = compute((n, o, oh * ow), lambda nn, ff, pp: fcompute(nn, ff, pp // ow, pp % ow), name=name, tag=tag)
        out = compute((n, o, oh, ow), lambda nn, ff, yy, xx: flat[nn, ff, yy * ow + xx], name=f"{name}_rows",
                      tag=_tag.INJECTIVE)
    else:
        out = compute((n, o, oh, ow), fcompute, name=name, tag=tag)
    return _finish(out, out_dtype, name)


def conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype=None):
    """Convolution of NCHW ``data`` with an OIHW ``kernel`` (TVM's ``topi.nn.conv2d_nchw``)."""
    return group_conv2d_nchw(data, kernel, strides, padding, dilation, 1, out_dtype)


def depthwise_conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype=None):
    """Depthwise convolution: NCHW ``data``, kernel ``(C * multiplier, 1, KH, KW)``."""
    return group_conv2d_nchw(data, kernel, strides, padding, dilation, get_const_tuple(data.shape)[1], out_dtype)


def group_conv2d_nhwc(data, kernel, strides, padding, dilation, groups, out_dtype=None):
    """Grouped convolution of NHWC ``data`` with an HWIO ``kernel`` of shape ``(KH, KW, C / groups, O)``.

    Returns
    -------
    out : te.Tensor
        ``(N, OH, OW, O)``, tagged ``conv2d_nhwc`` (or ``group_conv2d_nhwc``).
    """
    out_dtype = out_dtype or data.dtype
    n, h, w, c = get_const_tuple(data.shape)
    kh, kw, cg, o = get_const_tuple(kernel.shape)
    if c != cg * groups or o % groups:
        raise OpAttributeInvalid(f"topi.conv2d_nhwc: data {(n, h, w, c)} and kernel {(kh, kw, cg, o)} do not fit "
                                 f"groups={groups}")
    (sh, sw), (dh, dw), (top, left, bottom, right), oh, ow = _geometry(h, w, kh, kw, strides, padding, dilation,
                                                                      "topi.conv2d_nhwc")
    padded = pad(data, (0, top, left, 0), (0, bottom, right, 0), name="data_pad") if any(
        (top, left, bottom, right)) else data
    acc = _acc_dtype(out_dtype)
    og = o // groups
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    rc = reduce_axis((0, cg), name="rc")

    def fcompute(nn, yy, xx, ff):
        channel = rc if groups == 1 else (ff // og) * cg + rc
        return _te_sum(_op.cast(padded[nn, yy * sh + ry * dh, xx * sw + rx * dw, channel], acc)
                       * _op.cast(kernel[ry, rx, rc, ff], acc), axis=[ry, rx, rc])

    name = "conv2d_nhwc" if groups == 1 else "group_conv2d_nhwc"
    out = compute((n, oh, ow, o), fcompute, name=name, tag=name)
    return _finish(out, out_dtype, name)


def conv2d_nhwc(data, kernel, strides, padding, dilation, out_dtype=None):
    """Convolution of NHWC ``data`` with an HWIO ``kernel`` (TVM's ``topi.nn.conv2d_nhwc``)."""
    return group_conv2d_nhwc(data, kernel, strides, padding, dilation, 1, out_dtype)


def conv2d_NCHWc(data, kernel, strides, padding, dilation, layout=None, out_layout=None,  # noqa: N802
                 out_dtype=None, groups=1):
    """Convolution in the packed layouts: ``data`` NCHW[ic_bn]c ``(N, C/ic_bn, H, W, ic_bn)`` and ``kernel``
    OIHW[ic_bn]i[oc_bn]o ``(O/oc_bn, C/groups/ic_bn, KH, KW, ic_bn, oc_bn)`` (TVM's signature; ``layout`` and
    ``out_layout`` are implied by the shapes and only checked when given). With ``groups`` (a kiln extension) each
    group's input and output channels are whole blocks, so an output block reads the input blocks of its group.

    Returns
    -------
    out : te.Tensor
        NCHW[oc_bn]c ``(N, O/oc_bn, OH, OW, oc_bn)``, tagged ``conv2d_NCHWc``.
    """
    out_dtype = out_dtype or data.dtype
    n, ic_chunk, h, w, ic_bn = get_const_tuple(data.shape)
    oc_chunk, k_ic_chunk, kh, kw, k_ic_bn, oc_bn = get_const_tuple(kernel.shape)
    for what, given, implied in (("layout", layout, f"NCHW{ic_bn}c"), ("out_layout", out_layout, f"NCHW{oc_bn}c")):
        if given and given != implied:
            raise OpAttributeInvalid(f"topi.conv2d_NCHWc: {what} {given} does not match the blocked shapes "
                                     f"({implied})")
    if (ic_chunk, ic_bn) != (k_ic_chunk * groups, k_ic_bn) or oc_chunk % groups:
        raise OpAttributeInvalid(f"topi.conv2d_NCHWc: data {get_const_tuple(data.shape)} and kernel "
                                 f"{get_const_tuple(kernel.shape)} disagree on the input channel blocks"
                                 + (f" of {groups} groups" if groups != 1 else ""))
    (sh, sw), (dh, dw), (top, left, bottom, right), oh, ow = _geometry(h, w, kh, kw, strides, padding, dilation,
                                                                      "topi.conv2d_NCHWc")
    padded = pad(data, (0, 0, top, left, 0), (0, 0, bottom, right, 0), name="data_pad") if any(
        (top, left, bottom, right)) else data
    acc = _acc_dtype(out_dtype)
    ico = reduce_axis((0, k_ic_chunk), name="ic_outer")
    ry = reduce_axis((0, kh), name="kh")
    rx = reduce_axis((0, kw), name="kw")
    ici = reduce_axis((0, ic_bn), name="ic_inner")
    group_blocks = oc_chunk // groups

    def fcompute(nn, oc, yy, xx, ob):
        chunk = ico if groups == 1 else oc // group_blocks * k_ic_chunk + ico
        return _te_sum(_op.cast(padded[nn, chunk, yy * sh + ry * dh, xx * sw + rx * dw, ici], acc)
                       * _op.cast(kernel[oc, ico, ry, rx, ici, ob], acc), axis=[ico, ry, rx, ici])

    out = compute((n, oc_chunk, oh, ow, oc_bn), fcompute, name="conv2d_NCHWc", tag="conv2d_NCHWc")
    return _finish(out, out_dtype, "conv2d_NCHWc")


def depthwise_conv2d_NCHWc(data, kernel, strides, padding, dilation, out_dtype=None):  # noqa: N802
    """Depthwise convolution in the packed layouts: ``data`` NCHW[b]c ``(N, C/b, H, W, b)`` and ``kernel``
    OIHW1i[b]o ``(C/b, 1, KH, KW, 1, b)`` (one filter per channel; TVM's ``depthwise_conv2d_NCHWc`` with a channel
    multiplier of 1).

    Returns
    -------
    out : te.Tensor
        NCHW[b]c ``(N, C/b, OH, OW, b)``, tagged ``depthwise_conv2d_NCHWc``.
    """
    out_dtype = out_dtype or data.dtype
    n, chunks, h, w, bc = get_const_tuple(data.shape)
    k_chunks, k_in, kh, kw, k_in_bn, k_bn = get_const_tuple(kernel.shape)
    if (k_chunks, k_in, k_in_bn, k_bn) != (chunks, 1, 1, bc):
        raise OpAttributeInvalid(f"topi.depthwise_conv2d_NCHWc: kernel {get_const_tuple(kernel.shape)} is not one "
                                 f"filter per channel of data {get_const_tuple(data.shape)}")
    (sh, sw), (dh, dw), (top, left, bottom, right), oh, ow = _geometry(h, w, kh, kw, strides, padding, dilation,
                                                                      "topi.depthwise_conv2d_NCHWc")
    padded = pad(data, (0, 0, top, left, 0), (0, 0, bottom, right, 0), name="data_pad") if any(
        (top, left, bottom, right)) else data
    acc = _acc_dtype(out_dtype)
    ry = reduce_axis((0, kh), name="kh")
    rx = reduce_axis((0, kw), name="kw")

    def fcompute(nn, cc, yy, xx, cb):
        return _te_sum(_op.cast(padded[nn, cc, yy * sh + ry * dh, xx * sw + rx * dw, cb], acc)
                       * _op.cast(kernel[cc, 0, ry, rx, 0, cb], acc), axis=[ry, rx])

    out = compute((n, chunks, oh, ow, bc), fcompute, name="depthwise_conv2d_NCHWc", tag="depthwise_conv2d_NCHWc")
    return _finish(out, out_dtype, "depthwise_conv2d_NCHWc")


def is_packed_depthwise(data, data_layout, kernel_layout, groups):
    """Whether a grouped convolution is depthwise in the packed layouts (NCHW[b]c data, OIHW1i[b]o kernel)."""
    d, k = parse_layout(data_layout), parse_layout(kernel_layout)
    if not (d.primal == "NCHW" and [a for a, _ in d.axes] == list("NCHWc")
            and k.primal == "OIHW" and [a for a, _ in k.axes] == list("OIHWio")):
        return False
    shape = get_const_tuple(data.shape)
    return k.factor_of("I") == 1 and k.factor_of("O") == d.factor_of("C") and groups == shape[1] * shape[4]


def is_packed(data_layout, kernel_layout):
    """Whether the layouts are the packed NCHW[x]c / OIHW[x]i[y]o pair ``conv2d_NCHWc`` computes in."""
    d, k = parse_layout(data_layout), parse_layout(kernel_layout)
    return (d.primal == "NCHW" and [a for a, _ in d.axes] == list("NCHWc")
            and k.primal == "OIHW" and [a for a, _ in k.axes] == list("OIHWio")
            and d.factor_of("C") == k.factor_of("I"))


def _whole_group_blocks(data, kernel, groups):
    """Whether every group of a packed convolution has whole blocks of input and output channels."""
    ic_chunk, oc_chunk = get_const_tuple(data.shape)[1], get_const_tuple(kernel.shape)[0]
    return ic_chunk % groups == 0 and oc_chunk % groups == 0


def conv2d(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1), data_layout="NCHW", kernel_layout="",
           out_dtype=None, groups=1, out_layout=""):
    """2-D convolution in any data/kernel layouts whose primal axes are NCHW/OIHW (Relay's ``nn.conv2d``; TVM's
    ``topi.nn.conv2d`` signature, with ``groups`` and ``out_layout`` added).

    NCHW/OIHW, NHWC/HWIO and packed NCHW[x]c/OIHW[y]i[x]o compute directly; other layouts go through
    ``layout_transform`` to NCHW/OIHW and back to ``out_layout`` (``data_layout`` when empty).

    Returns
    -------
    out : te.Tensor
    """
    kernel_layout = kernel_layout or ("OIHW" if data_layout == "NCHW" else "HWIO")
    out_layout = out_layout or data_layout
    for name, lay in (("data_layout", data_layout), ("kernel_layout", kernel_layout), ("out_layout", out_layout)):
        primal = parse_layout(lay).primal
        if sorted(primal) != sorted("NCHW" if name != "kernel_layout" else "OIHW"):
            raise OpAttributeInvalid(f"topi.conv2d: {name} {lay} is not a layout of "
                                     f"{'NCHW' if name != 'kernel_layout' else 'OIHW'} axes")
    if data_layout == "NHWC" and kernel_layout == "HWIO":
        out = group_conv2d_nhwc(data, kernel, strides, padding, dilation, groups, out_dtype)
        natural = "NHWC"
    elif groups > 1 and is_packed_depthwise(data, data_layout, kernel_layout, groups):
        out = depthwise_conv2d_NCHWc(data, kernel, strides, padding, dilation, out_dtype)
        natural = f"NCHW{get_const_tuple(kernel.shape)[-1]}c"
    elif is_packed(data_layout, kernel_layout) and _whole_group_blocks(data, kernel, groups):
        out = conv2d_NCHWc(data, kernel, strides, padding, dilation, out_dtype=out_dtype, groups=groups)
        natural = f"NCHW{get_const_tuple(kernel.shape)[-1]}c"
    else:
        x = layout_transform(data, data_layout, "NCHW") if data_layout != "NCHW" else data
        k = layout_transform(kernel, kernel_layout, "OIHW") if kernel_layout != "OIHW" else kernel
        out = group_conv2d_nchw(x, k, strides, padding, dilation, groups, out_dtype)
        natural = "NCHW"
    return layout_transform(out, natural, out_layout) if out_layout != natural else out


def _get_workload(data, kernel, stride, padding, dilation, out_dtype, data_layout="NCHW"):
    """The :class:`Workload` of a convolution of the placeholders ``data`` (``NCHW``, ``NHWC`` or ``HWCN``) and
    ``kernel`` (``OIHW`` for NCHW data, else ``HWIO``), with ``padding`` resolved against the dilated kernel as
    :func:`~kiln.topi.nn.utils.get_pad_tuple` does (TVM's private helper, which its tests call)."""
    positions = {"NCHW": (1, 2, 3), "NHWC": (3, 1, 2), "HWCN": (2, 0, 1)}
    if data_layout not in positions:
        raise OpAttributeInvalid(f"conv2d workload: data layout {data_layout!r} is not NCHW, NHWC or HWCN")
    shape = get_const_tuple(data.shape)
    ci, ih, iw = (shape[i] for i in positions[data_layout])
    if data_layout == "NCHW":
        co, ci_group, kh, kw = get_const_tuple(kernel.shape)
    else:
        kh, kw, ci_group, co = get_const_tuple(kernel.shape)
    if data.dtype != kernel.dtype and (data.dtype, kernel.dtype) != ("uint8", "int8"):
        raise OpAttributeInvalid(f"conv2d workload: data of {data.dtype} with a kernel of {kernel.dtype} "
                                 "(the same type, or uint8 data with an int8 kernel)")
    dh, dw = _pair(dilation)
    sh, sw = _pair(stride)
    pt, pl, pb, pr = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    return Workload(data.dtype, out_dtype, ih, iw, ci, ci // ci_group, co, kh, kw, pt, pl, pb, pr, dh, dw, sh, sw)
