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
loops ``ic_outer, kh, ic_inner, kw`` outside (``kw`` unrolled; for a 1x1 kernel ``ic_inner`` unrolled instead), then
``reg_n`` unrolled columns, then ``oc_bn`` vectorized channels: every step is one vector load of packed weights and
``reg_n`` fused multiply-adds with broadcast inputs, neighbouring columns share the inputs of neighbouring taps, and
after unrolling every accumulator access has a constant offset, so the tile lives in vector registers. Tiles run in
parallel over ``(batch, output-channel block, output row)``. The unpack and any fused element-wise chain are inlined
into the tile's write-out. Given blocked data (``conv2d_NCHWc`` called directly, as after AlterOpLayout), the padding
is read through guards inlined into the tile loop, or, when a block has fewer channels than a vector (the 3-channel
stem), copied padded first, so the short inner loops carry no guard; the tile loop is hinted for
``tir.LoopPartition``, which peels the first and last tiles (padding, columns past the edge) so the others run
without those guards. ``oc_bn`` is the vector width (one register per column), ``reg_n`` the number of columns
:func:`register_tile` picks from the target's register file (8, or 14 with AVX-512 where 8 does not divide the
width); a 1x1 kernel's tile spans several channel blocks (:func:`pointwise_tile`: 2 columns x 4 blocks).

Tuning (:mod:`kiln.autotvm`): the templates ``conv2d_NCHWc.x86`` (the blocked convolution AlterOpLayout makes)
and ``group_conv2d_NCHWc.x86`` (its grouped form)
declares two knobs, ``tile_ow`` (the register tile's columns, a split of the output width) and ``reduce_inner``
(``"kw"``: the kernel's taps innermost and unrolled, or ``"ic"``: the block's input channels). Their fallback values
are the choices above, so an untuned build is the hand-chosen schedule. The channel blocks are not knobs: they
are the layout AlterOpLayout chose before the kernel exists as a task.
"""

import math

from ...autotvm.task import (
    FallbackConfigEntity,
    OtherOptionEntity,
    SplitEntity,
    register_topi_compute,
    register_topi_schedule,
)
from ...te.operation import compute
from ...te.tensor import ComputeOp
from .. import tag as _tag
from ..nn.conv2d import _finish, conv2d, conv_out_size, pad_tuple
from ..nn.conv2d import conv2d_NCHWc as _nn_conv2d_NCHWc
from ..nn.pad import pad
from ..nn.utils import get_pad_tuple
from ..utils import (
    fused_output,
    get_const_tuple,
    largest_divisor,
    output_ops,
    resolve_target,
    schedule_anchored,
    vector_lanes,
)
from .injective import schedule_injective_from_existing, worth_parallel
from .micro_kernel import (
    MIN_TILE_ACCUMULATORS,
    accumulator_budget,
    channel_block,
    latency_accumulators,
    pointwise_tile,
    register_tile,
)

__all__ = ["conv2d_nchw", "conv2d_NCHWc", "schedule_conv2d_nchw", "schedule_conv2d_NCHWc", "conv_blocking",
           "flat_map_preferred",
           "register_tile", "deeper_tile", "conv2d_alter_layout", "pack_data", "pack_kernel", "set_fallback_knobs"]


def conv_blocking(in_channels, out_channels, out_width, target=None, dtype="float32", kernel_width=1):
    """``(ic_bn, oc_bn, reg_n)`` for a convolution computing in ``dtype`` on ``target``: output channels in blocks of
    at most one vector, input channels likewise (each by :func:`~kiln.topi.x86.micro_kernel.channel_block`), columns
    by :func:`register_tile` (for a kernel ``kernel_width`` taps wide).

    Both block sizes depend only on their own channel count, so a convolution reads its input in the block size its
    producer wrote it in (``C`` channels in ``NCHW{channel_block(C)}c``) and chains of blocked convolutions
    need no layout transform between them. (TVM's fallback caps ``ic_bn`` at ``oc_bn``, which makes a 32 -> 8 channel
    convolution read ``NCHW8c`` from a producer writing ``NCHW16c``.) ``ic_bn`` only splits the reduction, so the
    kernel is as fast either way."""
    target = resolve_target(target)
    oc_bn = channel_block(out_channels, target, dtype)
    ic_bn = channel_block(in_channels, target, dtype)
    return ic_bn, oc_bn, register_tile(out_width, oc_bn, target, dtype, kernel_width)


def flat_map_preferred(kernel_shape, strides, padding, target=None) -> bool:
    """Whether an NCHW convolution runs better over its flattened map (:func:`kiln.topi.nn.group_conv2d_nchw`)
    than blocked: a 1x1 kernel at unit strides without padding whose output channels block only oddly (YOLO's
    255-channel heads in blocks of 15, or 257 channels in blocks of 1, leave every vector partial; the flat map's
    vectors are whole)."""
    oc_bn = channel_block(int(kernel_shape[0]), target)
    odd = oc_bn == 1 or oc_bn & (oc_bn - 1) != 0  # a prime channel count above a vector blocks in 1s
    one_by_one = tuple(int(d) for d in kernel_shape[2:]) == (1, 1) and tuple(strides) == (1, 1)
    return one_by_one and not any(pad_tuple(padding)) and odd


def conv2d_alter_layout(attrs, data_shape, kernel_shape, target=None):
    """The blocked layouts the x86 schedule prefers for an NCHW/OIHW ``nn.conv2d`` (TVM's x86
    ``_alter_conv2d_layout``), or None when the call does not qualify (other layouts, or groups whose channels are
    not whole blocks of at least half a vector). A depthwise convolution (one filter per channel) is blocked like the
    convolutions around it, with the kernel OIHW1i[b]o, so a mobile network's blocks stay in the blocked layout; a
    grouped one (AlexNet's two groups) too, each output block reading the input blocks of its group.

    With ``data_layout="NCHW{ic_bn}c"``, ``kernel_layout="OIHW{ic_bn}i{oc_bn}o"`` and ``out_layout="NCHW{oc_bn}c"``
    topi computes the convolution directly on blocked tensors (``conv2d_NCHWc``): no packing at run time once
    FoldConstant has transformed the constant weights, and element-wise consumers stay in the blocked layout. A
    Relay-level ``FTVMAlterOpLayout`` for ``nn.conv2d`` returns ``relay.nn.conv2d(*inputs, **dict(attrs, **new))``.

    Returns
    -------
    new : dict or None
        ``{"data_layout": ..., "kernel_layout": ..., "out_layout": ...}``.
    """
    if attrs.data_layout != "NCHW" or attrs.kernel_layout != "OIHW" or (attrs.out_layout or "NCHW") != "NCHW":
        return None
    c, o, kw, w = int(data_shape[1]), int(kernel_shape[0]), int(kernel_shape[3]), int(data_shape[3])
    if attrs.groups == c == o and int(kernel_shape[1]) == 1:  # depthwise: the channels' blocks, one filter each
        block = channel_block(c, target)
        return {"data_layout": f"NCHW{block}c", "kernel_layout": f"OIHW1i{block}o", "out_layout": f"NCHW{block}c"}
    (_, sw), (_, dw) = (attrs.strides, attrs.dilation)
    padding = pad_tuple(attrs.padding)
    ow = conv_out_size(w, kw, sw, dw, padding[1], padding[3])
    ic_bn, oc_bn, _ = conv_blocking(c, o, ow, target)
    if attrs.groups == 1 and flat_map_preferred(kernel_shape, attrs.strides, attrs.padding, target):
        return None
    groups = attrs.groups
    if groups != 1 and (c // groups % ic_bn or o // groups % oc_bn or min(ic_bn, oc_bn) < vector_lanes(target) // 2):
        return None  # groups of a few channels stay NCHW, where their rows are the vectors
    return {"data_layout": f"NCHW{ic_bn}c", "kernel_layout": f"OIHW{ic_bn}i{oc_bn}o", "out_layout": f"NCHW{oc_bn}c"}


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
    sw = strides if isinstance(strides, int) else strides[1]
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    # "SAME"/"VALID" and per-axis forms, resolved against the dilated window as TVM does
    padding = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    ow = conv_out_size(w, kw, sw, dw, padding[1], padding[3])
    ic_bn, oc_bn, _ = conv_blocking(c, o, ow, target, out_dtype)
    data_vec = pack_data(data, ic_bn, padding)
    kernel_vec = pack_kernel(kernel, ic_bn, oc_bn)
    conv = _nn_conv2d_NCHWc(data_vec, kernel_vec, strides, 0, dilation, out_dtype=out_dtype)
    if conv.dtype != out_dtype:  # float16: the cast stage follows the conv
        conv = conv.op.input_tensors[0]
    _, _, oh, owidth, _ = get_const_tuple(conv.shape)
    out = compute((n, o, oh, owidth), lambda nn, cc, y, x: conv[nn, cc // oc_bn, y, x, cc % oc_bn],
                  name="conv2d_nchw_unpack", tag=f"{_tag.INJECTIVE},unpack_nchwc")
    return _finish(out, out_dtype, "conv2d_nchw")


def _schedule_packing(s, tensor):
    """Run a packing stage (data_vec / kernel_vec) in parallel over its outer axes, its padding inlined.

    The kernel is packed one ``oc_bn x ic_bn`` block of filters per parallel iteration, the ``oc_bn`` filters
    unrolled innermost: each step stores a contiguous vector gathered from ``oc_bn`` rows (the other orders make LLVM
    emit vector scatters, several times slower)."""
    op = tensor.op
    if not isinstance(op, ComputeOp) or not op.tag.endswith(("data_vec", "kernel_vec")):
        return
    for t in op.input_tensors:
        if isinstance(t.op, ComputeOp) and _tag.is_injective(t.op.tag):
            s[t.op].compute_inline()
    stage = s[op]
    if op.tag.endswith("kernel_vec"):
        oc, ic, _, _, _, ob = stage.op.axis
        fused = stage.fuse(oc, ic)
        stage.unroll(ob)
    else:
        fused = stage.fuse(*list(stage.op.axis)[:3])
    if worth_parallel(op.output(0).shape):
        stage.parallel(fused)


def _tile_nchwc(stage, reg_n, oc_tile=1, oh_tile=1):
    """Tile a 5-D NCHW[x]c stage: ``x`` split by ``reg_n`` (unrolled), the channel block vectorized, and with
    ``oc_tile``/``oh_tile`` above 1 that many channel blocks / output rows per tile (inside the column chunk).
    Returns the fused ``(n, c_chunk, y)`` row loop and the column-chunk loop (where the accumulator tile is
    computed)."""
    bn, bc, by, bx, bb = stage.op.axis
    x_chunk, x_block = stage.split(bx, factor=reg_n)
    inner = []
    if oc_tile > 1:
        bc, bci = stage.split(bc, factor=oc_tile)
        inner.append(bci)
    if oh_tile > 1:
        by, byi = stage.split(by, factor=oh_tile)
        inner.append(byi)
    stage.reorder(bn, bc, by, x_chunk, *inner, x_block, bb)
    stage.unroll(x_block)
    stage.vectorize(bb)
    return stage.fuse(bn, bc, by), x_chunk


def _write_rows(stage, oc_bn, oc_tile=1, oh_tile=1):
    """Arrange the stage that writes the convolution's output rows (with the element-wise chain inlined): one
    parallel loop over ``(n, channel block, y)`` rows (``oc_tile`` channel blocks and ``oh_tile`` rows per step),
    inside which the rows' convolution is computed."""
    axes = list(stage.op.axis)
    if len(axes) == 5:  # NCHW[x]c: the channel block is innermost and contiguous on both sides
        bn, bc, by, bx, bb = axes
        inner = []
        if oc_tile > 1:
            bc, bci = stage.split(bc, factor=oc_tile)
            inner.append(bci)
        if oh_tile > 1:
            by, byi = stage.split(by, factor=oh_tile)
            inner.append(byi)
        if inner:
            stage.reorder(bn, bc, by, *inner, bx, bb)
        stage.vectorize(bb)
    else:  # NCHW: a transposing copy out of the row buffer
        bn, c, by, bx = axes
        bc, bb = stage.split(c, factor=oc_bn * oc_tile)
        if oh_tile > 1:
            by, byi = stage.split(by, factor=oh_tile)
            stage.reorder(bn, bc, by, bb, byi, bx)
        else:
            stage.reorder(bn, bc, by, bb, bx)
    row = stage.fuse(bn, bc, by)
    stage.parallel(row)
    return row


MAX_UNROLLED_BODY = 512
"""The most multiply-adds (accumulators x unrolled reduction steps) a tuned config may unroll into one body."""


def _register_tile_knobs(cfg, shape, regs, reg_n, kernel_width, reduce_block, target, oc_tile=None):
    """Declare the knobs of the blocked schedule of an output of ``shape`` on ``cfg`` (the fallback: today's
    choices) and return their values ``(columns, channel blocks, rows, innermost reduction loop, unroll the next
    reduction loop too, input channels per inner reduction chunk, kernel rows outside the channel chunks)``.

    The register tile is ``tile_ow`` output columns x ``tile_oc`` channel blocks (of ``regs`` vectors each) x
    ``tile_oh`` output rows; ``multi_filter`` keeps the tiles whose accumulators fit the register budget of
    :func:`~kiln.topi.x86.micro_kernel.accumulator_budget` (and today's tile, whatever its size). The reduction over
    a block's ``reduce_block`` input channels runs in chunks of ``tile_ic_block`` (the weights one chunk touches stay in
    L1 across the kernel's rows), with the kernel's rows inside the chunks or, ``kh_outside``, outside the
    channel blocks (one row of input reused across all of them)."""
    _, oc_chunk, oh, ow, _ = shape
    budget = max(1, accumulator_budget(target))
    cfg.define_split("tile_ow", ow, num_outputs=2, max_factor=32)  # past 32 unrolled columns: spills, slow builds
    cfg.define_split("tile_oc", oc_chunk, num_outputs=2, max_factor=max(1, budget // regs))
    cfg.define_split("tile_oh", oh, num_outputs=2, max_factor=4)
    cfg.define_split("tile_ic_block", reduce_block, num_outputs=2)
    cfg.define_knob("reduce_inner", ["kw", "ic"])
    cfg.define_knob("unroll_outer", [False, True])
    cfg.define_knob("kh_outside", [False, True])

    def tile(e):
        return e["tile_ow"].size[-1], e["tile_oc"].size[-1], e["tile_oh"].size[-1]

    def fits(e):
        accumulators = math.prod(tile(e)) * regs
        # the next reduction loop unrolled too: only while the straight-line body stays small enough to compile
        # in seconds (a 14 x 2 x 2 tile over 16 channels and 3 taps would be 2688 unrolled multiply-adds; past
        # ~500, an LLVM build of a candidate takes tens of seconds)
        body = accumulators * kernel_width * e["tile_ic_block"].size[-1] if e["unroll_outer"].val else 0
        return (accumulators <= budget or tile(e) == (reg_n, 1, 1)) and body <= MAX_UNROLLED_BODY

    cfg.multi_filter(fits)
    if cfg.is_fallback:
        set_fallback_knobs(cfg, (oc_chunk, oh, ow), reg_n, kernel_width, reduce_block, regs, target, oc_tile)
    return (*tile(cfg), cfg["reduce_inner"].val, cfg["unroll_outer"].val, cfg["tile_ic_block"].size[-1],
            cfg["kh_outside"].val)


def deeper_tile(blocks, reg_n, regs=1, target=None):
    """``(channel blocks, rows)`` of the default register tile for an output of ``blocks`` = ``(channel blocks,
    rows, columns)`` whose columns tile by ``reg_n`` (:func:`register_tile`) of ``regs`` vectors: one channel
    block and one row, unless the columns hold under half the accumulators that hide the FMA latency (a prime width:
    13 columns tile by 1 within AVX2's register budget; a chain of one accumulator leaves the FMA pipes idle 7 cycles
    of 8, and SqueezeNet's 13x13 convolutions ran at 25 GFLOP/s on an AVX2 Zen 3). Then the tile takes the most
    channel blocks, then rows, dividing theirs within the register budget (13x13 to 192 channels: 1 x 12 x 1). Tiles
    of several channel blocks are not the default elsewhere: (4 columns x 2 blocks) for (8 x 1) made VGG-19's
    convolutions half as fast on that CPU."""
    oc_chunk, oh, _ = blocks
    target = resolve_target(target)
    columns = reg_n * regs
    if 2 * columns >= max(latency_accumulators(target), MIN_TILE_ACCUMULATORS):
        return 1, 1
    budget = accumulator_budget(target)
    oc_tile = largest_divisor(oc_chunk, max(1, budget // columns))
    oh_tile = largest_divisor(oh, max(1, min(4, budget // (columns * oc_tile))))
    return oc_tile, oh_tile


def set_fallback_knobs(cfg, blocks, reg_n, kernel_width, reduce_block=1, regs=1, target=None, oc_tile=None):
    """Give ``cfg`` the hand-chosen values of the blocked schedule's knobs for an output of ``blocks`` =
    ``(channel blocks, rows, columns)`` and ``reduce_block`` input channels per block: tiles of ``reg_n`` columns of
    ``regs`` vectors, of one channel block and one row unless that leaves the tile too few accumulators
    (:func:`deeper_tile`) or ``oc_tile`` blocks are given (a 1x1 kernel's, :func:`pointwise_tile`), the kernel's
    taps innermost unless it is one tap wide, the block's channels in one chunk inside the kernel's rows."""
    oc_chunk, oh, ow = blocks
    oc_tile, oh_tile = (oc_tile, 1) if oc_tile else deeper_tile(blocks, reg_n, regs, target)
    cfg["tile_ow"] = SplitEntity([-(-ow // reg_n), reg_n])
    cfg["tile_oc"] = SplitEntity([oc_chunk // oc_tile, oc_tile])
    cfg["tile_oh"] = SplitEntity([oh // oh_tile, oh_tile])
    cfg["tile_ic_block"] = SplitEntity([1, reduce_block])
    cfg["reduce_inner"] = OtherOptionEntity("kw" if kernel_width > 1 else "ic")
    cfg["unroll_outer"] = OtherOptionEntity(False)
    cfg["kh_outside"] = OtherOptionEntity(False)


def _schedule_nchwc(s, conv_op, outs, lanes, target, cfg):
    """Schedule the ``conv2d_NCHWc`` stage ``conv_op`` of the group ``outs``.

    The register tile is a ``local`` cache of ``reg_n`` columns x ``oc_bn`` channels computed inside the conv
    stage's column-chunk loop; the conv stage copies tiles out with vector stores. When one output of the group
    reads the convolution (through inlined element-wise stages and the NCHW unpacking), the conv stage is computed
    one output row at a time inside that output's parallel row loop, into a small row buffer the output then reads.
    """
    conv = conv_op.output(0)
    data_vec, kernel_vec = conv_op.input_tensors[:2]
    _schedule_packing(s, data_vec)
    _schedule_packing(s, kernel_vec)
    if isinstance(data_vec.op, ComputeOp) and data_vec.op.tag.endswith(",pad"):  # padded by conv2d_NCHWc itself
        if get_const_tuple(data_vec.shape)[-1] < lanes:
            # few input channels per block (the 3-channel stem): a guard per tap would cost more than a padded copy
            schedule_injective_from_existing(s, data_vec, target)
        else:
            s[data_vec.op].compute_inline()
    shape = get_const_tuple(conv.shape)
    n, oc_chunk, oh, ow, oc_bn = shape
    regs = max(1, oc_bn // lanes)  # vector registers per column of the tile
    kernel_h, kernel_w, ic_bn = get_const_tuple(kernel_vec.shape)[2:5]
    pointwise = pointwise_tile(ow, oc_chunk, oc_bn, target) if kernel_h == kernel_w == 1 else None
    reg_n = pointwise[0] if pointwise else register_tile(ow, oc_bn, target, kernel_width=kernel_w, partial=True)
    reg_n, oc_tile, oh_tile, reduce_inner, unroll_outer, ic_tile, kh_outside = _register_tile_knobs(
        cfg, shape, regs, reg_n, kernel_w, ic_bn, target, pointwise[1] if pointwise else None)
    unpacked = (n, oc_chunk * oc_bn, oh, ow)
    out = fused_output(s, conv_op, outs, lambda t: get_const_tuple(t.shape) in (shape, unpacked))
    acc = s.cache_write(conv, "local")
    row, x_chunk = _tile_nchwc(s[conv], reg_n, oc_tile, oh_tile)
    # the first and last tiles of a row read padding or run past the edge: peeled off, the others run unguarded
    s[conv].pragma(x_chunk, "loop_partition_hint")
    if out is not None and out.op is not conv_op:
        s[conv].compute_at(s[out], _write_rows(s[out], oc_bn, oc_tile, oh_tile))
    else:
        s[conv].parallel(row)
    s[acc].compute_at(s[conv], x_chunk)
    an, ac, ay, ax, ab = s[acc].op.axis
    ico, rkh, rkw, ici = s[acc].op.reduce_axis
    chunks = []
    if ic_tile < get_const_tuple(kernel_vec.shape)[4]:
        icm, ici = s[acc].split(ici, factor=ic_tile)
        chunks.append(icm)
    channel_loops = [rkh, ico, *chunks] if kh_outside else [ico, *chunks, rkh]
    # several channel blocks or rows per tile: their loops go inside the reduction, so each weight vector and each
    # broadcast input feeds several multiply-adds
    blocks = [a for a, size in ((ac, oc_tile), (ay, oh_tile)) if size > 1]
    outer = [a for a, size in ((an, 1), (ac, oc_tile), (ay, oh_tile)) if size == 1]
    tile = (*blocks, ax, ab)
    if reduce_inner == "kw":
        # the kernel's taps along a row innermost and unrolled: neighbouring columns read overlapping inputs, so
        # each broadcast input feeds several multiply-adds (3x3 layers ~25% faster than with the channels inside)
        s[acc].reorder(*outer, *channel_loops, ici, rkw, *tile)
        s[acc].unroll(rkw)
    else:
        # a 1x1 kernel: the block's input channels unrolled (one weight vector per channel, ~8% faster)
        s[acc].reorder(*outer, *channel_loops, rkw, ici, *tile)
        s[acc].unroll(ici)
    if unroll_outer:  # a tuned choice: the next reduction loop out unrolled too
        s[acc].unroll(ici if reduce_inner == "kw" else rkw)
    for axis in blocks:
        s[acc].unroll(axis)
    s[acc].unroll(ax)
    s[acc].vectorize(ab)
    for op in output_ops(outs):
        if op is not conv_op and (out is None or op is not out.op):
            schedule_injective_from_existing(s, op.output(0), target)


def schedule_conv2d_NCHWc(outs, target=None, cfg=None):  # noqa: N802  (TVM's name)
    """Schedule a group anchored by a ``conv2d_NCHWc`` stage (see the module docstring).

    Parameters
    ----------
    outs : list of te.Tensor
        The group's outputs.
    target : Target or str, optional
    cfg : ConfigEntity, optional
        The knobs' values (:mod:`kiln.autotvm`); the hand-chosen schedule when None.

    Returns
    -------
    s : Schedule
    """
    lanes = vector_lanes(target, "float32")
    cfg = FallbackConfigEntity() if cfg is None else cfg
    return schedule_anchored(outs, ("conv2d_NCHWc",), lambda s, op: _schedule_nchwc(s, op, outs, lanes, target, cfg))


schedule_conv2d_nchw = schedule_conv2d_NCHWc


def conv2d_NCHWc(data, kernel, strides, padding, dilation, layout, out_layout, out_dtype="float32"):  # noqa: N802
    """TVM's ``topi.x86.conv2d_NCHWc``: the blocked convolution of :func:`kiln.topi.nn.conv2d_NCHWc`, its groups
    read from the shapes (``data``'s input channel blocks over the kernel's), schedulable by
    :func:`schedule_conv2d_NCHWc`.

    Returns
    -------
    out : te.Tensor
        NCHW[oc_bn]c, tagged ``conv2d_NCHWc``.
    """
    ic_chunk = get_const_tuple(data.shape)[1]
    _, k_ic_chunk, kh, kw, _, _ = get_const_tuple(kernel.shape)
    groups = ic_chunk // k_ic_chunk if k_ic_chunk and ic_chunk % k_ic_chunk == 0 else 1
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    # "SAME"/"VALID" and per-axis forms, resolved against the dilated window as TVM does
    padding = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    return _nn_conv2d_NCHWc(data, kernel, strides, padding, dilation, layout, out_layout, out_dtype, groups=groups)


@register_topi_compute("conv2d_NCHWc.x86")
def conv2d_NCHWc_template(cfg, data, kernel, strides, padding, dilation, data_layout, kernel_layout, out_dtype,  # noqa: N802
                          out_layout):
    """The compute of the tuning template ``conv2d_NCHWc.x86``: ``topi.nn.conv2d`` on blocked layouts (the
    knobs are all in the schedule)."""
    return conv2d(data, kernel, strides, padding, dilation, data_layout, kernel_layout, out_dtype, groups=1,
                  out_layout=out_layout)


@register_topi_schedule("conv2d_NCHWc.x86")
def schedule_conv2d_NCHWc_template(cfg, outs, target):  # noqa: N802
    """The schedule of the tuning template ``conv2d_NCHWc.x86``."""
    return schedule_conv2d_NCHWc(outs, target, cfg)


@register_topi_compute("group_conv2d_NCHWc.x86")
def group_conv2d_NCHWc_template(cfg, data, kernel, strides, padding, dilation, data_layout, kernel_layout,  # noqa: N802
                                out_dtype, groups, out_layout):
    """The compute of the tuning template ``group_conv2d_NCHWc.x86``: ``topi.nn.conv2d`` of a grouped convolution
    on blocked layouts (each group whole blocks)."""
    return conv2d(data, kernel, strides, padding, dilation, data_layout, kernel_layout, out_dtype, groups=groups,
                  out_layout=out_layout)


@register_topi_schedule("group_conv2d_NCHWc.x86")
def schedule_group_conv2d_NCHWc_template(cfg, outs, target):  # noqa: N802
    """The schedule of the tuning template ``group_conv2d_NCHWc.x86`` (the blocked schedule)."""
    return schedule_conv2d_NCHWc(outs, target, cfg)
