"""x86 convolution in NCHW through packed blocks (TVM's ``topi/x86/conv2d.py`` and ``conv2d_avx_common.py``).

Compute (:func:`conv2d_nchw`): the NCHW data and OIHW kernel are packed at run time into channel blocks, the
convolution runs in the blocked layout and the result is unpacked to NCHW::

    data_vec[n, C/ic_bn, Hp, Wp, ic_bn]              = pad(data)[n, c, y, x]              (padding folded in)
    kernel_vec[O/oc_bn, C/ic_bn, KH, KW, ic_bn, oc_bn] = kernel[o, c, ry, rx]
    conv[n, O/oc_bn, OH, OW, oc_bn]                   = conv2d_NCHWc(data_vec, kernel_vec)  (tag conv2d_NCHWc)
    out[n, o, y, x]                                   = conv[n, o // oc_bn, y, x, o % oc_bn] (tag injective)

Schedule (:func:`schedule_conv2d_NCHWc`, TVM's ``_schedule_conv_NCHWc``): the output is computed in register tiles
of ``reg_n`` output columns x ``oc_bn`` output channels. For each tile the accumulator (the conv stage itself when
element-wise consumers follow, else a ``cache_write`` copy) is computed inside the tile loop with the reduction
loops ``ic_outer, kh, kw, ic_inner`` outside, then ``reg_n`` unrolled columns, then ``oc_bn`` vectorized channels:
every step is one vector load of packed weights and ``reg_n`` fused multiply-adds with broadcast inputs, and after
unrolling every accumulator access has a constant offset, so the tile lives in vector registers. Tiles run in
parallel over ``(batch, output-channel block, output row)``. The unpack and any fused element-wise chain are inlined
into the tile's write-out. ``oc_bn`` is the vector width (one register per column), ``reg_n`` the largest divisor of
the output width that leaves room for the weights vector in the register file.
"""

from ...te.operation import compute
from ...te.tensor import ComputeOp
from .. import tag as _tag
from ..nn.conv2d import _finish, conv2d_NCHWc, pad_tuple
from ..nn.pad import pad
from ..utils import (
    create_schedule_for,
    fused_output,
    get_const_tuple,
    largest_divisor,
    output_ops,
    traverse_inline,
    vector_lanes,
)
from .injective import schedule_injective_from_existing

__all__ = ["conv2d_nchw", "schedule_conv2d_nchw", "schedule_conv2d_NCHWc", "conv_blocking", "pack_data",
           "pack_kernel"]


def conv_blocking(in_channels, out_channels, out_width, lanes):
    """``(ic_bn, oc_bn, reg_n)`` for a convolution on a machine with ``lanes`` float lanes per vector register."""
    oc_bn = largest_divisor(out_channels, lanes)
    ic_bn = largest_divisor(in_channels, oc_bn)
    registers = 32 if lanes >= 16 else 16
    reg_n = largest_divisor(out_width, max(1, registers - 4))
    return ic_bn, oc_bn, reg_n


def pack_data(data, ic_bn, padding):
    """NCHW ``data`` padded by ``(top, left, bottom, right)`` and packed to NCHW[ic_bn]c (tag ``injective,data_vec``).
    """
    n, c, h, w = get_const_tuple(data.shape)
    top, left, bottom, right = padding
    padded = pad(data, (0, 0, top, left), (0, 0, bottom, right), name="data_pad") if any(padding) else data
    shape = (n, c // ic_bn, h + top + bottom, w + left + right, ic_bn)
    return compute(shape, lambda nn, cc, y, x, cb: padded[nn, cc * ic_bn + cb, y, x], name="data_vec",
                   tag=f"{_tag.INJECTIVE},data_vec")


def pack_kernel(kernel, ic_bn, oc_bn):
    """OIHW ``kernel`` packed to OIHW[ic_bn]i[oc_bn]o (tag ``injective,kernel_vec``)."""
    o, c, kh, kw = get_const_tuple(kernel.shape)
    shape = (o // oc_bn, c // ic_bn, kh, kw, ic_bn, oc_bn)
    return compute(shape, lambda oc, ic, y, x, ib, ob: kernel[oc * oc_bn + ob, ic * ic_bn + ib, y, x],
                   name="kernel_vec", tag=f"{_tag.INJECTIVE},kernel_vec")


def conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype=None, target=None):
    """NCHW/OIHW convolution computed in packed channel blocks (see the module docstring).

    Returns
    -------
    out : te.Tensor
        ``(N, O, OH, OW)``; its producer is the ``conv2d_NCHWc`` stage.
    """
    out_dtype = out_dtype or data.dtype
    n, c, h, w = get_const_tuple(data.shape)
    o, _, kh, kw = get_const_tuple(kernel.shape)
    padding = pad_tuple(padding)
    sw = strides if isinstance(strides, int) else strides[1]
    dw = dilation if isinstance(dilation, int) else dilation[1]
    ow = (w + padding[1] + padding[3] - dw * (kw - 1) - 1) // sw + 1
    ic_bn, oc_bn, _ = conv_blocking(c, o, ow, vector_lanes(target, out_dtype))
    data_vec = pack_data(data, ic_bn, padding)
    kernel_vec = pack_kernel(kernel, ic_bn, oc_bn)
    conv = conv2d_NCHWc(data_vec, kernel_vec, strides, 0, dilation, out_dtype)
    if conv.dtype != out_dtype:  # float16: the cast stage follows the conv
        conv = conv.op.input_tensors[0]
    _, _, oh, owidth, _ = get_const_tuple(conv.shape)
    out = compute((n, o, oh, owidth), lambda nn, cc, y, x: conv[nn, cc // oc_bn, y, x, cc % oc_bn],
                  name="conv2d_nchw_unpack", tag=f"{_tag.INJECTIVE},unpack_nchwc")
    return _finish(out, out_dtype, "conv2d_nchw")


def _schedule_packing(s, tensor):
    """Run a packing stage (data_vec / kernel_vec) in parallel over its outer axes, its padding inlined."""
    op = tensor.op
    if not isinstance(op, ComputeOp) or not op.tag.endswith(("data_vec", "kernel_vec")):
        return
    for t in op.input_tensors:
        if isinstance(t.op, ComputeOp) and _tag.is_injective(t.op.tag):
            s[t.op].compute_inline()
    axes = list(s[op].op.axis)
    fused = s[op].fuse(*axes[:3])
    s[op].parallel(fused)


def _tile_nchwc(stage, reg_n):
    """Tile a 5-D NCHW[x]c stage: ``(n, c_chunk, y)`` fused and parallel, ``x`` split by ``reg_n``, the channel
    block vectorized. Returns the column-chunk loop (where the accumulator is computed)."""
    bn, bc, by, bx, bb = stage.op.axis
    x_chunk, x_block = stage.split(bx, factor=reg_n)
    stage.reorder(bn, bc, by, x_chunk, x_block, bb)
    stage.vectorize(bb)
    stage.parallel(stage.fuse(bn, bc, by))
    return x_chunk


def _tile_nchw(stage, oc_bn, reg_n):
    """Tile a 4-D NCHW stage that writes a conv tile back: channels split by ``oc_bn``, columns by ``reg_n``, both
    unrolled (every read of the accumulator tile then has a constant offset, so the tile stays in registers)."""
    bn, bcc, by, bx = stage.op.axis
    bc, bb = stage.split(bcc, factor=oc_bn)
    x_chunk, x_block = stage.split(bx, factor=reg_n)
    stage.reorder(bn, bc, by, x_chunk, bb, x_block)
    stage.unroll(bb)
    stage.unroll(x_block)
    stage.parallel(stage.fuse(bn, bc, by))
    return x_chunk


def _schedule_nchwc(s, conv_op, outs, lanes, target):
    """Schedule the ``conv2d_NCHWc`` stage ``conv_op`` of the group ``outs``."""
    conv = conv_op.output(0)
    data_vec, kernel_vec = conv_op.input_tensors[:2]
    _schedule_packing(s, data_vec)
    _schedule_packing(s, kernel_vec)
    if isinstance(data_vec.op, ComputeOp) and data_vec.op.tag.endswith(",pad"):
        s[data_vec.op].compute_inline()  # a packed input padded by conv2d_NCHWc itself
    shape = get_const_tuple(conv.shape)
    n, oc_chunk, oh, ow, oc_bn = shape
    registers = 32 if lanes >= 16 else 16
    reg_n = largest_divisor(ow, max(1, (registers - 4) // max(1, oc_bn // lanes)))
    unpacked = (n, oc_chunk * oc_bn, oh, ow)
    out = fused_output(s, conv_op, outs, lambda t: get_const_tuple(t.shape) in (shape, unpacked))
    if out is None or out.op is conv_op:
        acc = s.cache_write(conv, "local")
        scope = _tile_nchwc(s[conv], reg_n)
        stage = s[conv]
    else:
        acc = conv
        s[conv].set_scope("local")
        stage = s[out]
        tile = _tile_nchwc if len(shape) == len(out.shape) else None
        scope = tile(stage, reg_n) if tile else _tile_nchw(stage, oc_bn, reg_n)
    s[acc].compute_at(stage, scope)
    an, ac, ay, ax, ab = s[acc].op.axis
    ico, rkh, rkw, ici = s[acc].op.reduce_axis
    s[acc].reorder(an, ac, ay, ico, rkh, rkw, ici, ax, ab)
    s[acc].unroll(ax)
    s[acc].vectorize(ab)
    for op in output_ops(outs):
        if op is not conv_op and (out is None or op is not out.op):
            schedule_injective_from_existing(s, op.output(0), target)


def schedule_conv2d_NCHWc(outs, target=None):  # noqa: N802  (TVM's name)
    """Schedule a group anchored by a ``conv2d_NCHWc`` stage (see the module docstring).

    Parameters
    ----------
    outs : list of te.Tensor
        The group's outputs.
    target : Target or str, optional

    Returns
    -------
    s : Schedule
    """
    s = create_schedule_for(outs)
    lanes = vector_lanes(target, "float32")

    def callback(op):
        if op.tag == "conv2d_NCHWc":
            _schedule_nchwc(s, op, outs, lanes, target)

    traverse_inline(s, output_ops(outs), callback)
    return s


schedule_conv2d_nchw = schedule_conv2d_NCHWc
