"""x86 schedule of reductions and of any group built around them (TVM's ``topi/x86/reduction.py``).

:func:`schedule_reduce` inlines every non-output stage without a reduction (the element-wise producers of a
reduction are computed on the fly, inside its loop), schedules each reduction stage with
:func:`schedule_reduce_stage`, and each injective output (a ``mean``'s division, a cast) as an injective stage.

A reduction stage keeps its data-parallel axes outside its reduction axes. When every tensor it reads is indexed
by its innermost data-parallel axis in the last position (the reduction runs along another, strided axis, as
summing the channels of NCHW data does), that axis is split by the vector width and its inner part moved inside the
reduction loops and vectorized: each step of the reduction then adds whole vectors. The remaining data-parallel
axes are fused and run in parallel when there is enough work.
"""

from ...te.tensor import ComputeOp
from ...tir import expr as E
from ...tir.stmt_functor import post_order_visit
from ..utils import auto_inline_injective, create_schedule_for, get_const_tuple, output_ops, vector_lanes
from .injective import schedule_injective_from_existing, vector_factor, worth_parallel

__all__ = ["schedule_reduce", "schedule_reduce_stage", "schedule_generic"]


def _reads_contiguously(op, var) -> bool:
    """Whether every tensor read of ``op``'s body has ``var`` alone as its last index."""
    loads = []
    post_order_visit(op.body[0], lambda n: loads.append(n) if isinstance(n, E.ProducerLoad) else None)
    return bool(loads) and all(ld.indices and ld.indices[-1] is var for ld in loads)


def schedule_reduce_stage(s, op, target=None):
    """Arrange the loops of the reduction ``op`` in ``s`` (see the module docstring)."""
    stage = s[op]
    dp, red = list(stage.op.axis), list(stage.op.reduce_axis)
    if not dp:
        return s
    shape = get_const_tuple(op.output(0).shape)
    v = vector_factor(shape[-1], vector_lanes(target, op.output(0).dtype))
    outer = dp
    if v > 1 and red and _reads_contiguously(stage.op, dp[-1].var):
        xo, xi = stage.split(dp[-1], factor=v)
        outer = dp[:-1] + [xo]
        stage.reorder(*outer, *red, xi)
        stage.vectorize(xi)
    fused = stage.fuse(*outer) if len(outer) > 1 else outer[0]
    if worth_parallel([iv.dom.extent for iv in dp + red]) and any(d != 1 for d in shape):
        stage.parallel(fused)
    return s


def schedule_generic(outs, target=None):
    """Schedule any group: inline injective intermediates, arrange reductions, vectorize injective outputs."""
    s = create_schedule_for(outs)
    auto_inline_injective(s)
    outputs = {id(op) for op in output_ops(outs)}
    for stage in list(s.stages):
        op = stage.op
        if not isinstance(op, ComputeOp) or stage.attach_type != "root":
            continue
        if op.reduce_axis:
            schedule_reduce_stage(s, op, target)
        elif id(stage.origin_op) in outputs:
            schedule_injective_from_existing(s, op.output(0), target)
    return s


def schedule_reduce(outs, target=None):
    """Schedule a group whose anchor is a reduction (``sum``, ``argmax``, ``global_avg_pool2d`` ...).

    Returns
    -------
    s : Schedule
    """
    return schedule_generic(outs, target)
