"""The TE compiler: one ``Primitive`` Relay function to one ``tir.PrimFunc`` (TVM's ``te_compiler.cc``).

How a fused group is lowered (:func:`lower_primitive`):

1. every parameter becomes a ``te.placeholder`` (a tuple-typed parameter one placeholder per field, flattened in
   order, so the PrimFunc only ever takes tensors);
2. the body is walked in dataflow order; each operator call goes through the
   :class:`~kiln.relay.backend.schedule_builder.ScheduleBuilder`, which calls the operator's ``FTVMStrategy``
   on the tensors of the arguments and remembers the *anchor*, the call with the most complex fusion pattern;
   a scalar constant becomes a 0-d compute, tuples and projections just regroup tensors;
3. the result (a tuple result flattened into its fields) is scheduled by the anchor's schedule, which inlines the
   element-wise calls around it, and ``kiln.lower`` turns the schedule into a PrimFunc whose parameters are the
   input placeholders followed by the outputs (the order the graph executor passes arrays in).

An output that is a parameter itself, or the same tensor twice, is copied by an identity compute, since a PrimFunc
argument list names every buffer once.

:class:`TECompiler` caches the lowered functions keyed by the structural hash of the primitive function, the
target and the lowering configuration (autotvm's dispatch context among it), and checks a hit with structural
equality: fused groups that are the same up to variable names (the twenty identical residual blocks of a ResNet) are
lowered once, and a model built twice is lowered once. The cache holds unnamed results; the caller names each use
(LowerTE names them ``tvmgen_default_fused_<ops>``).

:meth:`TECompiler.prefetch` lowers a model's uncached functions on every idle core before LowerTE walks it: they
are dealt round-robin into one part per core, and each part is lowered in a forked process
(:func:`kiln.target.parallel.fork_map`, the first part in this one) that sends back the PrimFuncs and the warnings it
raised. A part whose child fails is lowered again here, so errors surface as in a one-process build. Lowering runs
in one process while anything watches it: a pass instrument, or an autotvm dispatch context that records the
queries (``records_queries``: task extraction).
"""

import hashlib
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass, replace

from ...autotvm.task import DispatchContext
from ...error import CodegenError
from ...ir.op import Op
from ...ir.pass_context import PassContext
from ...ir.structural import structural_equal, structural_hash
from ...ir.type import TensorType, TupleType, is_any
from ...target import parallel
from ...te import compute, lower, placeholder, size_var
from ...te.tensor import PlaceholderOp
from ...tir.op import const as tir_const
from ..expr import Call, Constant, Tuple, TupleGetItem, Var
from ..expr_functor import post_order_visit
from . import shape_func
from .schedule_builder import ScheduleBuilder

__all__ = ["CachedFunc", "TECompiler", "get", "lower_primitive", "flatten_type", "fused_name", "MAX_NAME_LENGTH",
           "is_data_dependent"]

MAX_NAME_LENGTH = 80
"""Longer fused names are cut and given a hash suffix, as TVM's ``kMaxFuncNameLength``."""


def flatten_type(ttype) -> list:
    """The tensor types of ``ttype`` in order (a tuple type flattened recursively)."""
    if isinstance(ttype, TupleType):
        out = []
        for field in ttype.fields:
            out.extend(flatten_type(field))
        return out
    if isinstance(ttype, TensorType):
        return [ttype]
    raise CodegenError(f"lowering: a value of type {ttype} cannot be a tensor argument or result of a kernel")


def fused_name(op_names) -> str:
    """TVM's name of a fused group: ``fused_`` and the operator names in dataflow order, dots as underscores."""
    name = "_".join(["fused", *(n.replace(".", "_") for n in op_names)])
    if len(name) > MAX_NAME_LENGTH:
        digest = hashlib.sha1(name.encode()).hexdigest()[:16]
        name = f"{name[:MAX_NAME_LENGTH]}_{digest}_"
    return name


@dataclass(frozen=True)
class CachedFunc:
    """A lowered primitive function.

    Attributes
    ----------
    prim_func : tir.PrimFunc
        The loop nest; parameters are the flattened inputs then the flattened outputs.
    name : str
        The name derived from the fused operators (``fused_nn_conv2d_add_nn_relu``), not yet made unique.
    inputs, outputs : tuple of TensorType
        The flattened parameter and result types.
    source_func : relay.Function
        The primitive function it was lowered from.
    shape_func : tir.PrimFunc or None
        The shape function (:mod:`.shape_func`) when the result has dynamic dimensions.
    """

    prim_func: object
    name: str
    inputs: tuple
    outputs: tuple
    source_func: object
    shape_func: object = None


def _dimension(dim, name):
    """A TE shape entry for a Relay dimension: the int, or a fresh size variable for :class:`~kiln.ir.type.Any`."""
    return size_var(name) if is_any(dim) else dim


def _placeholders(ttype, name, out):
    """Placeholder(s) for a parameter of type ``ttype``: a tensor, or a (nested) list for a tuple type."""
    if isinstance(ttype, TupleType):
        return [_placeholders(t, f"{name}_{i}", out) for i, t in enumerate(ttype.fields)]
    if not isinstance(ttype, TensorType):
        raise CodegenError(f"lowering: parameter {name} has type {ttype}; kernels take tensors and tuples of tensors")
    shape = tuple(_dimension(d, f"{name}_dim{i}") for i, d in enumerate(ttype.shape))
    tensor = placeholder(shape, ttype.dtype, name=name)
    out.append(tensor)
    return tensor


def _flatten_value(value, out):
    if isinstance(value, list):
        for v in value:
            _flatten_value(v, out)
    else:
        out.append(value)
    return out


def _scalar_constant(const: Constant, where):
    arr = const.data.handle
    if arr.ndim != 0:
        raise CodegenError(f"lowering {where}: a constant of shape {arr.shape} inside a primitive function; LowerTE "
                           f"passes such constants as arguments")
    value = arr.item()
    return compute((), lambda: tir_const(value, arr.dtype.name), name="compile_engine_const")


def _distinct_outputs(outputs, inputs) -> list:
    """``outputs`` with each parameter, and each repeated tensor, replaced by a copy (see the module docstring)."""
    seen, result = set(inputs), []
    for tensor in outputs:
        if tensor in seen or isinstance(tensor.op, PlaceholderOp):
            src = tensor
            tensor = compute(src.shape, lambda *i, src=src: src(*i), name="T_copy", tag="elemwise")
        seen.add(tensor)
        result.append(tensor)
    return result


def lower_primitive(func, target=None, name=None) -> CachedFunc:
    """Lower one typed ``Primitive`` Relay function to a PrimFunc (no cache; see the module docstring).

    Parameters
    ----------
    func : relay.Function
        A type-checked primitive function whose body holds operator calls, tuples, projections and scalar constants.
    target : Target or str, optional
        The target whose strategies and schedules are used (the current one, else ``llvm``).
    name : str, optional
        The PrimFunc's ``global_symbol`` (default: the fused name).

    Returns
    -------
    CachedFunc
    """
    if func.checked_type_ is None:
        raise CodegenError("lowering: the primitive function is not typed; run InferType first")
    inputs: list = []
    values: dict = {}
    for param in func.params:
        values[param] = _placeholders(param.checked_type_, param.name_hint, inputs)
    nodes: list = []
    post_order_visit(func.body, nodes.append)
    for node in nodes:
        if not isinstance(node, Call | Constant | Tuple | TupleGetItem | Var | Op):
            raise CodegenError(f"lowering: a primitive function cannot contain a {type(node).__name__}")
    prebuilt = _prebuilt_kernel(func, nodes, inputs, name)
    if prebuilt is not None:
        return prebuilt
    builder = ScheduleBuilder(target)
    op_names: list = []
    for node in nodes:
        kind = type(node)
        if kind is Call:
            if not isinstance(node.op, Op):
                raise CodegenError(f"lowering: a primitive function may only call operators, not {node.op}")
            outs = builder.call(node.op, node.attrs, [values[a] for a in node.args], node.checked_type_)
            values[node] = list(outs) if isinstance(node.checked_type_, TupleType) else outs[0]
            op_names.append(node.op.name)
        elif kind is Constant:
            values[node] = _scalar_constant(node, "a primitive function")
        elif kind is Tuple:
            values[node] = [values[f] for f in node.fields]
        elif kind is TupleGetItem:
            values[node] = values[node.tuple_value][node.index]
        elif kind is Var and node not in values:
            raise CodegenError(f"lowering: variable %{node.name_hint} is free in the primitive function")
    outputs = _distinct_outputs(_flatten_value(values[func.body], []), inputs)
    base = fused_name(op_names)
    schedule = builder.schedule(outputs)
    mod = lower(schedule, [*inputs, *outputs], name=name or base)
    (prim_func,) = mod.functions.values()
    input_types = tuple(t for p in func.params for t in flatten_type(p.checked_type_))
    shape_func = _shape_func(func, nodes, inputs, outputs, f"{name or base}_shape_func")
    return CachedFunc(prim_func, base, input_types, tuple(flatten_type(func.body.checked_type_)), func, shape_func)


def _prebuilt_kernel(func, nodes, inputs, name):
    """The CachedFunc of a primitive function calling an operator whose kernel is a loop nest written directly
    (``FTVMPrimFunc(attrs, arg_types, out_types, name) -> tir.PrimFunc``, for sequential algorithms a TE compute
    cannot state, as TVM's ``ir_builder`` kernels); None for any other function. Such an operator is ``OPAQUE``, so
    it is alone in its function; a result with dynamic dimensions gets the shape function the operator registers
    (``FShapeFunc``, built over ``inputs``, the parameters' placeholders)."""
    calls = [n for n in nodes if isinstance(n, Call) and isinstance(n.op, Op) and n.op.get_attr("FTVMPrimFunc")]
    if not calls:
        return None
    call = calls[0]
    if len(calls) > 1 or call is not func.body or list(call.args) != list(func.params):
        raise CodegenError(f"lowering: {call.op.name} has a kernel of its own (FTVMPrimFunc), so it must be alone in "
                           f"its primitive function")
    base = fused_name([call.op.name])
    input_types = tuple(t for p in func.params for t in flatten_type(p.checked_type_))
    out_types = tuple(flatten_type(call.checked_type_))
    prim = call.op.get_attr("FTVMPrimFunc")(call.attrs, input_types, out_types, name or base)
    (prim_func,) = lower(prim, name=name or base).functions.values()
    shapes = None
    if any(t.is_dynamic for t in out_types):
        fshape = call.op.get_attr("FShapeFunc")
        if fshape is None:
            raise CodegenError(f"lowering: {call.op.name} has a result of dynamic shape but no shape function")
        shapes = shape_func.data_dependent_shape_func(fshape, call.attrs, inputs, out_types,
                                                      f"{name or base}_shape_func")
    return CachedFunc(prim_func, base, input_types, out_types, func, shapes)


def _shape_func(func, nodes, inputs, outputs, name):
    """The shape function of the kernel lowered from ``func`` (:mod:`.shape_func`), None for a static result."""
    dependent = [n for n in nodes if isinstance(n, Call) and n.op.get_attr("FShapeFunc") is not None]
    if not dependent:
        return shape_func.data_independent_shape_func(inputs, outputs, name)
    call = dependent[0]
    if len(dependent) > 1 or call is not func.body or list(call.args) != list(func.params):
        raise CodegenError(f"lowering {name}: {call.op.name} has a data-dependent shape function, so it must be "
                           f"alone in its primitive function (it is OPAQUE: FuseOps does not fuse it)")
    fshape = call.op.get_attr("FShapeFunc")
    return shape_func.data_dependent_shape_func(fshape, call.attrs, inputs, flatten_type(call.checked_type_), name)


def is_data_dependent(func) -> bool:
    """Whether the primitive function ``func`` calls an operator whose shape function reads its arguments' values."""
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Call) and isinstance(n.op, Op)
                     and n.op.get_attr("FShapeFunc") is not None else None)
    return bool(found)


def _config_key() -> tuple:
    """The configuration that changes how a schedule lowers: the pass context's ``tir.*`` options, and the autotvm
    dispatch context (a kernel lowered with tuned configs is not the one lowered with the default ones)."""
    config = PassContext.current().config
    options = tuple(sorted((k, repr(v)) for k, v in config.items() if k.startswith("tir.")))
    return (*options, DispatchContext.current.cache_key)


def _lowering_may_fork() -> bool:
    """Whether lowering may run in other processes: no pass instrument watches it and no autotvm dispatch context
    records its queries (module docstring)."""
    return not PassContext.current().instruments and not DispatchContext.stack_records_queries()


class _LowerPart:
    """Lowers a list of primitive functions for one target (a :func:`fork_map` item), keeping the warnings raised
    so the parent can raise them; the results leave out the source functions, which the parent has."""

    def __init__(self, target):
        self.target = target

    def __call__(self, funcs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lowered = [replace(lower_primitive(func, self.target), source_func=None) for func in funcs]
        return lowered, [(str(w.message), w.category) for w in caught]


class TECompiler:
    """A cache of lowered primitive functions (TVM's ``TECompiler``); see the module docstring.

    Parameters
    ----------
    capacity : int
        How many lowered functions are kept (least recently used ones are dropped first).

    Examples
    --------
    >>> cached = te_compiler.get().lower(prim_fn, Target("llvm"))   # doctest: +SKIP
    >>> cached.prim_func.with_attr("global_symbol", "my_kernel")     # doctest: +SKIP
    """

    def __init__(self, capacity=4096):
        self.capacity = capacity
        self._entries: OrderedDict = OrderedDict()  # key -> list of CachedFunc (structurally different, same hash)
        self._prefetched: set = set()  # ids of entries lowered by prefetch and not yet looked up
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _key(self, func, target):
        return structural_hash(func), str(target), _config_key()

    def _find(self, key, func):
        for cached in self._entries.get(key, ()):
            if structural_equal(cached.source_func, func):
                return cached
        return None

    def _insert(self, key, cached):
        self._entries.setdefault(key, []).append(cached)
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            for dropped in self._entries.popitem(last=False)[1]:
                self._prefetched.discard(id(dropped))

    def lower(self, func, target) -> CachedFunc:
        """The lowered form of ``func`` for ``target``, from the cache when a structurally equal function was lowered
        for the same target and configuration."""
        key = self._key(func, target)
        with self._lock:
            cached = self._find(key, func)
            if cached is not None:
                self._entries.move_to_end(key)
                if id(cached) in self._prefetched:  # lowered ahead of its first use: that use is the miss
                    self._prefetched.discard(id(cached))
                    self.misses += 1
                else:
                    self.hits += 1
                return cached
        cached = lower_primitive(func, target)
        with self._lock:
            self.misses += 1
            self._insert(key, cached)
        return cached

    def prefetch(self, funcs, target, min_per_part=4) -> int:
        """Lower the functions of ``funcs`` that are not cached yet, one part per idle core, each part in its own
        process (module docstring); later :meth:`lower` calls find them. Does nothing when fewer than two parts
        of ``min_per_part`` functions would run, or when lowering must stay in this process.

        ``funcs`` may be a generator: it is not consumed when lowering cannot fork (a busy machine).

        Returns
        -------
        int
            The number of parts the functions were lowered in (0: none was).
        """
        if parallel.idle_cores() < 2 or not _lowering_may_fork():
            return 0
        missing: dict = {}  # key -> functions not structurally equal to each other
        with self._lock:
            for func in funcs:
                key = self._key(func, target)
                if self._find(key, func) is None and \
                        not any(structural_equal(f, func) for f in missing.get(key, ())):
                    missing.setdefault(key, []).append(func)
        groups = parallel.deal([(key, func) for key, group in missing.items() for func in group], min_per_part)
        if len(groups) < 2:
            return 0
        results = parallel.fork_map(_LowerPart(target), [[func for _, func in group] for group in groups])
        with self._lock:
            for group, (lowered, _) in zip(groups, results, strict=True):
                for (key, func), cached in zip(group, lowered, strict=True):
                    cached = replace(cached, source_func=func)
                    self._insert(key, cached)
                    self._prefetched.add(id(cached))
        for _, caught in results:
            for message, category in caught:
                warnings.warn(message, category, stacklevel=2)
        return len(groups)

    def clear(self):
        """Drop every cached function and reset the counters."""
        with self._lock:
            self._entries.clear()
            self._prefetched.clear()
            self.hits = self.misses = 0

    def __len__(self):
        return sum(len(v) for v in self._entries.values())


_GLOBAL = TECompiler()


def get() -> TECompiler:
    """The process-wide TE compiler (TVM's ``relay.backend.te_compiler.get()``)."""
    return _GLOBAL
