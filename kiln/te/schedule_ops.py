"""Build the loop nest of a schedule (TVM's ``te/schedule/schedule_ops.cc`` and ``te/operation/compute_op.cc``).

Given the bounds of :mod:`kiln.te.bound`, every compute stage becomes statements:

* one ``For`` per leaf axis, outermost first, from 0 to its extent (a loop of extent 1 is dropped and its variable
  is 0), of kind PARALLEL / VECTORIZED / UNROLLED when the schedule says so;
* innermost, one ``BufferStore`` per output: ``buf[root - region_min] = body``, where each root axis is replaced by
  its value in terms of the loops, reads of other stages become ``BufferLoad``s of their buffers (shifted by the
  region they store), and the tails of non-dividing splits are guarded by ``if likely(value < extent)``;
* a reduction is split, as in TVM, at its first reduction loop: the loops before it are shared, then an *init* nest
  (fresh copies of the data-parallel loops after that point, ``v.init``) stores the identity, then the remaining loops
  run the *update* ``buf[...] = combine(buf[...], source)`` (several outputs go through ``LetStmt``s so each
  combination reads the old values);
* a stage attached with ``compute_at(parent, axis)`` is built inside ``parent``'s loop over ``axis``, before the
  rest of that loop's body, within an ``Allocate`` of the region it computes; root stages follow each other in
  producer-first order, and the intermediate results they need are allocated around the whole body.

Tensors passed as arguments (or in ``binds``) are stored in the caller's buffers with absolute indices; every other
stage gets a compact buffer of its region, in its storage scope.
"""

from ..arith import Analyzer
from ..error import TIRError
from ..tir import expr as E
from ..tir import op as _op
from ..tir import stmt as S
from ..tir.analysis import undefined_vars
from ..tir.buffer import decl_buffer
from ..tir.expr_reduce import IterVarType
from ..tir.functor import StmtExprMutator
from ..tir.intrin import likely
from ..tir.stmt_functor import substitute
from .bound import attach_index
from .scan import ScanOp
from .schedule import PARALLEL, UNROLL, VECTORIZE, Fuse, Split
from .schedule_extern import extern_stage
from .schedule_layout import physical_indices, physical_shape
from .schedule_tensorize import tensor_compute_stage, tensorize_stage, tensorized_leaf
from .tensor import ExternOp
from .tensor_compute import TensorComputeOp

__all__ = ["build_body"]

_KINDS = {PARALLEL: S.ForKind.PARALLEL, VECTORIZE: S.ForKind.VECTORIZED, UNROLL: S.ForKind.UNROLLED}


class _ToBufferLoads(StmtExprMutator):
    """Rewrites reads of tensors (ProducerLoad) into reads of their buffers (BufferLoad)."""

    def __init__(self, builder):
        self.builder = builder

    def visit_producer_load(self, op):
        indices = tuple(self.visit_expr(i) for i in op.indices)
        return self.builder.load(op.producer, indices)


class _Builder:
    def __init__(self, graph, infos, binds):
        self.graph, self.infos = graph, infos
        self.binds = binds  # (stage, value_index) -> Buffer of the caller
        self.ana = Analyzer()
        for info in infos.values():
            for iv in info.stage.leaf_iter_vars:
                self.ana.bind(iv.var, info.leaf_range(iv), allow_override=True)
        self.buffers: dict = {}  # (stage, value_index) -> (Buffer, region mins)
        self.attached: dict = {}  # (parent stage, leaf index) -> stages, producers first
        for stage in graph.order:
            if stage.attach_spec().attach_type in ("scope", "scan_update"):
                parent = stage.attach_spec().attach_stage
                index = attach_index(stage)
                self.attached.setdefault((parent, index), []).append(stage)
        self.to_loads = _ToBufferLoads(self)
        # a scan's init, update and state placeholder are its output buffer (TVM's ReplaceDataFlow)
        self.alias = {t.op: (stage, k) for stage in graph.order if isinstance(stage.op, ScanOp)
                      for k in range(stage.op.num_outputs)
                      for t in (stage.op.init[k], stage.op.update[k], stage.op.state_placeholder[k])}

    # ---- buffers
    def buffer(self, stage, value_index):
        if stage.op in self.alias:
            stage, value_index = self.alias[stage.op]
        key = (stage, value_index)
        entry = self.buffers.get(key)
        if entry is None:
            bound = self.binds.get(key)
            tensor = stage.origin_op.output(value_index)
            if bound is not None:
                entry = (bound, None)
            elif isinstance(stage.op, ScanOp | ExternOp):  # the whole tensor, indexed from 0
                t = stage.op.output(value_index)
                entry = (decl_buffer(t.shape, t.dtype, tensor.name, scope=stage.scope), None)
            elif stage not in self.infos:
                raise TIRError(f"lower: tensor {tensor.name} is an input (placeholder) but is neither in the "
                               "arguments nor in binds")
            else:
                ranges = [self.infos[stage].root_ranges[iv] for iv in stage.op.axis]
                buf = decl_buffer(physical_shape(stage, [r.extent for r in ranges]),
                                  stage.op.output(value_index).dtype, tensor.name, scope=stage.scope,
                                  axis_separators=stage.axis_separators)
                entry = (buf, tuple(r.min for r in ranges))
            self.buffers[key] = entry
        return entry

    def _indices(self, stage, value_index, indices):
        buf, mins = self.buffer(stage, value_index)
        if mins is not None:
            indices = tuple(self.ana.simplify(_op.subtract(i, m)) for i, m in zip(indices, mins, strict=True))
        return buf, physical_indices(stage, indices)

    def load(self, tensor, indices):
        buf, indices = self._indices(self.graph.stage_of(tensor), tensor.value_index, indices)
        return E.BufferLoad(buf, indices)

    def store(self, stage, value_index, value, indices):
        buf, indices = self._indices(stage, value_index, indices)
        return S.BufferStore(buf, value, indices)

    def allocate(self, stage, body):
        """Wrap ``body`` in allocations of ``stage``'s outputs that are not caller buffers."""
        for k in reversed(range(stage.op.num_outputs)):
            if (stage, k) in self.binds or stage.op in self.alias:
                continue
            buf, _ = self.buffer(stage, k)
            body = S.Allocate(buf.data, buf.dtype, buf.shape, E.convert(True), body)
        return body

    # ---- statements
    def expr(self, e, vmap):
        """A body expression with root axes replaced by their values and tensor reads by buffer reads."""
        return self.ana.simplify(self.to_loads.visit_expr(substitute(e, vmap)))

    def loops(self, stage, lo, hi, body, checks=(), var_map=None):
        """Wrap ``body`` in the loops of ``stage``'s leaf axes ``lo..hi-1`` with the stages attached to them.

        Each check guards the loops below the innermost loop whose variable it uses (a tail guard of an outer split
        stays outside the inner loops, which stay vectorizable). With ``var_map`` (the init nest of a reduction) the
        loops get the mapped variables, reduction axes are skipped and nothing is attached.
        """
        info = self.infos[stage]
        leaves = stage.leaf_iter_vars
        loop_vars = {}
        for k in range(lo, hi):
            var = leaves[k].var
            if var_map is not None:
                var = var_map.get(var)
            attr = stage.iter_var_attrs.get(leaves[k])
            bound = attr is not None and attr.bind_thread is not None  # a thread count of one stays, as in TVM
            if var is not None and (bound or not _is_one(info.extents[leaves[k]])):
                loop_vars[k] = var
        levels: dict = {}
        for c in checks:
            used = {id(v) for v in undefined_vars(c)}
            level = max((k for k, v in loop_vars.items() if id(v) in used), default=lo - 1)
            levels.setdefault(level, []).append(c)
        for k in reversed(range(lo, hi)):
            body = self.guard(levels.get(k, ()), body)
            if var_map is None:
                body = self.with_attached(self.attached.get((stage, k), ()), body)
            var = loop_vars.get(k)
            if var is not None:
                iv = leaves[k]
                attr = stage.iter_var_attrs.get(iv)
                kind = _KINDS.get(attr.iter_type, S.ForKind.SERIAL) if attr is not None else S.ForKind.SERIAL
                # a data-dependent extent (a reduction over a length read from a tensor) reads its buffer
                extent = info.extents[iv]
                if not isinstance(extent, E.IntImm):
                    extent = self.expr(extent, {r.var: info.values[r] for r in info.root_ranges})
                body = _loop(iv, var, extent, kind, attr, body)
        return self.guard(levels.get(lo - 1, ()), body)

    def with_attached(self, stages, body):
        for x in reversed(stages):
            body = self.allocate(x, S.stmt_seq(self.stage(x), body))
        return body

    def guard(self, conditions, body):
        cond = None
        for c in conditions:
            if isinstance(c, E.IntImm) and c.value:
                continue
            cond = c if cond is None else _op.logical_and(cond, c)
        return body if cond is None else S.IfThenElse(cond, body)

    def stage(self, stage) -> S.Stmt:
        """The statements computing ``stage`` (its loop nest, with what is attached inside)."""
        if isinstance(stage.op, TensorComputeOp):
            return tensor_compute_stage(self, stage)
        if isinstance(stage.op, ExternOp):
            return extern_stage(self, stage)
        if isinstance(stage.op, ScanOp):  # the time loop, around the scan's body attached in it
            return self.loops(stage, 0, 1, S.Evaluate(E.IntImm("int32", 0)))
        if tensorized_leaf(stage) is not None:
            return tensorize_stage(self, stage, tensorized_leaf(stage))
        info = self.infos[stage]
        op = stage.op
        leaves = stage.leaf_iter_vars
        vmap = {iv.var: info.values[iv] for iv in info.root_ranges}
        indices = [info.values[iv] for iv in op.axis]
        checks = [(iv, likely(self.ana.simplify(c))) for iv, c in info.checks]
        if not op.reduce_axis:
            body = self.graph.effective_body(stage)
            stores = [self.store(stage, k, self.expr(b, vmap), indices) for k, b in enumerate(body)]
            return self.loops(stage, 0, len(leaves), S.stmt_seq(*stores), [c for _, c in checks])
        begin = next((k for k, iv in enumerate(leaves) if iv.iter_type == IterVarType.CommReduce), len(leaves))
        # checks using only the loops before the first reduction loop guard init and update at once
        inner_vars = {id(iv.var) for iv in leaves[begin:]}
        inner = [(iv, c) for iv, c in checks if any(id(v) in inner_vars for v in undefined_vars(c))]
        common = [c for iv, c in checks if not any(c is d for _, d in inner)]
        update = self.loops(stage, begin, len(leaves), self.reduce_update(stage, vmap, indices), [c for _, c in inner])
        init = self.reduce_init(stage, begin, [c for iv, c in inner if iv.iter_type != IterVarType.CommReduce])
        return self.loops(stage, 0, begin, S.stmt_seq(init, update), common)

    def reduce_update(self, stage, vmap, indices):
        body = self.graph.effective_body(stage)
        first = body[0]
        combiner = first.combiner
        places = [self._indices(stage, k, indices) for k in range(len(body))]
        current = [E.BufferLoad(buf, idx) for buf, idx in places]
        source = [self.expr(s, vmap) for s in first.source]
        operands = {**dict(zip(combiner.lhs, current, strict=True)), **dict(zip(combiner.rhs, source, strict=True))}
        new = [self.ana.simplify(substitute(r, operands)) for r in combiner.result]
        if len(new) == 1:
            stmt = S.BufferStore(places[0][0], new[0], places[0][1])
        else:  # every combination must read the old values: bind them all before storing
            temps = [E.Var(f"reduce_temp{k}", v.dtype) for k, v in enumerate(new)]
            stmt = S.stmt_seq(*[S.BufferStore(buf, t, idx) for (buf, idx), t in zip(places, temps, strict=True)])
            for t, v in reversed(list(zip(temps, new, strict=True))):
                stmt = S.LetStmt(t, v, stmt)
        cond = self.expr(first.condition, vmap)
        return self.guard([cond], stmt)

    def reduce_init(self, stage, begin, checks):
        """Store the identity (or the ``init`` values) over fresh copies of the data-parallel loops after ``begin``."""
        info = self.infos[stage]
        op = stage.op
        data = _data_leaves(stage)  # (a loop fusing data and reduction axes runs in the init too, as TVM's)
        var_map = {iv.var: E.Var(f"{iv.var.name_hint}.init", iv.var.dtype) for iv in stage.leaf_iter_vars[begin:]
                   if iv.iter_type != IterVarType.CommReduce or id(iv) in data}
        vmap = {iv.var: substitute(info.values[iv], var_map) for iv in op.axis}
        indices = [vmap[iv.var] for iv in op.axis]
        first = self.graph.effective_body(stage)[0]
        values = first.init if first.init else first.combiner.identity_element
        stores = [self.store(stage, k, self.expr(v, vmap), indices) for k, v in enumerate(values)]
        checks = [substitute(c, var_map) for c in checks]
        return self.loops(stage, begin, len(stage.leaf_iter_vars), S.stmt_seq(*stores), checks, var_map)


def _data_leaves(stage) -> set:
    """ids of the axes a data-parallel axis of ``stage`` is split or fused into."""
    reach = {id(iv) for iv in stage.op.axis}
    for rel in stage.relations:
        if isinstance(rel, Split) and id(rel.parent) in reach:
            reach.update((id(rel.outer), id(rel.inner)))
        elif isinstance(rel, Fuse) and (id(rel.outer) in reach or id(rel.inner) in reach):
            reach.add(id(rel.fused))
    return reach


def _is_one(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 1


def build_body(graph, infos, binds) -> S.Stmt:
    """The body of the function computing a schedule: root stages in order, inside their intermediates' allocations.

    Parameters
    ----------
    graph : ScheduleGraph
        The stages (from :mod:`kiln.te.bound`).
    infos : dict
        Stage -> StageInfo (bound inference).
    binds : dict
        (stage, value_index) -> Buffer for tensors stored in caller memory.
    """
    builder = _Builder(graph, infos, binds)
    roots = [s for s in graph.order if s.attach_spec().attach_type == "root"]
    body = S.stmt_seq(*[builder.stage(s) for s in roots])
    for s in reversed(roots):
        body = builder.allocate(s, body)
    return body


def _loop(iv, var, extent, kind, attr, body):
    """The loop over ``var`` (of leaf axis ``iv``): a ``For`` of ``kind`` wrapped in its pragma attributes (about
    ``iv``), or, bound to a thread, a ``thread_extent`` attribute of the thread axis in which ``var`` is the thread
    index (TVM's MakeLoopNest)."""
    if attr is not None and attr.bind_thread is not None:
        thread = attr.bind_thread
        return S.AttrStmt(thread, "thread_extent", extent, S.LetStmt(var, thread.var, body))
    loop = S.For(var, E.IntImm(var.dtype, 0), extent, kind, body)
    if attr is not None:
        for key, value in reversed(list(zip(attr.pragma_keys, attr.pragma_values, strict=True))):
            loop = S.AttrStmt(iv, f"pragma_{key.value}", value, loop)
    return loop
