"""LowerTE: replace every call of a ``Primitive`` function by ``call_lowered`` of a ``tir.PrimFunc`` (TVM's
``relay.tec.LowerTE``).

The pass walks each Relay function of the module (after FuseOps, ``@main`` calls one primitive function per fused
group) and, for each call of a primitive function:

1. lifts the non-scalar constants the function holds (``relay.FuseOps.link_params`` keeps them inside) into extra
   parameters, passed as arguments, so kernels only read their arguments;
2. lowers the function through the process-wide :class:`~kiln.relay.backend.te_compiler.TECompiler`, whose cache
   makes structurally equal functions share one lowering;
3. gives each distinct lowered function one GlobalVar, named like TVM's ``tvmgen_default_fused_nn_conv2d_add``
   (``_1``, ``_2`` ... for different functions with the same operators), and adds the PrimFunc to the module with
   the attributes ``kiln.relay_ops`` (the operators fused into it, in dataflow order) and, when it holds
   convolutions or matrix products, ``kiln.flops`` (:func:`~kiln.relay.analysis.flops.estimate_flops`); graph
   codegen copies both into the graph so profiles can show them; a kernel that only concatenates its parameters
   also gets ``kiln.concatenate_axis`` (:func:`concatenate_axis`), which lets the graph codegen drop it;
4. rewrites the call into ``call_lowered(@name, (args...))`` typed like the original call.

Before that walk, a first one collects the primitive functions step 2 will lower, and the TE compiler lowers those
it has not cached on every idle core (:meth:`~kiln.relay.backend.te_compiler.TECompiler.prefetch`); the second walk
finds them in the cache.

A call of a bare operator (FuseOps disabled) is lowered as a one-operator primitive function, except the
non-computational ops of the memory and VM dialects (``TNonComputational``), which stay; a primitive function
bound by a ``let`` or held as a global function is lowered where it is called. The current ``Target`` (``llvm`` when
none) picks the strategies. The result holds the rewritten Relay functions and the PrimFuncs side by side, so
instruments see both.
"""

from dataclasses import dataclass

from ...error import CodegenError
from ...ir.expr import GlobalVar
from ...ir.module import IRModule
from ...ir.op import Op
from ...ir.transform import ModulePass, PassInfo, register_pass
from ...target.target import resolve_target
from ..analysis import free_vars
from ..analysis.flops import estimate_flops
from ..expr import Call, Constant, Tuple, Var
from ..expr_functor import ExprMutator, post_order_visit
from ..function import Function
from ..op.vm import is_reshape_only
from ..transform.infer_type import infer_type
from . import te_compiler
from .call_lowered import call_lowered
from .external import external_function


def current_target():
    """The current Target, else ``llvm``."""
    return resolve_target(None)


class _LiftConstants(ExprMutator):
    """Turns each non-scalar constant of a primitive function body into a new parameter."""

    def __init__(self):
        super().__init__()
        self.params: list = []
        self.constants: list = []

    def visit_constant(self, const):
        if const.data.handle.ndim == 0:
            return const
        ttype = const.checked_type_
        var = Var(f"p_const{len(self.params)}", ttype, checked_type_=ttype)
        self.params.append(var)
        self.constants.append(const)
        return var


def lift_constants(func):
    """``(func', constants)``: ``func`` with its non-scalar constants as extra trailing parameters."""
    lifter = _LiftConstants()
    body = lifter.visit(func.body)
    if not lifter.params:
        return func, []
    new = Function((*func.params, *lifter.params), body, func.ret_type, attrs=func.attrs)
    return infer_type(new), lifter.constants


def _wrap_operator(call):
    """A bare operator call as the primitive function ``fn (%p0, ...) { op(%p0, ...) }`` and the arguments to pass
    it (scalar constants stay inside, as FuseOps leaves them)."""
    params, operands, args = [], [], []
    for arg in call.args:
        if isinstance(arg, Constant) and arg.data.handle.ndim == 0:
            operands.append(arg)
            continue
        ttype = arg.checked_type_
        var = Var(f"p{len(params)}", ttype, checked_type_=ttype)
        params.append(var)
        operands.append(var)
        args.append(arg)
    func = Function(params, Call(call.op, tuple(operands), call.attrs), attrs={"Primitive": 1})
    return infer_type(func), args


class _Lowerer(ExprMutator):
    """Rewrites one Relay function (see the module docstring); shares naming state across the module."""

    def __init__(self, state, mod):
        super().__init__()
        self.state = state  # None: only collect the primitive functions to lower, in ``collected``
        self.mod = mod
        self.let_functions: dict = {}
        self.collected: list = []

    def visit_function(self, fn):
        if fn.is_primitive():
            return fn  # lowered where it is called
        return super().visit_function(fn)

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        kept = []
        for binding in chain:
            if isinstance(binding.value, Function) and binding.value.is_primitive():
                self.let_functions[binding.var] = binding.value
            else:
                kept.append((binding, self.visit(binding.var), self.visit(binding.value)))
        result = self.visit(body)
        for binding, var, value in reversed(kept):
            result = binding.with_fields(var=var, value=value, body=result)
        return result

    def _primitive_callee(self, call):
        op = call.op
        if isinstance(op, Function) and op.is_primitive():
            return op
        if isinstance(op, Var):
            return self.let_functions.get(op)
        if isinstance(op, GlobalVar) and op in self.mod:
            func = self.mod[op]
            if isinstance(func, Function) and func.is_primitive():
                return func
        return None

    def visit_call(self, call):
        func = self._primitive_callee(call)
        if self.state is None and func is not None and func.attrs.get("Compiler", None) is not None:
            return super().visit_call(call)  # an external compiler's region: only compiled once, when lowered
        if func is not None:
            args = [self.visit(a) for a in call.args]
        elif isinstance(call.op, Op) and call.op.name != "call_lowered" and not call.op.get_attr("TNonComputational"):
            func, operands = _wrap_operator(call)
            args = [self.visit(a) for a in operands]
        else:
            return super().visit_call(call)
        symbol = None
        if func.attrs.get("Compiler", None) is not None:  # a region PartitionGraph lifted for an external compiler
            func, symbol = external_function(func)
        if func.checked_type_ is None:
            func = infer_type(func)
        func, constants = lift_constants(func)
        if self.state is None:  # collecting what to prefetch
            if symbol is None:
                self.collected.append(func)
            return call
        gv, shape_gv = self.state.lower(func, symbol)
        return call_lowered(gv, [*args, *constants], call.checked_type_, span=call.span,
                            reshape_only=is_reshape_only(func), shape_func=shape_gv,
                            shape_func_reads_data=shape_gv is not None and te_compiler.is_data_dependent(func))


class _LoweringState:
    """The GlobalVars and PrimFuncs produced so far in one run of the pass."""

    def __init__(self, module_name, target, taken):
        self.prefix = f"tvmgen_{module_name}_"
        self.target = target
        self.compiler = te_compiler.get()
        self.taken = set(taken)
        self.symbols: set = set()  # the external functions' symbols given to kernels
        self.by_cached: dict = {}  # id(CachedFunc) -> GlobalVar
        self.prim_funcs: dict = {}  # GlobalVar -> PrimFunc
        self.shape_funcs: dict = {}  # the kernel's GlobalVar -> its shape function's
        self.keep: list = []

    def _unique(self, base):
        name, k = self.prefix + base, 0
        while name in self.taken:
            k += 1
            name = f"{self.prefix}{base}_{k}"
        self.taken.add(name)
        return name

    def lower(self, func, symbol=None) -> tuple:
        """The GlobalVars of ``func``'s kernel and of its shape function (None when its result is static); the
        kernel is named ``symbol`` when given (an external function's), else after its operators."""
        cached = self.compiler.lower(func, self.target)
        gv = self.by_cached.get(id(cached))
        if gv is None:
            self.keep.append(cached)  # ids stay unique while the cached objects are alive
            # an external function's symbol is its own global function's name, which the lowered module drops
            if symbol is not None and symbol in self.symbols:
                raise CodegenError(f"LowerTE: two kernels would be named {symbol}")
            if symbol is not None:
                self.taken.add(symbol)
                self.symbols.add(symbol)
            gv = GlobalVar(symbol if symbol is not None else self._unique(cached.name))
            self.by_cached[id(cached)] = gv
            attrs = {"global_symbol": gv.name_hint, "kiln.relay_ops": relay_ops(cached.source_func)}
            axis = concatenate_axis(cached.source_func)
            if axis is not None:
                attrs["kiln.concatenate_axis"] = axis
            flops = estimate_flops(cached.source_func)
            if flops is not None:
                attrs["kiln.flops"] = flops
            self.prim_funcs[gv] = cached.prim_func.with_attrs(attrs)
            if cached.shape_func is not None:
                shape_gv = self.shape_funcs[gv] = GlobalVar(f"{gv.name_hint}_shape_func")
                self.prim_funcs[shape_gv] = cached.shape_func.with_attrs({"global_symbol": shape_gv.name_hint})
        return gv, self.shape_funcs.get(gv)


def relay_ops(func) -> tuple:
    """The names of the operators ``func`` calls, in dataflow order."""
    names: list = []
    post_order_visit(func, lambda e: names.append(e.op.name) if isinstance(e, Call) and isinstance(e.op, Op) else None)
    return tuple(names)


def concatenate_axis(func):
    """The axis when ``func`` is exactly ``concatenate((p0, p1, ...), axis)`` of its parameters in order, or
    ``concatenate(p, axis)`` of its one tuple parameter (the graph codegen may then write the tensors' producers into
    slices of the result instead of running the kernel), else None."""
    body = func.body
    if not (isinstance(body, Call) and isinstance(body.op, Op) and body.op.name == "concatenate" and func.params):
        return None
    fields = body.args[0]
    if isinstance(fields, Tuple):
        if len(fields.fields) != len(func.params) or any(f is not p for f, p in zip(fields.fields, func.params,
                                                                                   strict=True)):
            return None
    elif not (len(func.params) == 1 and fields is func.params[0]):
        return None
    axis = int(body.attrs.axis)
    result = func.ret_type if func.ret_type is not None else body.checked_type_
    return axis + len(result.shape) if axis < 0 else axis


def _functions_to_lower(mod, primitive_globals):
    """The primitive functions the walk of ``mod`` will lower (a generator: the module is walked only when the TE
    compiler asks, which it does when it can lower them in parallel)."""
    collector = _Lowerer(None, mod)
    for gv, func in mod.functions.items():
        if gv not in primitive_globals and isinstance(func, Function):
            collector.visit(func)
    yield from collector.collected


def lower_te(mod, module_name="default", target=None) -> IRModule:
    """Lower every primitive function of ``mod`` (see the module docstring); returns a new module.

    Parameters
    ----------
    mod : IRModule
        The fused module (typed or not).
    module_name : str
        The ``<name>`` in ``tvmgen_<name>_fused_...``.
    target : Target, optional
        The target (default: the current one, else ``llvm``).
    """
    mod = infer_type(mod)
    target = target if target is not None else current_target()
    taken = {gv.name_hint for gv in mod.functions}
    state = _LoweringState(module_name, target, taken)
    out = IRModule(type_definitions=mod.type_definitions, attrs=mod.attrs)
    primitive_globals = set()
    for gv, func in mod.functions.items():
        if isinstance(func, Function) and func.is_primitive():
            primitive_globals.add(gv)
    state.compiler.prefetch(_functions_to_lower(mod, primitive_globals), target)
    for gv, func in mod.functions.items():
        if gv in primitive_globals:
            continue  # lowered at its call sites
        if isinstance(func, Function):
            lowerer = _Lowerer(state, mod)
            out[gv] = lowered = lowerer.visit(func)
            leaked = [v for v in free_vars(lowered) if v in lowerer.let_functions]
            if leaked:
                raise CodegenError(f"LowerTE: the primitive function bound to %{leaked[0].name_hint} in {gv} is used "
                                   f"as a value, not called; only calls of primitive functions can be lowered")
        else:
            out[gv] = func
    for gv, prim in state.prim_funcs.items():
        out[gv] = prim
    return out


@register_pass("LowerTE")
@dataclass(frozen=True)
class LowerTE(ModulePass):
    """Lower primitive functions to ``tir.PrimFunc``s called through ``call_lowered`` (TVM's ``tec.LowerTE``).

    Parameters
    ----------
    module_name : str
        Prefix of the kernel names (``tvmgen_<module_name>_fused_...``).

    Examples
    --------
    >>> with kiln.target.Target("llvm"):                     # doctest: +SKIP
    ...     lowered = relay.transform.FuseOps()(mod)         # doctest: +SKIP
    ...     lowered = kiln.transform.get_pass("LowerTE")(lowered)
    """

    module_name: str = "default"
    info = PassInfo(0, "LowerTE", required=("InferType",))

    def transform_module(self, mod, ctx):
        return lower_te(mod, self.module_name)
