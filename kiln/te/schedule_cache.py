"""``Schedule.cache_write`` and ``Schedule.cache_read``: stages that stage data through a scratch buffer.

``cache_write(C, "local")`` splits C's stage in two, as TVM does: a new stage ``C.local`` computes C's expression
(its reduction included) into a ``local`` buffer, and C's stage now only copies ``C.local`` out to C. The copy keeps
C's axes, so ``s[C]`` still names the stage, and the cache stage gets fresh axes (``i.c``, ``j.c``) to schedule. The
usual pattern computes the cache inside a tile of C (``s[CC].compute_at(s[C], yo)``) so a reduction accumulates in
a small buffer the code generator can keep in registers. C's stage loses any loop transformation made before (TVM
resets it too): call cache_write before scheduling C.

``cache_read(A, "local", [B])`` adds a stage ``A.local`` copying A, and makes the readers B read the copy.

Operations are immutable, so both replace operations in their stages (``stage.op``) and remember the original in
``stage.origin_op``: the stage keeps producing the tensors the user holds (lowering maps them to the stage's buffers).
"""

import dataclasses

from ..error import TIRError
from ..tir import expr as E
from ..tir.analysis import undefined_vars
from ..tir.expr_reduce import CommReducer, IterVar, IterVarType, Range
from ..tir.functor import StmtExprMutator
from ..tir.stmt_functor import substitute
from .schedule import Stage
from .tensor import ComputeOp, Tensor
from .tensor_compute import TensorComputeOp

__all__ = ["cache_write", "cache_read", "rewrite_bodies"]


def rewrite_bodies(bodies, fexpr) -> tuple:
    """Apply ``fexpr`` to every expression of a compute's bodies, keeping the sharing that multi-output reductions
    need (one rewritten source/condition/init shared by all their Reduce nodes)."""
    if not bodies or not isinstance(bodies[0], E.Reduce):
        return tuple(fexpr(b) for b in bodies)
    first = bodies[0]
    source = tuple(fexpr(s) for s in first.source)
    cond = fexpr(first.condition)
    init = tuple(fexpr(s) for s in first.init)
    return tuple(E.Reduce(r.combiner, source, r.axis, cond, r.value_index, init) for r in bodies)


def _compute_stage(sch, tensor, what):
    stage = sch[tensor]
    if not isinstance(stage.op, ComputeOp):
        raise TIRError(f"{what}: {getattr(tensor, 'name', tensor)} is not computed by a compute stage")
    return stage


def cache_write(sch, tensor, scope):
    """Make ``tensor``'s stage compute into a ``scope`` cache and copy it out; return the cache tensor(s)."""
    tensors = list(tensor) if isinstance(tensor, list | tuple) else [tensor]
    stage = _compute_stage(sch, tensors[0], "cache_write")
    for t in tensors[1:]:
        if sch[t] is not stage:
            raise TIRError("cache_write: the tensors given must be outputs of one operation")
    if stage.attach_type == "inline":
        raise TIRError(f"cache_write: stage {stage.op.name} is inlined")
    op = stage.op
    new_axis = tuple(IterVar(iv.dom, E.Var(f"{iv.var.name_hint}.c", iv.var.dtype), IterVarType.DataPar)
                     for iv in op.axis)
    vmap = {iv.var: new.var for iv, new in zip(op.axis, new_axis, strict=True)}
    cache_op = ComputeOp(f"{op.name}.{scope}", op.tag, op.attrs, new_axis, _cache_bodies(op.body, vmap))
    indices = tuple(iv.var for iv in op.axis)
    copy_op = ComputeOp(op.name, op.tag, op.attrs, op.axis,
                        tuple(E.ProducerLoad(cache_op.output(i), indices) for i in range(op.num_outputs)))
    stage.op = copy_op
    stage.all_iter_vars = list(copy_op.axis)
    stage.leaf_iter_vars = list(copy_op.axis)
    stage.relations = []
    stage.iter_var_attrs = {}
    sch.stage_map[copy_op] = stage
    cache_stage = Stage(cache_op, sch)
    cache_stage.scope = str(scope)
    sch._insert(cache_stage, sch.stages.index(stage))
    outputs = [cache_op.output(i) for i in range(cache_op.num_outputs)]
    return outputs[0] if len(outputs) == 1 else outputs


def _cache_bodies(bodies, vmap) -> tuple:
    """``bodies`` over the cache's axes (``vmap``). A reduction keeps its axes (schedules name them) unless their
    range, or the combiner, reads a data axis (a length per output element): those get copies over the new axes."""
    bodies = rewrite_bodies(bodies, lambda e: substitute(e, vmap))
    if not bodies or not isinstance(bodies[0], E.Reduce):
        return bodies
    first = bodies[0]
    used = {id(v) for v in vmap}

    def reads_axis(*exprs):
        return any(id(v) in used for e in exprs for v in undefined_vars(e))

    axis, amap = [], {}
    for iv in first.axis:
        if reads_axis(iv.dom.min, iv.dom.extent):
            new = IterVar(Range.from_min_extent(substitute(iv.dom.min, vmap), substitute(iv.dom.extent, vmap)),
                          E.Var(iv.var.name_hint, iv.var.dtype), iv.iter_type, iv.thread_tag)
            amap[iv.var] = new.var
            iv = new
        axis.append(iv)
    c = first.combiner
    combiner = c
    if reads_axis(*c.result, *c.identity_element):
        combiner = CommReducer(c.lhs, c.rhs, [substitute(e, vmap) for e in c.result],
                               [substitute(e, vmap) for e in c.identity_element])
    if not amap and combiner is c:
        return bodies
    source = tuple(substitute(x, amap) for x in first.source)
    cond = substitute(first.condition, amap)
    return tuple(E.Reduce(combiner, source, tuple(axis), cond, r.value_index, r.init) for r in bodies)


class _ReplaceLoads(StmtExprMutator):
    """Re-points loads of one stage's output ``value_index`` to another tensor."""

    def __init__(self, sch, stage, value_index, new_tensor):
        self.sch, self.stage, self.value_index, self.new_tensor = sch, stage, value_index, new_tensor

    def visit_producer_load(self, op):
        indices = tuple(self.visit_expr(i) for i in op.indices)
        t = op.producer
        if self.sch.stage_map.get(t.op) is self.stage and t.value_index == self.value_index:
            return E.ProducerLoad(self.new_tensor, indices)
        return op.with_fields(indices=indices)


def cache_read(sch, tensor, scope, readers):
    """Add a stage copying ``tensor`` into a ``scope`` buffer and make ``readers`` read it; return the copy."""
    if not isinstance(tensor, Tensor):
        raise TIRError(f"cache_read: expected a tensor, got {type(tensor).__name__}")
    src = sch[tensor]
    if not isinstance(readers, list | tuple):
        readers = [readers]
    axis = tuple(IterVar(E.Range(E.IntImm(s.dtype, 0), s), E.Var(f"ax{k}", s.dtype), IterVarType.DataPar)
                 for k, s in enumerate(tensor.shape))
    cache_op = ComputeOp(f"{tensor.name}.{scope}", "", None, axis, (E.ProducerLoad(tensor, [iv.var for iv in axis]),))
    cache = cache_op.output(0)
    mutator = _ReplaceLoads(sch, src, tensor.value_index, cache)
    for reader in readers:
        rstage = reader if isinstance(reader, Stage) else sch[reader]
        rop = rstage.op
        if isinstance(rop, TensorComputeOp):  # its intrinsic reads the cache's slices instead
            inputs = tuple(cache if sch[t] is src and t.value_index == tensor.value_index else t for t in rop.inputs)
            new_op = dataclasses.replace(rop, inputs=inputs)
        elif not isinstance(rop, ComputeOp):
            raise TIRError(f"cache_read: reader {getattr(reader, 'name', reader)} is not a compute stage")
        else:
            new_op = ComputeOp(rop.name, rop.tag, rop.attrs, rop.axis, rewrite_bodies(rop.body, mutator.visit_expr))
        rstage.op = new_op
        sch.stage_map[new_op] = rstage
    cache_stage = Stage(cache_op, sch)
    cache_stage.scope = str(scope)
    sch._insert(cache_stage, sch.stages.index(src) + 1)
    return cache

