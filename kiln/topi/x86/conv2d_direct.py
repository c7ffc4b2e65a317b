"""x86 schedule of the direct convolution computes (``topi.nn.conv2d``): NHWC/HWIO, grouped and depthwise NCHW, and
any layout computed through NCHW.

Like the packed NCHW schedule (:mod:`kiln.topi.x86.conv2d`), the output is computed in register tiles: one output
axis is vectorized and another unrolled, and each tile accumulates in a local buffer computed inside the tile loop
with the reduction loops outside, so the accumulators stay in registers and every step is a vector multiply-add.
What the layouts change is which axes those are:

* NHWC: the output channels are vectorized (the HWIO kernel is contiguous along them) and a block of output columns
  is unrolled, each column one broadcast input value;
* NCHW (grouped, depthwise, or another layout transformed to NCHW): the output columns are vectorized (contiguous
  input rows at stride 1) and a block of output channels is unrolled, each one broadcast kernel value; a kernel one
  column wide at unit strides is computed over the flattened map (:func:`kiln.topi.nn.group_conv2d_nchw`), which is
  vectorized instead;
* packed depthwise (NCHW[b]c, :func:`kiln.topi.nn.depthwise_conv2d_NCHWc`): the channel block is vectorized (one
  vector load of input and one of weights per tap, no broadcast) and up to 8 output columns unrolled (as many as the
  accumulator budget allows), the taps unrolled too, so neighbouring columns share the loads of their overlapping
  taps; its padding is read through guards inlined into the taps (one scalar branch per vector), not copied.
  Measured on ShuffleNet's and MobileNet's depthwise layers with AVX-512 (Zen 4), the two together run 1.5-2.6x
  faster than the former 2- to 4-column tiles over a padded copy.

Other padded and layout-transformed inputs are materialized once, in parallel, before the convolution, so its
inner loops read memory without bound checks. Element-wise consumers are inlined into the tile's write-out when
they keep the convolution's shape; otherwise the convolution is computed whole and the consumers scheduled as
injective stages.

Tuning (:mod:`kiln.autotvm`): the template ``depthwise_conv2d_NCHWc.x86`` declares ``tile_reg`` (the unrolled
block of the register tile, a split of its axis) and ``unroll_taps`` (whether the kernel's taps are unrolled); their
fallback values are the choices above. The other direct convolutions read the same knobs from a fallback config.
"""

from ...autotvm.task import (
    FallbackConfigEntity,
    OtherOptionEntity,
    SplitEntity,
    register_topi_compute,
    register_topi_schedule,
)
from ...te.tensor import ComputeOp
from .. import tag as _tag
from ..nn.conv2d import conv2d
from ..utils import (
    fused_output,
    get_const_tuple,
    largest_divisor,
    output_ops,
    schedule_anchored,
    vector_lanes,
)
from .injective import inline_outer_padding, schedule_injective_from_existing, vector_factor
from .micro_kernel import accumulator_budget, latency_accumulators

__all__ = ["schedule_conv2d_direct", "DIRECT_TAGS"]

DIRECT_TAGS = ("conv2d_nchw", "group_conv2d_nchw", "depthwise_conv2d_nchw", "conv2d_nhwc", "group_conv2d_nhwc",
               "depthwise_conv2d_NCHWc")


def _materialize_inputs(s, op, target, inline_padding=False):
    """Compute the padding / layout-transform producers of ``op`` at the top level, vectorized and in parallel,
    with their own injective producers inlined into them; with ``inline_padding``, a padding that leaves the
    innermost axis alone is inlined into ``op`` instead (:func:`~kiln.topi.x86.injective.inline_outer_padding`)."""
    for t in op.input_tensors:
        if not (isinstance(t.op, ComputeOp) and _tag.is_injective(t.op.tag)):
            continue
        if inline_padding and inline_outer_padding(s, t):
            continue
        stack, seen = list(t.op.input_tensors), set()
        while stack:
            x = stack.pop()
            if id(x.op) in seen or not (isinstance(x.op, ComputeOp) and _tag.is_injective(x.op.tag)):
                continue
            seen.add(id(x.op))
            s[x.op].compute_inline()
            stack.extend(x.op.input_tensors)
        schedule_injective_from_existing(s, t, target)


def _tiling(op, lanes, target):
    """``(reg_axis, reg, vec_axis, vec)``: output axes (indices) unrolled and vectorized, and their block sizes."""
    shape = get_const_tuple(op.output(0).shape)
    if len(shape) == 3:  # NCHW over the flattened map: whole vectors of it, the last one guarded
        vectors = 2 if shape[2] >= 4 * lanes else 1
        return 1, largest_divisor(shape[1], max(1, accumulator_budget(target) // vectors)), 2, vectors * lanes
    if op.tag == "depthwise_conv2d_NCHWc":  # the channel block is contiguous on every side
        # Two registers stay free for the input and the tap's weights. Past 8 columns (measured up to 14 on Zen 4),
        # a tile is no faster but its unrolled taps double the compile time of a 5x5 kernel.
        columns = min(8, accumulator_budget(target) // max(1, shape[4] // lanes) - 2)
        return 3, largest_divisor(shape[3], max(1, columns)), 4, shape[4]
    if op.tag.endswith("nhwc"):
        vec = vector_factor(shape[3], 2 * lanes) if shape[3] >= 2 * lanes else vector_factor(shape[3], lanes)
        vectors = max(1, vec // lanes)
        return 2, largest_divisor(shape[2], max(1, accumulator_budget(target) // vectors)), 3, vec
    vec = vector_factor(shape[3], lanes)
    return 1, largest_divisor(shape[1], latency_accumulators(target)), 3, vec


def _tile_knobs(cfg, op, shape, reg_axis, reg):
    """Declare the knobs of the direct schedule on ``cfg`` (the fallback: today's choices); returns the unrolled
    block and whether the taps are unrolled."""
    cfg.define_split("tile_reg", shape[reg_axis], num_outputs=2, max_factor=32)
    cfg.define_knob("unroll_taps", [True, False])
    if cfg.is_fallback:
        cfg["tile_reg"] = SplitEntity([-1, reg])
        # a few taps per output of a packed depthwise convolution: unrolled, the loop overhead would dominate
        cfg["unroll_taps"] = OtherOptionEntity(op.tag == "depthwise_conv2d_NCHWc")
    return cfg["tile_reg"].size[-1], cfg["unroll_taps"].val


def _schedule_direct(s, op, outs, target, lanes, cfg):
    _materialize_inputs(s, op, target, inline_padding=op.tag == "depthwise_conv2d_NCHWc")
    conv = op.output(0)
    shape = get_const_tuple(conv.shape)
    reg_axis, reg, vec_axis, vec = _tiling(op, lanes, target)
    reg, unroll_taps = _tile_knobs(cfg, op, shape, reg_axis, reg)
    out = fused_output(s, op, outs, lambda t: get_const_tuple(t.shape) == shape)
    if out is None or out.op is op:
        acc, stage = s.cache_write(conv, "local"), s[conv]
    else:
        acc, stage = conv, s[out]
        s[conv].set_scope("local")
    axes = list(stage.op.axis)
    outer, inner = [], {}
    for k, iv in enumerate(axes):
        if k in (reg_axis, vec_axis):
            o, inner[k] = stage.split(iv, factor=reg if k == reg_axis else vec)
            outer.append(o)
        else:
            outer.append(iv)
    stage.reorder(*outer, inner[reg_axis], inner[vec_axis])
    stage.parallel(stage.fuse(*outer[:-1]))
    stage.unroll(inner[reg_axis])
    (stage.vectorize if vec > 1 else stage.unroll)(inner[vec_axis])
    s[acc].compute_at(stage, outer[-1])
    a_axes = list(s[acc].op.axis)
    s[acc].reorder(*[iv for k, iv in enumerate(a_axes) if k not in (reg_axis, vec_axis)], *s[acc].op.reduce_axis,
                   a_axes[reg_axis], a_axes[vec_axis])
    if unroll_taps:
        for r in s[acc].op.reduce_axis:
            s[acc].unroll(r)
    s[acc].unroll(a_axes[reg_axis])
    (s[acc].vectorize if vec > 1 else s[acc].unroll)(a_axes[vec_axis])
    for o in output_ops(outs):
        if o is not op and (out is None or o is not out.op):
            if len(shape) == 3 and len(o.axis) == 4:
                _schedule_flat_rows(s, o.output(0), lanes)
            else:
                schedule_injective_from_existing(s, o.output(0), target)


def _schedule_flat_rows(s, out, lanes):
    """An NCHW output of a convolution computed over the flattened map, in whole vectors of that map too (its rows
    and the flat result's are the same memory order; a 14-wide row alone would be 2-lane vectors)."""
    stage = s[out]
    n, c, h, w = stage.op.axis
    outer, inner = stage.split(stage.fuse(h, w), factor=lanes)
    stage.parallel(stage.fuse(n, c))
    stage.vectorize(inner)


def schedule_conv2d_direct(outs, target=None, cfg=None):
    """Schedule a group anchored by a direct convolution (tags in :data:`DIRECT_TAGS`), with the knobs' values
    ``cfg`` (:mod:`kiln.autotvm`; the hand-chosen schedule when None).

    Returns
    -------
    s : Schedule
    """
    lanes = vector_lanes(target, "float32")
    cfg = FallbackConfigEntity() if cfg is None else cfg
    return schedule_anchored(outs, DIRECT_TAGS, lambda s, op: _schedule_direct(s, op, outs, target, lanes, cfg))


@register_topi_compute("depthwise_conv2d_NCHWc.x86")
def depthwise_conv2d_NCHWc_template(cfg, data, kernel, strides, padding, dilation, data_layout, kernel_layout,  # noqa: N802
                                    out_dtype, groups, out_layout):
    """The compute of the tuning template ``depthwise_conv2d_NCHWc.x86``: ``topi.nn.conv2d`` on the packed
    depthwise layouts."""
    return conv2d(data, kernel, strides, padding, dilation, data_layout, kernel_layout, out_dtype, groups=groups,
                  out_layout=out_layout)


@register_topi_schedule("depthwise_conv2d_NCHWc.x86")
def schedule_depthwise_conv2d_NCHWc_template(cfg, outs, target):  # noqa: N802
    """The schedule of the tuning template ``depthwise_conv2d_NCHWc.x86``."""
    return schedule_conv2d_direct(outs, target, cfg)
