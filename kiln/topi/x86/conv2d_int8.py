"""x86 int8 convolution through 8-bit dot products (TVM's ``topi/x86/conv2d_int8.py`` with
``conv2d_avx_common.py``'s int8 schedule).

For uint8 data, int8 weights and an int32 result on a CPU with an 8-bit dot product
(:func:`kiln.tir.transform.int8_dot_instruction`: ``vpdpbusd`` with AVX512-VNNI, else ``pmaddubsw`` +
``pmaddwd``), the NCHW/OIHW operands are packed at run time so that four input channels are adjacent in both::

    data_vec[n, C'/ic_bn, Hp, Wp, ic_bn]                     = pad(data)[n, c, y, x]  (0 past the C channels)
    kernel_vec[O'/oc_bn, C'/ic_bn, KH, KW, ic_bn/4, oc_bn, 4] = kernel[o, c, ry, rx]  (0 past O and C)
    conv[n, O'/oc_bn, OH, OW, oc_bn] = sum_{ic_outer, kh, kw, icb} DOT(data_vec[.., 4 icb : 4 icb + 4],
                                                                         kernel_vec[.., icb, ob, 0:4])
    out[n, o, y, x] = conv[n, o // oc_bn, y, x, o % oc_bn]                            (o < O)

``C'`` and ``O'`` are the channel counts rounded up to the 4 bytes of a dot product and the ``oc_bn`` int32 lanes
of the instruction (TVM pads them in its Relay legalization; here the packing stages do it). ``DOT`` is the
sum of the four products, exact on every CPU (TVM's single ``pmaddubsw`` saturates a pair of large products;
kiln's applies it to nibbles, see :mod:`kiln.tir.transform.inject_int8_dot`). Written so, the loop over ``oc_bn``
outputs is what ``tir.InjectInt8DotProduct`` turns into the instructions, and every backend computes the same values.

The schedule is the float blocked one's (:mod:`kiln.topi.x86.conv2d`): register tiles of ``reg_n`` columns x
``oc_bn`` channels in a local accumulator, the reductions ``ic_outer, kh, kw, icb`` outside the unrolled columns,
rows in parallel, the unpacking and element-wise consumers written out per row.
"""

from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import intrin as _intrin
from ...tir import op as _op
from ...tir.transform.inject_int8_dot import INT8_DOT_INSTRUCTIONS, int8_dot_instruction
from .. import tag as _tag
from ..nn.conv2d import conv_out_size, pad_tuple
from ..nn.pad import pad
from ..utils import (
    ceil_div,
    fused_output,
    get_const_tuple,
    largest_divisor,
    output_ops,
    resolve_target,
    schedule_anchored,
)
from .conv2d import _tile_nchwc, _write_rows, register_tile
from .injective import schedule_injective_from_existing, worth_parallel

__all__ = ["conv2d_nchw_int8", "schedule_conv2d_nchw_int8", "int8_dot_lanes", "int8_conv2d_supported",
           "dot4"]


def int8_dot_lanes(target=None):
    """The int32 lanes of the int8 dot product of ``target``'s CPU, or None when it has none."""
    target = resolve_target(target)
    if target.kind.name != "llvm":
        return None
    name = int8_dot_instruction(target.cpu_info.features)
    return None if name is None else INT8_DOT_INSTRUCTIONS[name].lanes


def int8_conv2d_supported(data_dtype, kernel_dtype, out_dtype, target=None) -> bool:
    """Whether a convolution of these dtypes runs on ``target``'s 8-bit dot product (uint8 data, int8 weights,
    int32 result; int8 data is first shifted to uint8 by the Relay legalization)."""
    return (data_dtype, kernel_dtype, out_dtype) == ("uint8", "int8", "int32") and int8_dot_lanes(target) is not None


def dot4(a, b):
    """The int32 dot product of four uint8 ``a`` and int8 ``b`` values, the form ``tir.InjectInt8DotProduct``
    computes with the CPU's instructions."""
    p = [_op.cast(x, "int32") * _op.cast(y, "int32") for x, y in zip(a, b, strict=True)]
    return p[0] + p[1] + p[2] + p[3]


def _ic_block(channels4):
    """Input channels per block: a multiple of 4 dividing the padded channel count, at most 16."""
    return 4 * largest_divisor(channels4 // 4, 4)


def conv2d_nchw_int8(data, kernel, strides, padding, dilation, out_dtype="int32", target=None):
    """uint8 NCHW data with int8 OIHW weights to int32 NCHW through the dot-product layout (module docstring).

    Returns
    -------
    out : te.Tensor
        ``(N, O, OH, OW)``; its producer is the ``conv2d_NCHWc_int8`` stage.
    """
    lanes = int8_dot_lanes(target)
    n, c, h, w = get_const_tuple(data.shape)
    o, _, kh, kw = get_const_tuple(kernel.shape)
    top, left, bottom, right = pad_tuple(padding)
    sh, sw = (strides, strides) if isinstance(strides, int) else strides
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    c4, oc_bn = ceil_div(c, 4) * 4, lanes
    ic_bn, o_pad = _ic_block(c4), ceil_div(o, oc_bn) * oc_bn
    padded = pad(data, (0, 0, top, left), (0, 0, bottom, right), name="data_pad") if any(
        (top, left, bottom, right)) else data
    hp, wp = h + top + bottom, w + left + right

    def pack_data(nn, cc, y, x, cb):
        ch = cc * ic_bn + cb
        return _intrin.if_then_else(ch < c, padded[nn, _op.minimum(ch, c - 1), y, x], _op.const(0, data.dtype))

    data_vec = compute((n, c4 // ic_bn, hp, wp, ic_bn), pack_data, name="data_vec",
                       tag=f"{_tag.INJECTIVE},data_vec")

    def pack_kernel(oc, ic, y, x, ib, ob, j):
        oo, ch = oc * oc_bn + ob, ic * ic_bn + ib * 4 + j
        value = kernel[_op.minimum(oo, o - 1), _op.minimum(ch, c - 1), y, x]
        return _intrin.if_then_else(_op.all(oo < o, ch < c), value, _op.const(0, kernel.dtype))

    kernel_vec = compute((o_pad // oc_bn, c4 // ic_bn, kh, kw, ic_bn // 4, oc_bn, 4), pack_kernel,
                         name="kernel_vec", tag=f"{_tag.INJECTIVE},kernel_vec")
    oh = conv_out_size(h, kh, sh, dh, top, bottom)
    ow = conv_out_size(w, kw, sw, dw, left, right)
    ico = reduce_axis((0, c4 // ic_bn), name="ic_outer")
    ry, rx = reduce_axis((0, kh), name="kh"), reduce_axis((0, kw), name="kw")
    icb = reduce_axis((0, ic_bn // 4), name="ic_f_inner")

    def fconv(nn, oc, yy, xx, ob):
        y, x = yy * sh + ry * dh, xx * sw + rx * dw
        a = [data_vec[nn, ico, y, x, icb * 4 + j] for j in range(4)]
        b = [kernel_vec[oc, ico, ry, rx, icb, ob, j] for j in range(4)]
        return _te_sum(dot4(a, b), axis=[ico, ry, rx, icb])

    conv = compute((n, o_pad // oc_bn, oh, ow, oc_bn), fconv, name="conv2d_NCHWc_int8", tag="conv2d_NCHWc_int8")
    return compute((n, o, oh, ow), lambda nn, cc, y, x: conv[nn, cc // oc_bn, y, x, cc % oc_bn],
                   name="conv2d_nchw_unpack", tag=f"{_tag.INJECTIVE},unpack_nchwc")


def _schedule_pack(s, tensor, fuse):
    """Packing stages run in parallel over their ``fuse`` outer axes, their padding inlined."""
    op = tensor.op
    for t in op.input_tensors:
        if _tag.is_injective(getattr(t.op, "tag", "")):
            s[t.op].compute_inline()
    stage = s[op]
    fused = stage.fuse(*list(stage.op.axis)[:fuse])
    if worth_parallel(tensor.shape):
        stage.parallel(fused)


def _schedule_int8(s, conv_op, outs, target):
    conv = conv_op.output(0)
    data_vec, kernel_vec = conv_op.input_tensors[:2]
    _schedule_pack(s, data_vec, 3)
    _schedule_pack(s, kernel_vec, 2)
    n, oc_chunk, oh, ow, oc_bn = get_const_tuple(conv.shape)
    reg_n = register_tile(ow, oc_bn, target, "int32")
    shape = (n, oc_chunk, oh, ow, oc_bn)

    def fits(t):
        dims = get_const_tuple(t.shape)
        return dims == shape or (len(dims) == 4 and dims[0] == n and dims[2:] == (oh, ow))

    out = fused_output(s, conv_op, outs, fits)
    acc = s.cache_write(conv, "local")
    row, x_chunk = _tile_nchwc(s[conv], reg_n)
    if out is not None and out.op is not conv_op:
        s[conv].compute_at(s[out], _write_rows(s[out], oc_bn))
    else:
        s[conv].parallel(row)
    s[acc].compute_at(s[conv], x_chunk)
    an, ac, ay, ax, ab = s[acc].op.axis
    ico, rkh, rkw, icb = s[acc].op.reduce_axis
    s[acc].reorder(an, ac, ay, ico, rkh, rkw, icb, ax, ab)
    s[acc].unroll(ax)  # each column's oc_bn outputs: one dot-product instruction (tir.InjectInt8DotProduct)
    for op in output_ops(outs):
        if op is not conv_op and (out is None or op is not out.op):
            schedule_injective_from_existing(s, op.output(0), target)


def schedule_conv2d_nchw_int8(outs, target=None):
    """Schedule a group anchored by a ``conv2d_NCHWc_int8`` stage (see the module docstring).

    Returns
    -------
    s : Schedule
    """
    return schedule_anchored(outs, ("conv2d_NCHWc_int8",), lambda s, op: _schedule_int8(s, op, outs, target))
