"""x86 schedule of reductions and of any group built around them (TVM's ``topi/x86/reduction.py``).

:func:`schedule_reduce` inlines every non-output stage without a reduction (the element-wise producers of a
reduction are computed on the fly, inside its loop), schedules each reduction stage with
:func:`schedule_reduce_stage`, and each injective output (a ``mean``'s division, a cast) as an injective stage.

A reduction stage keeps its data-parallel axes outside its reduction axes. When every tensor it reads is indexed
by its innermost data-parallel axis in the last position (the reduction runs along another, strided axis, as
summing the channels of NCHW data does), that axis is split by the vector width and its inner part moved inside the
reduction loops and vectorized: each step of the reduction then adds whole vectors. The remaining data-parallel
axes are fused and run in parallel when there is enough work.

Tuning (:mod:`kiln.autotvm`): the template ``reduce.x86`` (every reduction operator, by name) declares, on its
reduction stage, ``tile_inner`` (the split of the innermost data-parallel axis moved inside the reduction and
vectorized, 1: none; offered when the reads are contiguous along it) and ``parallel`` (whether the fused
data-parallel loop runs in parallel). Their fallback values are the choices above.
"""

from ...autotvm.task import FallbackConfigEntity, OtherOptionEntity, register_topi_compute, register_topi_schedule
from ...te.tensor import ComputeOp
from ...tir import expr as E
from ...tir.stmt_functor import post_order_visit
from .. import reduction as _reduction
from ..utils import auto_inline_injective, create_schedule_for, get_const_tuple, output_ops, vector_lanes
from .injective import schedule_injective_from_existing, vector_factor, worth_parallel
from .pooling import inner_split_choices

__all__ = ["schedule_reduce", "schedule_reduce_stage", "schedule_generic", "REDUCTIONS", "ARG_REDUCTIONS"]


def _reads_contiguously(op, var) -> bool:
    """Whether every tensor read of ``op``'s body has ``var`` alone as its last index."""
    loads = []
    post_order_visit(op.body[0], lambda n: loads.append(n) if isinstance(n, E.ProducerLoad) else None)
    return bool(loads) and all(ld.indices and ld.indices[-1] is var for ld in loads)


def _reduce_knobs(cfg, dp, red, shape, lanes, contiguous):
    """Declare the knobs of a reduction stage (module docstring) and return ``(inner split, parallel)``."""
    v = vector_factor(shape[-1], lanes) if red and contiguous else 1
    cfg.define_knob("tile_inner", inner_split_choices(shape[-1], lanes, v) if red and contiguous else [1])
    cfg.define_knob("parallel", [True, False] if any(d != 1 for d in shape) else [False])
    if cfg.is_fallback:
        cfg["tile_inner"] = OtherOptionEntity(v)
        cfg["parallel"] = OtherOptionEntity(worth_parallel([iv.dom.extent for iv in dp + red])
                                            and any(d != 1 for d in shape))
    return cfg["tile_inner"].val, cfg["parallel"].val


def schedule_reduce_stage(s, op, target=None, cfg=None):
    """Arrange the loops of the reduction ``op`` in ``s`` (see the module docstring) with the knobs' values
    ``cfg`` (:mod:`kiln.autotvm`; the hand-chosen schedule when None)."""
    stage = s[op]
    dp, red = list(stage.op.axis), list(stage.op.reduce_axis)
    if not dp:
        return s
    cfg = FallbackConfigEntity() if cfg is None else cfg
    shape = get_const_tuple(op.output(0).shape)
    contiguous = bool(red) and _reads_contiguously(stage.op, dp[-1].var)
    v, parallel = _reduce_knobs(cfg, dp, red, shape, vector_lanes(target, op.output(0).dtype), contiguous)
    outer = dp
    if v > 1:
        xo, xi = stage.split(dp[-1], factor=v)
        outer = dp[:-1] + [xo]
        stage.reorder(*outer, *red, xi)
        stage.vectorize(xi)
    fused = stage.fuse(*outer) if len(outer) > 1 else outer[0]
    if parallel:
        stage.parallel(fused)
    return s


def schedule_generic(outs, target=None, cfg=None):
    """Schedule any group: inline injective intermediates, arrange reductions, vectorize injective outputs. ``cfg``
    (:mod:`kiln.autotvm`) sets the knobs of the first reduction stage (the anchor)."""
    s = create_schedule_for(outs)
    auto_inline_injective(s)
    outputs = {id(op) for op in output_ops(outs)}
    for stage in list(s.stages):
        op = stage.op
        if not isinstance(op, ComputeOp) or stage.attach_type != "root":
            continue
        if op.reduce_axis:
            schedule_reduce_stage(s, op, target, cfg)
            cfg = None  # another reduction of the group: its hand-chosen schedule
        elif id(stage.origin_op) in outputs:
            schedule_injective_from_existing(s, op.output(0), target)
    return s


def schedule_reduce(outs, target=None, cfg=None):
    """Schedule a group whose anchor is a reduction (``sum``, ``argmax``, ``global_avg_pool2d`` ...), with the
    knobs' values ``cfg`` (:mod:`kiln.autotvm`; the hand-chosen schedule when None).

    Returns
    -------
    s : Schedule
    """
    return schedule_generic(outs, target, cfg)


REDUCTIONS = {"sum": _reduction.sum, "mean": _reduction.mean, "max": _reduction.max, "min": _reduction.min,
              "prod": _reduction.prod_reduce, "all": _reduction.all, "any": _reduction.any}
ARG_REDUCTIONS = {"argmax": _reduction.argmax, "argmin": _reduction.argmin}


@register_topi_compute("reduce.x86")
def reduce_template(cfg, data, name, axis, keepdims, exclude, select_last_index):
    """The compute of the tuning template ``reduce.x86``: the reduction operator ``name`` (``"sum"``, ``"argmax"``
    ...) of ``topi``."""
    if name in ARG_REDUCTIONS:
        return ARG_REDUCTIONS[name](data, axis, keepdims, select_last_index, exclude)
    return REDUCTIONS[name](data, axis, keepdims, exclude)


@register_topi_schedule("reduce.x86")
def schedule_reduce_template(cfg, outs, target):
    """The schedule of the tuning template ``reduce.x86``."""
    return schedule_reduce(outs, target, cfg)
