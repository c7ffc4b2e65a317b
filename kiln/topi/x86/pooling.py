"""x86 schedule of 2-D pooling and global pooling (TVM's ``topi/x86/pooling.py``).

The padded input is materialized first (a vectorized, parallel copy), so the window reads need no bound checks
and the pooling loop can be vectorized. The output's innermost axis is split by the vector width; the window
(``rv_h``, ``rv_w``) is reduced into a vector accumulator computed inside that split, so each window tap is one
vector maximum (or sum) over a row of outputs: contiguous loads when the innermost axis is channels (NHWC,
NCHW16c: a global pool adds one vector per pixel), strided ones along W in NCHW. The other axes are fused into one
parallel loop. An average's division, and any element-wise chain after the pooling, is inlined into the output's
loop.
"""

from ...te.tensor import ComputeOp
from .. import tag as _tag
from ..utils import (
    fused_output,
    get_const_tuple,
    output_ops,
    schedule_anchored,
    vector_lanes,
)
from .injective import PARALLEL_MIN_ELEMENTS, schedule_injective_from_existing, vector_factor, worth_parallel

__all__ = ["schedule_pool"]

POOL_TAGS = ("pool_max", "pool_sum", "global_pool_max", "global_pool_sum")


def _schedule_pool_op(s, op, outs, target):
    padded = op.input_tensors[0]
    if isinstance(padded.op, ComputeOp) and _tag.is_injective(padded.op.tag):
        schedule_injective_from_existing(s, padded, target)
    shape = get_const_tuple(op.output(0).shape)
    out = fused_output(s, op, outs, lambda t: get_const_tuple(t.shape) == shape)
    if out is None or out.op is op:
        acc, stage = s.cache_write(op.output(0), "local"), s[op]
    else:
        acc, stage = op.output(0), s[out]
        s[op].set_scope("local")
    axes = list(stage.op.axis)
    v = vector_factor(shape[-1], vector_lanes(target, op.output(0).dtype))
    last_outer, last_inner = stage.split(axes[-1], factor=v)
    outer = stage.fuse(*axes[:-1], last_outer) if len(axes) > 1 else last_outer
    if worth_parallel(shape, PARALLEL_MIN_ELEMENTS // 4):
        stage.parallel(outer)
    if v > 1:
        stage.vectorize(last_inner)
    s[acc].compute_at(stage, outer)
    a_axes = list(s[acc].op.axis)
    s[acc].reorder(*a_axes[:-1], *s[acc].op.reduce_axis, a_axes[-1])
    if v > 1:
        s[acc].vectorize(a_axes[-1])
    for o in output_ops(outs):
        if o is not op and (out is None or o is not out.op):
            schedule_injective_from_existing(s, o.output(0), target)


def schedule_pool(outs, layout=None, target=None):
    """Schedule a group anchored by ``pool_max``/``pool_sum`` (see the module docstring). ``layout`` is TVM's
    argument, not needed here (the schedule follows the innermost axis, whatever it is).

    Returns
    -------
    s : Schedule
    """
    return schedule_anchored(outs, POOL_TAGS, lambda s, op: _schedule_pool_op(s, op, outs, target))
