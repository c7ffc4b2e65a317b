"""Bound inference (TVM's ``te/schedule/bound.cc`` and ``message_passing.cc``): how many iterations each loop of a
schedule runs, and which region of each intermediate tensor must be computed and stored.

How it works. :class:`ScheduleGraph` first fixes what will be computed: inlined stages are substituted into their
consumers (each stage gets an *effective body*), and the remaining compute stages are ordered producers first.
Bounds are then inferred consumers first, so when a stage X is reached the loops of every stage reading it are known:

1. The *root domain* of X (a Range per root axis): an output stage computes its whole domain; any other stage
   computes the union, over its consumers' reads ``X[f(i)]``, of the region ``f`` covers while the consumer's loops
   sweep their ranges -- except the loops enclosing X's attach point (``compute_at``), which stay symbolic. That is
   what makes a stage attached inside a tile compute only that tile: reading ``X[i]`` in a loop nest
   ``for io: for ii`` with X attached at ``io`` gives the region ``[io * 32, io * 32 + 31]``. The region is computed
   with interval arithmetic (:func:`kiln.arith.eval_set`) and clipped to X's own domain where provable (reads outside
   it only occur in branches guarded by ``if_then_else``). Reduction axes keep their declared domain.
2. *Leaf extents* pass down the relations: a split of an extent ``n`` by ``f`` gives ``ceil(n / f)`` and ``f``, a
   fuse multiplies. Every leaf loop runs from 0.
3. *Index values* pass up: each root axis is ``min + value``, where a split parent is ``outer * f + inner`` and a
   fused pair is ``fused // extent(inner)``, ``fused % extent(inner)``. When a split does not divide its extent
   (or a root value may leave the op's domain), a check ``value < extent`` is recorded; the loop builder guards the
   body with it (``likely``).
"""

from ..arith import Analyzer, eval_set
from ..error import TIRError
from ..tir import expr as E
from ..tir import op as _op
from ..tir.expr_reduce import Range
from ..tir.functor import StmtExprMutator
from ..tir.stmt_functor import post_order_visit, substitute
from .scan import ScanOp
from .schedule import Fuse, Singleton, Split, split_extent
from .schedule_cache import rewrite_bodies
from .schedule_layout import Transform
from .tensor import ComputeOp, ExternOp, PlaceholderOp
from .tensor_compute import TensorComputeOp

__all__ = ["ScheduleGraph", "StageInfo", "infer_bound"]


class _Inliner(StmtExprMutator):
    """Replaces reads of inlined stages by their (effective) expressions."""

    def __init__(self, graph):
        self.graph = graph

    def visit_producer_load(self, op):
        indices = tuple(self.visit_expr(i) for i in op.indices)
        stage = self.graph.stage_of(op.producer)
        if stage.attach_type != "inline":
            return op.with_fields(indices=indices)
        body = self.graph.effective_body(stage)[op.producer.value_index]
        return substitute(body, {iv.var: i for iv, i in zip(stage.op.axis, indices, strict=True)})


class ScheduleGraph:
    """The stages a schedule computes: effective bodies (inlining applied), reads, producer-first order."""

    def __init__(self, sch):
        self.sch = sch
        self._bodies: dict = {}
        self._busy: set = set()
        self.order: list = []  # compute stages that are not inlined, producers first
        self.reads: dict = {}  # stage -> ProducerLoads of its effective body
        self.placeholders: list = []
        self.consumers: dict = {}  # stage -> stages reading it
        self._build()

    def stage_of(self, tensor):
        stage = self.sch.stage_map.get(tensor.op)
        if stage is None:
            raise TIRError(f"lower: tensor {tensor.name} is read but its operation is not part of the schedule")
        return stage

    def effective_body(self, stage) -> tuple:
        body = self._bodies.get(stage)
        if body is None:
            if stage in self._busy:
                raise TIRError(f"lower: stage {stage.op.name} reads itself through inlined stages")
            self._busy.add(stage)
            body = rewrite_bodies(stage.op.body, _Inliner(self).visit_expr)
            self._busy.discard(stage)
            self._bodies[stage] = body
        return body

    def _loads(self, stage):
        op = stage.op
        if isinstance(op, ExternOp):  # its statement may read any element of its inputs
            return [E.ProducerLoad(t, tuple(c(d) for d in t.shape)) for t in op.inputs
                    for c in (lambda d: E.IntImm(d.dtype, 0), lambda d: _op.subtract(d, 1))]
        if isinstance(op, ScanOp):  # step t of each update (its spatial axes swept), and the init
            out, k = [], 0
            for u, i in zip(op.update, op.init, strict=True):
                spatial = [iv.var for iv in op.spatial_axis_[k:k + len(u.shape) - 1]]
                k += len(u.shape) - 1
                out += [E.ProducerLoad(u, (op.scan_axis.var, *spatial)), E.ProducerLoad(i, (0, *spatial))]
            return out
        if isinstance(stage.op, TensorComputeOp):  # the corners of each slice the intrinsic reads
            ana = Analyzer()
            corners = (lambda r: r.min, lambda r: ana.simplify(_op.subtract(_op.add(r.min, r.extent), 1)))
            return [E.ProducerLoad(t, tuple(f(r) for r in region))
                    for t, region in zip(stage.op.inputs, stage.op.regions, strict=True) for f in corners]
        out = []
        for b in self.effective_body(stage):
            post_order_visit(b, lambda n: out.append(n) if isinstance(n, E.ProducerLoad) else None)
        return out

    def _build(self):
        seen = set()
        outputs = [self.sch.stage_map[op] for op in self.sch.outputs]
        for root in outputs:
            stack = [(root, False)]
            while stack:
                stage, ready = stack.pop()
                if ready:
                    self.order.append(stage)
                    continue
                if stage in seen:
                    continue
                seen.add(stage)
                if isinstance(stage.op, PlaceholderOp):
                    self.placeholders.append(stage)
                    continue
                if not isinstance(stage.op, ComputeOp | TensorComputeOp | ScanOp | ExternOp):
                    raise TIRError(f"lower: stage {stage.op.name} is a {type(stage.op).__name__}, which kiln cannot "
                                   "lower from a schedule")
                if stage.attach_type == "inline" and stage.is_output:
                    raise TIRError(f"lower: output stage {stage.op.name} cannot be inlined")
                loads = self._loads(stage)
                self.reads[stage] = loads
                stack.append((stage, True))
                for load in reversed(loads):
                    producer = self.stage_of(load.producer)
                    self.consumers.setdefault(producer, [])
                    if stage not in self.consumers[producer]:
                        self.consumers[producer].append(stage)
                    if producer not in seen:
                        stack.append((producer, False))


class StageInfo:
    """What bound inference found for one stage.

    Attributes
    ----------
    root_ranges : dict
        Root IterVar -> Range of the region computed (data axes) or the declared domain (reduction axes).
    extents : dict
        IterVar (root, derived or leaf) -> loop extent (every loop starts at 0).
    values : dict
        IterVar -> its value in terms of the leaf loop variables; for root axes the absolute index.
    checks : list of (IterVar, PrimExpr)
        Conditions the body needs (tails of splits that do not divide), with the axis each protects.
    scope_vars : set of int
        ids of the loop variables enclosing the stage's attach point.
    """

    def __init__(self, stage):
        self.stage = stage
        self.root_ranges: dict = {}
        self.extents: dict = {}
        self.values: dict = {}
        self.checks: list = []
        self.scope_vars: set = set()
        self.rank = 0  # storage rank (0 global, 1 shared, 2 warp, 3 local)

    def leaf_range(self, iv):
        return Range.from_min_extent(E.IntImm(iv.var.dtype, 0), self.extents[iv])


def attach_index(stage):
    """The index, among its parent's loops, of the loop ``stage`` is computed in. When the axis it was attached at
    has been split or fused since, TVM's legalization applies: the attachment follows a split to its inner loop and
    a fuse to the fused loop. None when the axis is no loop of the parent at all."""
    spec = stage.attach_spec()
    if spec.attach_type == "scan_update":  # a scan's body runs in its time loop
        return 0
    parent, iv = spec.attach_stage, spec.attach_ivar
    while not any(v is iv for v in parent.leaf_iter_vars):
        nxt = next((r.inner for r in parent.relations if isinstance(r, Split) and r.parent is iv), None)
        if nxt is None:
            nxt = next((r.fused for r in parent.relations if isinstance(r, Fuse) and (r.outer is iv or r.inner is iv)),
                       None)
        if nxt is None:
            return None
        iv = nxt
    return next(k for k, v in enumerate(parent.leaf_iter_vars) if v is iv)


def attach_path(stage):
    """The (parent stage, leaf index) pairs enclosing ``stage``'s loops, outermost first."""
    path, seen = [], set()
    while stage.attach_spec().attach_type in ("scope", "scan_update"):
        if stage in seen:
            raise TIRError(f"lower: compute_at forms a cycle through stage {stage.op.name}")
        seen.add(stage)
        parent = stage.attach_spec().attach_stage
        if parent is stage:
            raise TIRError(f"lower: stage {stage.op.name} is attached to itself (compute_at of its own loop)")
        if parent.attach_type == "inline":
            raise TIRError(f"lower: stage {stage.op.name} is attached to {parent.op.name}, which is inlined")
        index = attach_index(stage)
        if index is None:
            where = stage.attach_spec().attach_ivar.var.name_hint
            raise TIRError(f"lower: stage {stage.op.name} is attached at {where}, which is no longer a loop of stage "
                           f"{parent.op.name} (it was split or fused after compute_at)")
        path.append((parent, index))
        stage = parent
    return list(reversed(path))


def _inside(consumer, producer_path) -> bool:
    """Whether ``consumer``'s computation runs inside the attach point ``producer_path`` (so it can read the
    producer's buffer)."""
    if not producer_path:
        return True
    position = attach_path(consumer) + [(consumer, float("inf"))]
    *outer, (parent, index) = producer_path
    if position[:len(outer)] != outer or len(position) <= len(outer):
        return False
    stage, k = position[len(outer)]
    return stage is parent and k >= index


# TVM's storage ranks (runtime::StorageRank) and thread ranks (ThreadScope): a stage stored at rank r is shared by
# every thread of rank >= r, so its region must cover the loops bound to those threads (TVM's NeedRelax)
_STORAGE_RANK = {"global": 0, "shared": 1, "warp": 2, "local": 3}


def _thread_rank(tag) -> tuple:
    """(rank, dimension index) of a thread tag: blockIdx 0, threadIdx and virtual threads 1; None for a loop."""
    if tag.startswith("blockIdx."):
        return 0, "xyz".index(tag[-1])
    if tag.startswith("threadIdx."):
        return 1, "xyz".index(tag[-1])
    if tag.startswith("vthread") or tag == "cthread":
        return 1, -1
    return None


def storage_rank(stage, path) -> int:
    """The storage rank of ``stage``: its scope's when set, else by the threads enclosing its attach point (none:
    global, blocks: shared, threads: local), as TVM's InferStorageScope."""
    if stage.scope_explicit or stage.scope != "global":
        return _STORAGE_RANK.get(stage.scope.split(".")[0], 0)
    top = -1
    for parent, index in path:
        for iv in parent.leaf_iter_vars[:index + 1]:
            attr = parent.iter_var_attrs.get(iv)
            bound = attr is not None and attr.bind_thread is not None
            rank = _thread_rank(attr.bind_thread.thread_tag) if bound else None
            if rank is not None:
                top = max(top, rank[0])
    return {-1: 0, 0: 1}.get(top, 3)


def _need_relax(tag, rank) -> bool:
    thread = _thread_rank(tag)
    if thread is None:
        return False
    if rank == _STORAGE_RANK["warp"] and thread == (1, 0):
        return True
    return rank <= thread[0]


class _BoundInference:
    def __init__(self, graph, full):
        self.graph = graph
        # a scan's init steps are stored whole in the scan's buffer
        self.full = full | {graph.stage_of(t) for s in graph.order if isinstance(s.op, ScanOp) for t in s.op.init}
        self.ana = Analyzer()
        self.infos: dict = {}
        self.leaf_ranges: dict = {}  # id(var) -> (var, Range) of every leaf loop seen so far
        self.leaf_threads: dict = {}  # id(var) -> the thread IterVar a leaf loop is bound to

    def run(self):
        for stage in reversed(self.graph.order):
            self.infos[stage] = self.infer_stage(stage)
        return self.infos

    def infer_stage(self, stage):
        info = StageInfo(stage)
        op = stage.op
        if isinstance(op, ScanOp | ExternOp):  # a scan's loop is its time axis; an extern has none
            info.root_ranges = {iv: iv.dom for iv in getattr(op, "root_iter_vars", ())}
            self.pass_down(stage, info)
            self.pass_up(stage, info)
            return info
        path = attach_path(stage)
        info.rank = rank = storage_rank(stage, path)
        for parent, index in path:
            for iv in parent.leaf_iter_vars[:index + 1]:
                attr = parent.iter_var_attrs.get(iv)
                if attr is None or attr.bind_thread is None or not _need_relax(attr.bind_thread.thread_tag, rank):
                    info.scope_vars.add(id(iv.var))
        consumers = self.graph.consumers.get(stage, [])
        for c in consumers:
            if not _inside(c, path):
                raise TIRError(f"lower: stage {op.name} is computed inside stage {path[-1][0].op.name} (compute_at) "
                               f"but stage {c.op.name} reads it outside that loop")
        if stage.is_output or stage in self.full or not consumers:
            regions = [iv.dom for iv in op.axis]
        else:
            regions = self.consumer_region(stage, info, consumers)
        for iv, rng in zip(op.axis, regions, strict=True):
            info.root_ranges[iv] = rng
        for iv in op.reduce_axis:
            info.root_ranges[iv] = iv.dom
        self.pass_down(stage, info)
        self.pass_up(stage, info)
        return info

    # ---- 1. root domain from the consumers' reads
    def consumer_region(self, stage, info, consumers):
        # a loop bound to a thread this storage is private to stays fixed: it is the same thread in every stage,
        # so the region is written in the thread's variable
        relax, threads = {}, {}
        for key, (var, rng) in self.leaf_ranges.items():
            thread = self.leaf_threads.get(key)
            if thread is not None and not _need_relax(thread.thread_tag, info.rank):
                threads[var] = thread.var
                continue
            if thread is not None:  # a consumer's region may be written in the thread's variable: relax that too
                relax[thread.var] = rng
            if key not in info.scope_vars:
                relax[var] = rng
        lows, highs = [None] * len(stage.op.axis), [None] * len(stage.op.axis)
        unbounded = [False] * len(stage.op.axis)
        for c in consumers:
            cinfo = self.infos[c]
            vmap = {iv.var: cinfo.values[iv] for iv in cinfo.root_ranges}
            for load in self.graph.reads[c]:
                if self.graph.stage_of(load.producer) is not stage:
                    continue
                for d, index in enumerate(load.indices):
                    s = eval_set(substitute(substitute(index, vmap), threads), relax, self.ana)
                    if not s.is_bounded():
                        unbounded[d] = True
                        continue
                    lows[d] = s.min_value if lows[d] is None else self._pick(lows[d], s.min_value, _op.minimum, True)
                    highs[d] = s.max_value if highs[d] is None else self._pick(highs[d], s.max_value, _op.maximum,
                                                                               False)
        regions = []
        for d, iv in enumerate(stage.op.axis):
            dom = iv.dom
            if unbounded[d] or lows[d] is None:
                regions.append(dom)
                continue
            dom_max = _op.subtract(_op.add(dom.min, dom.extent), 1)
            lo = dom.min if self.ana.can_prove(_op.less_equal(lows[d], dom.min)) else lows[d]
            hi = dom_max if self.ana.can_prove(_op.greater_equal(highs[d], dom_max)) else highs[d]
            lo, hi = self.ana.simplify(lo), self.ana.simplify(hi)
            regions.append(Range.from_min_extent(lo, self.ana.simplify(_op.add(_op.subtract(hi, lo), 1))))
        return regions

    def _pick(self, a, b, combine, lower):
        """min (lower) or max of two bounds, without a Min/Max node when one provably wins."""
        if self.ana.can_prove(_op.less_equal(a, b)):
            return a if lower else b
        if self.ana.can_prove(_op.less_equal(b, a)):
            return b if lower else a
        return combine(a, b)

    # ---- 2. leaf extents
    def pass_down(self, stage, info):
        ext = info.extents
        for iv, rng in info.root_ranges.items():
            ext[iv] = self.ana.simplify(rng.extent)
        for rel in stage.relations:
            if isinstance(rel, Split):
                outer, inner = split_extent(rel, ext[rel.parent])
                ext[rel.outer], ext[rel.inner] = self.ana.simplify(outer), self.ana.simplify(inner)
            elif isinstance(rel, Fuse):
                ext[rel.fused] = self.ana.simplify(_op.multiply(ext[rel.outer], ext[rel.inner]))
            elif isinstance(rel, Singleton):
                ext[rel.iter] = E.IntImm(rel.iter.var.dtype, 1)
            elif isinstance(rel, Transform):
                if not all(_is_zero(info.root_ranges[o].min) for o in rel.original):
                    raise TIRError(f"lower: stage {stage.op.name} has a layout transformation, so it must compute "
                                   "its whole domain (it cannot be attached inside another stage's loop)")
                for iv, e in zip(rel.transformed, rel.forward.map_shape([ext[o] for o in rel.original]), strict=True):
                    ext[iv] = self.ana.simplify(e)
        for iv in stage.leaf_iter_vars:
            rng = info.leaf_range(iv)
            self.leaf_ranges[id(iv.var)] = (iv.var, rng)
            self.ana.bind(iv.var, rng, allow_override=True)
            attr = stage.iter_var_attrs.get(iv)
            if attr is not None and attr.bind_thread is not None and _thread_rank(attr.bind_thread.thread_tag):
                self.leaf_threads[id(iv.var)] = attr.bind_thread
                self.ana.bind(attr.bind_thread.var, rng, allow_override=True)

    # ---- 3. index values and checks
    def pass_up(self, stage, info):
        val, ext = info.values, info.extents
        for iv in stage.leaf_iter_vars:
            val[iv] = E.IntImm(iv.var.dtype, 0) if _is_one(ext[iv]) else iv.var
        for rel in reversed(stage.relations):
            if isinstance(rel, Split):
                factor = rel.factor if rel.factor is not None else ext[rel.inner]
                val[rel.parent] = self.ana.simplify(_op.add(_op.multiply(val[rel.outer], factor), val[rel.inner]))
                amount = rel.factor if rel.factor is not None else rel.nparts
                if not self.ana.can_prove(_op.equal(_op.floormod(ext[rel.parent], amount), 0)):
                    self._check(info, rel.parent, val[rel.parent], 0, ext[rel.parent])
            elif isinstance(rel, Transform):
                values = rel.inverse.map_indices([val[t] for t in rel.transformed])
                for o, v in zip(rel.original, values, strict=True):
                    val[o] = self.ana.simplify(v)
            elif isinstance(rel, Fuse) and isinstance(ext[rel.inner], E.IntImm) and ext[rel.inner].value == 0:
                # an empty tensor (split's zero-length part): the fused loop never runs, its values are moot
                val[rel.outer] = val[rel.inner] = E.IntImm(rel.fused.var.dtype, 0)
            elif isinstance(rel, Fuse):
                val[rel.outer] = self.ana.simplify(_op.floordiv(val[rel.fused], ext[rel.inner]))
                val[rel.inner] = self.ana.simplify(_op.floormod(val[rel.fused], ext[rel.inner]))
        for iv, rng in info.root_ranges.items():  # (a tensor compute's block dimensions are no loops: 0)
            val[iv] = self.ana.simplify(_op.add(rng.min, val.get(iv, E.IntImm(iv.var.dtype, 0))))
            dom = iv.dom
            end, dom_end = _op.add(rng.min, rng.extent), _op.add(dom.min, dom.extent)
            inside = (self.ana.can_prove(_op.greater_equal(rng.min, dom.min))
                      and self.ana.can_prove(_op.less_equal(end, dom_end)))
            if not inside:
                self._check(info, iv, val[iv], dom.min, _op.add(dom.min, dom.extent), lower=True)

    def _check(self, info, iv, value, lo, hi, lower=False):
        """Record ``lo <= value < hi`` (the parts the loop ranges do not already prove)."""
        s = eval_set(value, {var: rng for var, rng in self.leaf_ranges.values()}, self.ana)
        if not (s.has_upper_bound() and self.ana.can_prove(_op.less(s.max_value, hi))):
            info.checks.append((iv, _op.less(value, hi)))
        if lower and not (s.has_lower_bound() and self.ana.can_prove(_op.greater_equal(s.min_value, lo))):
            info.checks.append((iv, _op.greater_equal(value, lo)))


def _is_one(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 1


def _is_zero(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0


def infer_bound(sch, graph=None, full=()) -> dict:
    """Bound inference over a schedule: ``{stage: StageInfo}`` for every compute stage that is not inlined.

    Stages in ``full`` (those whose tensors are function arguments) compute their whole domain, as outputs do.

    Examples
    --------
    >>> infos = infer_bound(s)                          # doctest: +SKIP
    >>> infos[s[C]].extents[xo]                         # doctest: +SKIP
    32
    """
    graph = graph or ScheduleGraph(sch)
    for stage in graph.order:
        if not isinstance(stage.op, ComputeOp | TensorComputeOp | ScanOp | ExternOp):
            raise TIRError(f"lower: stage {stage.op.name} has an unsupported operation {type(stage.op).__name__}")
    return _BoundInference(graph, set(full)).run()
