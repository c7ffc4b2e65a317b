"""The steps of lowering a schedule as TVM exposes them (``te.schedule.InferBound``, ``te.schedule.ScheduleOps``,
``driver.build_module.schedule_to_module``), over kiln's bound inference (:mod:`kiln.te.bound`) and loop-nest
builder (:mod:`kiln.te.schedule_ops`).

``InferBound(s)`` maps every IterVar of every computed stage to its Range: for a root axis the region of it the
stage computes (``min`` may depend on the loops the stage is attached in), for a split, fused or leaf axis the
loop's range ``[0, extent)``. ``ScheduleOps(s, bounds)`` is the statement computing the schedule, before any TIR
pass, with every tensor not given a buffer in an allocation of its own.
"""

from ..ir.module import IRModule
from ..runtime.container import Map
from ..tir import expr as E
from ..tir.buffer import decl_buffer
from ..tir.stmt_functor import post_order_visit
from .bound import ScheduleGraph, infer_bound
from .lower import schedule_to_prim_func
from .schedule_ops import build_body
from .tensor import ComputeOp, PlaceholderOp

__all__ = ["InferBound", "ScheduleOps", "schedule_to_module", "AutoInlineElemWise", "AutoInlineBroadcast",
           "AutoInlineInjective"]


class Bounds(Map):
    """The Map ``InferBound`` returns, remembering the per-stage results ``ScheduleOps`` builds from."""

    __slots__ = ("infos", "graph")


def InferBound(sch):  # noqa: N802  (TVM's name)
    """The Range of every IterVar of the stages ``sch`` computes (see the module docstring).

    Parameters
    ----------
    sch : Schedule

    Returns
    -------
    bounds : Map
        IterVar -> Range.
    """
    graph = ScheduleGraph(sch)
    infos = infer_bound(sch, graph)
    bounds = Bounds()
    for info in infos.values():
        for iv, ext in info.extents.items():
            bounds[iv] = info.root_ranges.get(iv) or E.Range.from_min_extent(E.IntImm(iv.var.dtype, 0), ext)
    bounds.infos, bounds.graph = infos, graph
    return bounds


def ScheduleOps(sch, bounds=None, debug_keep_trivial_loop=False):  # noqa: N802  (TVM's name)
    """The statement computing ``sch`` (loops of extent one are dropped, as TVM does unless
    ``debug_keep_trivial_loop``, which kiln does not support).

    Parameters
    ----------
    sch : Schedule
    bounds : Map, optional
        What :func:`InferBound` returned for ``sch`` (inferred again when not given).

    Returns
    -------
    stmt : tir.Stmt
    """
    if not isinstance(bounds, Bounds) or bounds.graph.sch is not sch:
        bounds = InferBound(sch)
    # tensors TVM's statement reads as producers get buffers of their own here (placeholders have no stage to
    # allocate them); the stage outputs are allocated by the loop nest
    binds = {}
    for stage in sch.stages:
        if isinstance(stage.op, PlaceholderOp):
            t = stage.op.output(0)
            binds[(stage, 0)] = decl_buffer(t.shape, t.dtype, t.name)
    return build_body(bounds.graph, bounds.infos, binds)


def schedule_to_module(sch, args=None, name="main", binds=None):
    """An IRModule holding the PrimFunc of ``sch`` before any TIR pass (TVM's
    ``driver.build_module.schedule_to_module``); ``kiln.lower`` is this followed by the lowering passes.

    Parameters
    ----------
    sch : Schedule
    args : list of Tensor, Buffer or Var
        The parameters.
    name : str
        The function's name.
    binds : dict, optional
        Tensor -> Buffer.
    """
    return IRModule({name: schedule_to_prim_func(sch, args, name, binds)})


def _unscheduled(stage) -> bool:
    """Whether the stage is as the schedule created it (TVM's ``Stage::is_scheduled`` is false)."""
    return (not stage.relations and not stage.iter_var_attrs and stage.attach_type == "root"
            and not stage.is_output and isinstance(stage.op, ComputeOp) and not stage.op.reduce_axis)


def _elementwise(op) -> bool:
    """Whether every read of ``op`` is at exactly its own axes, in order."""
    axis = [iv.var for iv in op.axis]
    ok = []

    def visit(node):
        if isinstance(node, E.ProducerLoad):
            ok.append(len(node.indices) == len(axis) and all(i is v for i, v in zip(node.indices, axis, strict=True)))

    for b in op.body:
        post_order_visit(b, visit)
    return all(ok)


def AutoInlineElemWise(sch):  # noqa: N802  (TVM's name)
    """Inline every stage that is not scheduled, not an output, and reads only at its own indices."""
    for stage in sch.stages:
        if _unscheduled(stage) and _elementwise(stage.op):
            stage.compute_inline()


def AutoInlineBroadcast(sch):  # noqa: N802
    """Inline every unscheduled non-output stage without a reduction (TVM treats every such compute as a
    broadcast)."""
    for stage in sch.stages:
        if _unscheduled(stage):
            stage.compute_inline()


def AutoInlineInjective(sch):  # noqa: N802
    """Inline every unscheduled non-output stage without a reduction (an injective compute)."""
    for stage in sch.stages:
        if _unscheduled(stage):
            stage.compute_inline()
