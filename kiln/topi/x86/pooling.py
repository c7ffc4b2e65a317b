"""x86 schedule of 2-D pooling and global pooling (TVM's ``topi/x86/pooling.py``).

When the innermost axis is channels (NHWC, NCHW16c), the padding of the spatial axes is read through guards
inlined into the window loop: the vector runs along the unpadded channels, so a guard is one scalar test per vector,
cheaper than a padded copy (2.5-3x on ResNet- and ShuffleNet-sized max pools). A padding along the innermost axis
(NCHW's W) is materialized first, a vectorized, parallel copy, so the vector reads need no bound checks.

The output's innermost axis is split by the vector width; the window (``rv_h``, ``rv_w``) is reduced into a vector
accumulator computed inside that split, so each window tap is one vector maximum (or sum) over a row of outputs:
contiguous loads when the innermost axis is channels (NHWC, NCHW16c: a global pool adds one vector per pixel),
strided ones along W in NCHW. The other axes are fused into one parallel loop. An average's division, and any
element-wise chain after the pooling, is inlined into the output's loop.

Tuning (:mod:`kiln.autotvm`): the templates ``pool2d.x86`` and ``global_pool.x86`` declare ``tile_inner`` (the
split of the innermost axis: a power of two dividing it, up to four vectors), ``vectorize`` (whether that inner
part is vectorized) and ``parallel`` (whether the fused outer loop runs in parallel). Their fallback values are the
choices above.
"""

from ...autotvm.task import FallbackConfigEntity, OtherOptionEntity, register_topi_compute, register_topi_schedule
from ...te.tensor import ComputeOp
from .. import tag as _tag
from ..nn.pooling import global_pool, pool2d
from ..utils import (
    fused_output,
    get_const_tuple,
    output_ops,
    schedule_anchored,
    vector_lanes,
)
from .injective import (
    PARALLEL_MIN_ELEMENTS,
    inline_outer_padding,
    schedule_injective_from_existing,
    vector_factor,
    worth_parallel,
)

__all__ = ["schedule_pool", "inner_split_choices"]

POOL_TAGS = ("pool_max", "pool_sum", "global_pool_max", "global_pool_sum")


def inner_split_choices(extent, lanes, default) -> list:
    """The splits of an innermost axis of ``extent`` a template offers: powers of two dividing it up to four
    vectors of ``lanes``, and ``default``."""
    if not isinstance(extent, int):
        return [default]
    choices, f = {default, 1}, 2
    while f <= 4 * lanes and extent % f == 0:
        choices.add(f)
        f *= 2
    return sorted(choices)


def _pool_knobs(cfg, shape, lanes):
    """Declare the pooling knobs (module docstring) and return ``(inner split, vectorize, parallel)``."""
    v = vector_factor(shape[-1], lanes)
    cfg.define_knob("tile_inner", inner_split_choices(shape[-1], lanes, v))
    cfg.define_knob("vectorize", [True, False])
    cfg.define_knob("parallel", [True, False])
    if cfg.is_fallback:
        cfg["tile_inner"] = OtherOptionEntity(v)
        cfg["vectorize"] = OtherOptionEntity(True)
        cfg["parallel"] = OtherOptionEntity(worth_parallel(shape, PARALLEL_MIN_ELEMENTS // 4))
    return cfg["tile_inner"].val, cfg["vectorize"].val, cfg["parallel"].val


def _schedule_pool_op(s, op, outs, target, cfg):
    padded = op.input_tensors[0]
    if isinstance(padded.op, ComputeOp) and _tag.is_injective(padded.op.tag) and not inline_outer_padding(s, padded):
        schedule_injective_from_existing(s, padded, target)
    shape = get_const_tuple(op.output(0).shape)
    out = fused_output(s, op, outs, lambda t: get_const_tuple(t.shape) == shape)
    if out is None or out.op is op:
        acc, stage = s.cache_write(op.output(0), "local"), s[op]
    else:
        acc, stage = op.output(0), s[out]
        s[op].set_scope("local")
    axes = list(stage.op.axis)
    v, vectorize, parallel = _pool_knobs(cfg, shape, vector_lanes(target, op.output(0).dtype))
    last_outer, last_inner = stage.split(axes[-1], factor=v)
    outer = stage.fuse(*axes[:-1], last_outer) if len(axes) > 1 else last_outer
    if parallel:
        stage.parallel(outer)
    if v > 1 and vectorize:
        stage.vectorize(last_inner)
    s[acc].compute_at(stage, outer)
    a_axes = list(s[acc].op.axis)
    s[acc].reorder(*a_axes[:-1], *s[acc].op.reduce_axis, a_axes[-1])
    if v > 1 and vectorize:
        s[acc].vectorize(a_axes[-1])
    for o in output_ops(outs):
        if o is not op and (out is None or o is not out.op):
            schedule_injective_from_existing(s, o.output(0), target)


def schedule_pool(outs, layout=None, target=None, cfg=None):
    """Schedule a group anchored by ``pool_max``/``pool_sum`` (see the module docstring), with the knobs' values
    ``cfg`` (:mod:`kiln.autotvm`; the hand-chosen schedule when None). ``layout`` is TVM's argument, not needed
    here (the schedule follows the innermost axis, whatever it is).

    Returns
    -------
    s : Schedule
    """
    cfg = FallbackConfigEntity() if cfg is None else cfg
    return schedule_anchored(outs, POOL_TAGS, lambda s, op: _schedule_pool_op(s, op, outs, target, cfg))


@register_topi_compute("pool2d.x86")
def pool2d_template(cfg, data, kernel, stride, dilation, padding, pool_type, ceil_mode, layout, count_include_pad,
                    out_layout):
    """The compute of the tuning template ``pool2d.x86``: ``topi.nn.pool2d`` (the knobs are in the schedule)."""
    return pool2d(data, kernel, stride, dilation, padding, pool_type, ceil_mode, layout, count_include_pad,
                  out_layout)


@register_topi_compute("global_pool.x86")
def global_pool_template(cfg, data, pool_type, layout, out_layout):
    """The compute of the tuning template ``global_pool.x86``: ``topi.nn.global_pool``."""
    return global_pool(data, pool_type, layout, out_layout)


@register_topi_schedule("pool2d.x86")
@register_topi_schedule("global_pool.x86")
def schedule_pool_template(cfg, outs, target):
    """The schedule of the tuning templates ``pool2d.x86`` and ``global_pool.x86``."""
    return schedule_pool(outs, target=target, cfg=cfg)
