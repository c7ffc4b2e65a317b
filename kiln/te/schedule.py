"""Schedules (TVM's ``te.Schedule`` and ``te.Stage``): how the loop nests of tensor expressions are arranged.

A :class:`Schedule` holds one :class:`Stage` per operation reachable from its outputs. A stage starts with one loop
per root axis of its operation (the data-parallel ``axis``, then the ``reduce_axis``) and is rearranged by the
scheduling primitives, each recording what it did:

* ``split(axis, factor)`` / ``split(axis, nparts=n)`` replaces a leaf axis by ``outer`` and ``inner`` (a
  :class:`Split` relation: ``axis = outer * factor + inner``); ``fuse(a, b)`` replaces two adjacent leaf axes by one
  (a :class:`Fuse` relation: ``a = fused // extent(b)``, ``b = fused % extent(b)``); ``tile`` is two splits and a
  reorder; ``reorder`` permutes leaf axes;
* ``parallel``, ``vectorize``, ``unroll`` choose how a leaf axis' loop runs;
* ``compute_at(parent, axis)`` computes the stage inside ``parent``'s loop over ``axis`` (only the part that
  iteration needs), ``compute_inline()`` substitutes its expression into its consumers, ``compute_root()`` undoes both;
* ``Schedule.cache_write`` / ``cache_read`` (:mod:`kiln.te.schedule_cache`) stage data through scratch buffers.

Stages are mutable, as in TVM; :func:`kiln.lower` checks and builds the loop nest (:mod:`kiln.te.bound`,
:mod:`kiln.te.schedule_ops`)."""

from dataclasses import dataclass, field

from ..error import TIRError
from ..tir import expr as E
from ..tir import op as _op
from ..tir.expr_reduce import IterVar, IterVarType
from .tensor import ComputeOp, Operation, Tensor
from .tensor_compute import TensorComputeOp

__all__ = ["Schedule", "Stage", "Split", "Fuse", "Singleton", "IterVar", "IterVarAttr", "create_schedule"]

# how a leaf loop runs: the IterVarAttr.iter_type values the scheduling primitives set
PARALLEL, VECTORIZE, UNROLL = IterVarType.Parallelized, IterVarType.Vectorized, IterVarType.Unrolled


@dataclass(eq=False)
class IterVarAttr:
    """What the schedule says about one axis of a stage (TVM's ``IterVarAttr``): how its loop runs
    (``iter_type``: ``IterVar.Parallelized``, ``Vectorized``, ``Unrolled``), the thread it is bound to
    (``bind_thread``), its pragmas (``pragma_keys``/``pragma_values``, emitted as ``pragma_<key>`` attributes
    around the loop) and the tensor intrinsic computing the loops from it inward (``tensor_intrin``)."""

    iter_type: IterVarType = IterVarType.DataPar
    bind_thread: IterVar | None = None
    pragma_keys: list = field(default_factory=list)
    pragma_values: list = field(default_factory=list)
    tensor_intrin: object = None


@dataclass(eq=False)
class Split:
    """``parent = outer * factor + inner`` (``factor`` is None when the split was given ``nparts``)."""

    parent: IterVar
    outer: IterVar
    inner: IterVar
    factor: E.PrimExpr | None
    nparts: E.PrimExpr | None


@dataclass(eq=False)
class Fuse:
    """``fused`` iterates over ``outer`` x ``inner``: ``outer = fused // extent(inner)``, ``inner = fused % ...``."""

    outer: IterVar
    inner: IterVar
    fused: IterVar


@dataclass(eq=False)
class Singleton:
    """``iter`` is a loop of one iteration (``fuse()`` of no axes makes one, as a stage's outermost loop)."""

    iter: IterVar


def _derived(name, like):
    return IterVar(None, E.Var(name, like.var.dtype), like.iter_type)


class Stage:
    """The schedule of one operation (TVM's ``te.Stage``); get it with ``s[tensor]``.

    Attributes
    ----------
    op : Operation
        The operation computed (``cache_write`` replaces it; ``origin_op`` is the one the stage was made for).
    all_iter_vars : list of IterVar
        Root axes and every axis a relation made.
    leaf_iter_vars : list of IterVar
        The loops, outermost first.
    relations : list of Split or Fuse
        How leaf axes derive from root axes, in the order they were made.
    iter_var_attrs : dict
        IterVar -> "parallel", "vectorize" or "unroll".
    attach_type : str
        "root", "scope" (``compute_at``) or "inline".
    scope : str
        Storage scope of an intermediate result ("global", "local").
    """

    def __init__(self, op, schedule=None):
        self.op = op
        self.origin_op = op
        self.schedule = schedule
        self.all_iter_vars = list(getattr(op, "root_iter_vars", ()))
        self.leaf_iter_vars = list(self.all_iter_vars)
        self.relations: list = []
        self.iter_var_attrs: dict = {}
        self.attach_type = "root"
        self.attach_ivar = None
        self.attach_stage = None
        self.scope = "global"
        self.scope_explicit = False  # set_scope("global") differs from no scope in bound inference (as in TVM)
        self.group = None  # the group stage (Schedule.create_group) holding this one
        self.layout_transforms, self.axis_separators = [], []  # see transform_layout
        self.num_child_stages = 0  # for a group: how many stages and groups it holds
        self.is_output = False

    # ---- helpers
    def _name(self):
        return self.op.name if self.op is not None else "group"

    def attach_spec(self):
        """The stage whose attachment places this one: itself, or for a stage left at the root inside a group,
        the innermost enclosing group that is attached somewhere (TVM's GetAttachSpec)."""
        if self.attach_type == "root":
            g = self.group
            while g is not None:
                if g.attach_type != "root":
                    return g
                g = g.group
        return self

    def _leaf_index(self, iv, what) -> int:
        if not isinstance(iv, IterVar):
            raise TIRError(f"{what} of stage {self._name()}: expected an IterVar (an axis), got {type(iv).__name__}")
        for k, leaf in enumerate(self.leaf_iter_vars):
            if leaf is iv:
                return k
        leaves = ", ".join(v.var.name_hint for v in self.leaf_iter_vars)
        raise TIRError(f"{what} of stage {self._name()}: {iv.var.name_hint} is not a loop of the stage "
                       f"(its loops are: {leaves})")

    def _check_compute(self, what):
        if not isinstance(self.op, ComputeOp | TensorComputeOp):
            raise TIRError(f"{what}: stage {self._name()} is a {type(self.op).__name__}, not a compute stage")

    # ---- loop structure
    def split(self, parent, factor=None, nparts=None):
        """Split ``parent`` into ``(outer, inner)`` with ``inner`` of extent ``factor`` (or ``outer`` of extent
        ``nparts``). A factor that does not divide the extent is allowed: the tail is guarded.

        Returns
        -------
        outer, inner : IterVar
        """
        self._check_compute("split")
        k = self._leaf_index(parent, "split")
        if (factor is None) == (nparts is None):
            raise TIRError(f"split of {parent.var.name_hint} in stage {self._name()}: give exactly one of factor "
                           "and nparts")
        amount = E.convert(factor if factor is not None else nparts, parent.var.dtype)
        if isinstance(amount, E.IntImm) and amount.value <= 0:
            raise TIRError(f"split of {parent.var.name_hint} in stage {self._name()}: the factor must be positive, "
                           f"got {amount.value}")
        name = parent.var.name_hint
        outer, inner = _derived(f"{name}.outer", parent), _derived(f"{name}.inner", parent)
        self.relations.append(Split(parent, outer, inner, amount if factor is not None else None,
                                    amount if nparts is not None else None))
        self.all_iter_vars += [outer, inner]
        self.leaf_iter_vars[k:k + 1] = [outer, inner]
        return outer, inner

    def fuse(self, *args):
        """Fuse adjacent loops (outermost first) into one.

        Returns
        -------
        fused : IterVar
        """
        self._check_compute("fuse")
        if len(args) == 1 and isinstance(args[0], list | tuple):
            args = tuple(args[0])
        if not args:
            # TVM's singleton: a new outermost loop of one iteration (a place to attach or bind at)
            single = IterVar(E.Range(E.IntImm("int32", 0), E.IntImm("int32", 1)), E.Var("singleton", "int32"))
            self.relations.append(Singleton(single))
            self.all_iter_vars.append(single)
            self.leaf_iter_vars.insert(0, single)
            return single
        fused = args[0]
        for inner in args[1:]:
            fused = self._fuse2(fused, inner)
        return fused

    def _fuse2(self, outer, inner):
        ko, ki = self._leaf_index(outer, "fuse"), self._leaf_index(inner, "fuse")
        if ki + 1 == ko:
            outer, inner, ko, ki = inner, outer, ki, ko
        if ki != ko + 1:
            raise TIRError(f"fuse in stage {self._name()}: {outer.var.name_hint} and {inner.var.name_hint} are not "
                           "adjacent loops (reorder them first)")
        if not {outer.iter_type, inner.iter_type} <= {IterVarType.DataPar, IterVarType.CommReduce}:
            raise TIRError(f"fuse in stage {self._name()}: cannot fuse {outer.var.name_hint} and {inner.var.name_hint}")
        like = inner if inner.iter_type == IterVarType.CommReduce else outer  # mixed: a reduction axis, as TVM's
        fused = _derived(f"{outer.var.name_hint}.{inner.var.name_hint}.fused", like)
        self.relations.append(Fuse(outer, inner, fused))
        self.all_iter_vars.append(fused)
        self.leaf_iter_vars[ko:ki + 1] = [fused]
        return fused

    def reorder(self, *args):
        """Put the given loops in this order, in the positions they occupy now."""
        self._check_compute("reorder")
        if len(args) == 1 and isinstance(args[0], list | tuple):
            args = tuple(args[0])
        positions = [self._leaf_index(iv, "reorder") for iv in args]
        if len(set(positions)) != len(positions):
            raise TIRError(f"reorder in stage {self._name()}: an axis is given twice")
        for pos, iv in zip(sorted(positions), args, strict=True):
            self.leaf_iter_vars[pos] = iv

    def tile(self, x_parent, y_parent, x_factor, y_factor):
        """Split two loops and order them ``x_outer, y_outer, x_inner, y_inner`` (a 2-D tiling).

        Returns
        -------
        x_outer, y_outer, x_inner, y_inner : IterVar
        """
        xo, xi = self.split(x_parent, factor=x_factor)
        yo, yi = self.split(y_parent, factor=y_factor)
        self.reorder(xo, yo, xi, yi)
        return xo, yo, xi, yi

    # ---- loop kinds
    def _attr(self, iv, what):
        self._check_compute(what)
        if not any(v is iv for v in self.all_iter_vars):
            raise TIRError(f"{what} in stage {self._name()}: {getattr(iv, 'var', iv)} is not an axis of the stage")
        return self.iter_var_attrs.setdefault(iv, IterVarAttr())

    def _annotate(self, iv, kind):
        what = kind.name.lower()
        attr = self._attr(iv, what)
        if kind in (PARALLEL, VECTORIZE) and iv.iter_type == IterVarType.CommReduce:
            raise TIRError(f"{what} in stage {self._name()}: {iv.var.name_hint} is a reduction axis; running its "
                           "iterations in parallel or as vector lanes would race on the result (rfactor it first)")
        attr.iter_type = kind

    def parallel(self, var):
        """Run the loop over ``var`` on all cores (an outer loop, ideally)."""
        self._annotate(var, PARALLEL)

    def vectorize(self, var):
        """Turn the loop over ``var`` into vector instructions (an innermost loop of constant extent)."""
        self._annotate(var, VECTORIZE)

    def unroll(self, var):
        """Unroll the loop over ``var``."""
        self._annotate(var, UNROLL)

    def pragma(self, var, pragma_type, pragma_value=None):
        """Annotate the loop over ``var`` with ``pragma_<pragma_type>`` (an ``AttrStmt`` around it whose value is
        ``pragma_value``, 1 when none); ``pragma(var, "unroll")``/``"vectorize"`` are the same as ``unroll``/
        ``vectorize``."""
        if pragma_type == "unroll":
            return self.unroll(var)
        if pragma_type == "vectorize":
            return self.vectorize(var)
        attr = self._attr(var, "pragma")
        attr.pragma_keys.append(E.StringImm(str(pragma_type)))
        attr.pragma_values.append(E.convert(1 if pragma_value is None else pragma_value))
        return None

    def tensorize(self, var, tensor_intrin):
        """Compute the loops from ``var`` inward with a tensor intrinsic (see :mod:`kiln.te.tensor_intrin`)."""
        self._attr(var, "tensorize").iter_type = IterVarType.Tensorized
        self.iter_var_attrs[var].tensor_intrin = tensor_intrin

    def bind(self, ivar, thread_ivar):
        """Run the loop over ``ivar`` as the thread index ``thread_ivar`` (``te.thread_axis("threadIdx.x")``):
        it becomes a ``thread_extent`` attribute, each thread computing one iteration."""
        attr = self._attr(ivar, "bind")
        if not isinstance(thread_ivar, IterVar) or thread_ivar.iter_type != IterVarType.ThreadIndex:
            raise TIRError(f"bind in stage {self._name()}: expected a thread axis (te.thread_axis), got "
                           f"{thread_ivar!r}")
        if ivar.iter_type == IterVarType.CommReduce and not thread_ivar.thread_tag.startswith(
                ("threadIdx", "blockIdx")):
            raise TIRError(f"bind in stage {self._name()}: cannot bind the reduction axis {ivar.var.name_hint}")
        attr.bind_thread = thread_ivar

    def transform_layout(self, mapping_function):
        """Store the output in the layout ``mapping_function`` gives (see :mod:`kiln.te.schedule_layout`)."""
        from .schedule_layout import transform_layout

        return transform_layout(self, mapping_function)

    # ---- placement
    def compute_at(self, parent, scope):
        """Compute this stage inside ``parent``'s loop over ``scope``, only the region that iteration reads.
        Attachments that cannot be built (to the stage itself, in a cycle) are refused by ``lower``, as in TVM."""
        if self.op is not None:  # a group has no operation of its own
            self._check_compute("compute_at")
        if not isinstance(parent, Stage):
            raise TIRError(f"compute_at of stage {self._name()}: parent must be a Stage (s[tensor])")
        group = self.group  # only within its group: the parent must be in it too (TVM's group constraint)
        pg = parent.group
        while pg is not None and pg is not group:
            pg = pg.group
        if pg is not group:
            raise TIRError(f"compute_at of stage {self._name()}: stage {parent._name()} is outside its group")
        if not any(v is scope for v in parent.all_iter_vars):
            raise TIRError(f"compute_at of stage {self._name()}: {getattr(scope, 'var', scope)} is not an axis of "
                           f"stage {parent._name()}")
        self.attach_type, self.attach_stage, self.attach_ivar = "scope", parent, scope

    def compute_inline(self):
        """Substitute this stage's expression into every consumer instead of storing it."""
        self._check_compute("compute_inline")
        if self.op.reduce_axis:
            raise TIRError(f"compute_inline: stage {self._name()} is a reduction and cannot be inlined")
        if self.is_output:
            raise TIRError(f"compute_inline: stage {self._name()} is an output of the schedule")
        self.attach_type, self.attach_stage, self.attach_ivar = "inline", None, None

    def compute_root(self):
        """Compute this stage at the top level of the function (the default)."""
        self.attach_type, self.attach_stage, self.attach_ivar = "root", None, None

    def set_scope(self, scope):
        """Store this stage's result in ``scope`` ("global", "local")."""
        self.scope = str(scope)
        self.scope_explicit = True

    def __repr__(self):
        return f"stage({self._name()}, {type(self.op).__name__})"


class Schedule:
    """The stages of every operation reachable from ``outputs`` (TVM's ``te.Schedule``): ``s[C]`` is C's stage."""

    def __init__(self, outputs):
        from .schedule_record import keep_record, record

        self.outputs = list(outputs)
        self.stages: list = []
        self.stage_map: dict = {}
        self.groups: list = []
        self.keep_record, self.schedule_record, self.primitive_record = keep_record(), [], []
        self._recording = 0
        for op in _post_dfs(self.outputs):
            stage = Stage(op, self)
            self.stages.append(stage)
            self.stage_map[op] = stage
        for op in self.outputs:
            self.stage_map[op].is_output = True
        from .schedule_group import group_scan_bodies

        group_scan_bodies(self)
        record(self, "vanilla")

    def __getitem__(self, key) -> Stage:
        op = key.op if isinstance(key, Tensor) else key
        stage = self.stage_map.get(op)
        if stage is None:
            name = getattr(op, "name", repr(op))
            raise TIRError(f"schedule: {name} is not an operation of this schedule (it is not computed for its "
                           "outputs)")
        return stage

    def normalize(self):
        """Return the schedule (kiln's loops always start at 0; TVM's normalization has nothing to do)."""
        return self

    def cache_write(self, tensor, scope):
        """Compute ``tensor`` into a ``scope`` buffer first and copy it out (see :mod:`kiln.te.schedule_cache`).

        Returns
        -------
        cache : Tensor
            The cache tensor (a list for a multi-output operation).
        """
        from .schedule_cache import cache_write

        return cache_write(self, tensor, scope)

    def cache_read(self, tensor, scope, readers):
        """Copy ``tensor`` into a ``scope`` buffer that ``readers`` read instead.

        Returns
        -------
        cache : Tensor
        """
        from .schedule_cache import cache_read

        return cache_read(self, tensor, scope, readers)

    def create_group(self, outputs, inputs, include_inputs=False):
        """A group (a Stage) of the stages between ``inputs`` and ``outputs`` (see :mod:`kiln.te.schedule_group`)."""
        from .schedule_group import create_group

        return create_group(self, outputs, inputs, include_inputs)

    def rfactor(self, tensor, axis, factor_axis=0):
        """Factor the reduction computing ``tensor`` over its loop ``axis`` into a new stage (see
        :mod:`kiln.te.schedule_rfactor`).

        Returns
        -------
        rf : Tensor
            The factored tensor (one more axis, at ``factor_axis``, running over ``axis``).
        """
        from .schedule_rfactor import rfactor

        return rfactor(self, tensor, axis, factor_axis)

    def _insert(self, stage, position):
        self.stages.insert(position, stage)
        self.stage_map[stage.op] = stage

    def __repr__(self):
        return f"Schedule(outputs=[{', '.join(op.name for op in self.outputs)}])"


def _post_dfs(outputs, reads=None):
    """Operations reachable from ``outputs``, producers before consumers; ``reads(op)`` gives the tensors ``op``
    reads (its input tensors unless given)."""
    order, seen = [], set()
    for root in outputs:
        stack = [(root, False)]
        while stack:
            op, ready = stack.pop()
            if ready:
                order.append(op)
                continue
            if id(op) in seen:
                continue
            seen.add(id(op))
            stack.append((op, True))
            for t in reversed(list(op.input_tensors if reads is None else reads(op))):
                if id(t.op) not in seen:
                    stack.append((t.op, False))
    return order


def create_schedule(ops) -> Schedule:
    """A default schedule for ``ops`` (an operation, a tensor, or a list of them): every stage at the top level
    with one loop per axis (TVM's ``te.create_schedule``).

    Examples
    --------
    >>> s = te.create_schedule(C.op)        # doctest: +SKIP
    >>> xo, xi = s[C].split(C.op.axis[0], factor=32)     # doctest: +SKIP
    """
    if not isinstance(ops, list | tuple):
        ops = [ops]
    out = []
    for op in ops:
        op = op.op if isinstance(op, Tensor) else op
        if not isinstance(op, Operation):
            raise TIRError(f"create_schedule: expected operations (tensor.op), got {type(op).__name__}")
        out.append(op)
    return Schedule(out)


def split_extent(rel, parent_extent):
    """The (outer, inner) extents of a Split of a loop of ``parent_extent`` iterations."""
    if rel.factor is not None:
        return _ceil_div(parent_extent, rel.factor), rel.factor
    return rel.nparts, _ceil_div(parent_extent, rel.nparts)


def _ceil_div(a, b):
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return E.IntImm(a.dtype, -(-a.value // b.value))
    return _op.floordiv(_op.add(a, _op.subtract(b, 1)), b)


_LAZY = {**dict.fromkeys(("InferBound", "ScheduleOps", "AutoInlineElemWise", "AutoInlineBroadcast",
                          "AutoInlineInjective"), "schedule_passes"),
         **dict.fromkeys(("CreateReadGraph", "PostDFSOrder", "CreateAttachPath", "ScanGetBody",
                          "ScanFixPointAnalysis"), "graph")}


def __getattr__(name):
    """TVM's ``te.schedule.InferBound``, ``CreateReadGraph``... (modules that import this one, looked up on first
    use) and ``te.schedule.Buffer`` (``tir.Buffer``, the type of te.extern's buffers)."""
    import importlib

    if name == "Buffer":
        return importlib.import_module("..tir.buffer", __package__).Buffer
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


from .schedule_record import install as _install_record  # noqa: E402  (wraps the primitives defined above)

_install_record(Stage, Schedule)
