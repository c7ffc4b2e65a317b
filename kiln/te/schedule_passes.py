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
from .bound import ScheduleGraph, infer_bound
from .lower import schedule_to_prim_func
from .schedule_ops import build_body
from .tensor import PlaceholderOp

__all__ = ["InferBound", "ScheduleOps", "schedule_to_module"]


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
