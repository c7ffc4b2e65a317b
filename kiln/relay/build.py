"""``relay.build``: from a Relay module to a graph executor factory (TVM's ``relay.build_module.build``).

The steps, all under the current PassContext and with the target current (``with target:``):

1. :func:`kiln.relay.optimize` binds ``params`` by name as constants and runs the standard pipeline ending with
   FuseOps (each pass gated by the context's opt_level, ``disabled_pass`` and ``required_pass``);
2. the ``LowerTE`` module pass turns every primitive function into a ``tir.PrimFunc`` called through
   ``call_lowered``; it runs as a pass, so instruments see the lowered module;
3. graph codegen walks the lowered ``@main``: graph JSON, storage plan, and the remaining constants as parameters
   ``p0``, ``p1`` ...;
4. the PrimFuncs are compiled into one library for the target, as ``kiln.build`` does (its build passes and the
   target's code generator; they were lowered by LowerTE already).

The result is a :class:`~kiln.runtime.graph_executor_factory.GraphExecutorFactoryModule`. This module also
registers ``relay.executor.graph``, so ``relay.create_executor("graph", mod, dev, target).evaluate()`` compiles with
``relay.build`` and runs the graph executor.
"""

import contextlib
import gc

import numpy as np

from ..error import KilnError
from ..ir.expr import GlobalVar
from ..ir.module import IRModule
from ..ir.pass_context import PassContext, register_config
from ..ir.type import TensorType, TupleType, has_dynamic_shape
from ..runtime.graph_executor_factory import GraphExecutorFactoryModule
from ..runtime.ndarray import NDArray
from ..runtime.ndarray import array as nd_array
from ..runtime.packed_func import get_global_func, register_func
from ..runtime.params import load_param_dict, save_param_dict
from ..target.build import build_passes
from ..target.target import Target
from .backend.graph_codegen import codegen
from .backend.lower_te import LowerTE
from .expr import Call, If, Let, Var
from .expr_functor import post_order_visit
from .function import Function
from .interpreter import Executor, _convert_arg
from .optimize import optimize

__all__ = ["build", "save_param_dict", "load_param_dict", "GraphExecutor", "check_graph_executable",
           "compile_kernels", "normalize_params", "resolve_build_target"]


# TVM compiles with auto-scheduler records when this is set; kiln has no auto-scheduler, so the key exists (scripts
# written for TVM set it to False) and True is refused rather than silently compiling without the records
register_config("relay.backend.use_auto_scheduler", bool, False)


def resolve_build_target(target, target_host=None, what="relay.build") -> Target:
    """The Target to compile for: ``target`` (a str, Target or TVM's one-entry ``{device: target}`` dict), else the
    current target, else ``llvm``; KilnError for kinds other than llvm and c."""
    if target is None:
        target = Target.current() or Target("llvm")
    if isinstance(target, dict):  # TVM's {device: target} form
        if len(target) != 1:
            raise KilnError(f"{what}: kiln builds for one target, got {len(target)}: {list(target)}")
        target = next(iter(target.values()))
    if not isinstance(target, Target):
        target = Target(target)
    if target.kind.name not in ("llvm", "c"):
        raise KilnError(f"{what}: target kind {target.kind.name!r} is not supported: kiln generates code for llvm "
                        f"and c only (a GPU kind only describes its device)")
    if PassContext.current().config.get("relay.backend.use_auto_scheduler", False):
        raise KilnError(f"{what}: relay.backend.use_auto_scheduler is set, but kiln has no auto-scheduler; tune with "
                        f"autotvm and compile under autotvm.apply_history_best")
    if target_host is not None:
        target = target.with_host(target_host)
    return target


def normalize_params(params, what="relay.build") -> dict:
    """``params`` as ``{name: NDArray}``; KilnError naming a parameter that is not an array."""
    out = {}
    for name, value in (params or {}).items():
        if not isinstance(name, str):
            raise KilnError(f"{what}: parameter names must be str, got {type(name).__name__}")
        if isinstance(value, NDArray):
            out[name] = value
        elif isinstance(value, np.ndarray | np.generic):
            out[name] = nd_array(np.asarray(value))
        else:
            raise KilnError(f"{what}: parameter {name!r} must be an NDArray or numpy array, got "
                            f"{type(value).__name__}")
    return out


def build(ir_mod, target=None, target_host=None, executor=None, runtime=None, workspace_memory_pools=None,
          constant_memory_pools=None, params=None, mod_name="default"):
    """Compile a Relay module for the graph executor (see the module docstring).

    Parameters
    ----------
    ir_mod : IRModule or relay.Function
        The model; ``@main`` is what runs.
    target : str, Target or dict, optional
        ``"llvm"`` (default, or the current target), ``"c"``, ``"llvm -mcpu=native"``, ``Target(...)``.
    target_host : str or Target, optional
        Accepted for TVM compatibility (CPU targets are their own host).
    executor, runtime : relay.backend.Executor, relay.backend.Runtime, optional
        ``Executor("graph")`` and ``Runtime("cpp")``, the only kinds kiln has (others raise KilnError).
    workspace_memory_pools, constant_memory_pools : optional
        Accepted for TVM compatibility (the graph executor plans its own memory).
    params : dict of str to NDArray or numpy array, optional
        Values of parameters of ``@main`` by name; they become constants and are folded where possible.
    mod_name : str
        The name of the function that creates an executor (``lib[mod_name](dev)``) and the kernel prefix
        (``tvmgen_<mod_name>_...``).

    Returns
    -------
    factory : GraphExecutorFactoryModule
        ``factory["default"](dev)``, ``get_lib()``, ``get_params()``, ``get_graph_json()``, ``export_library(path)``.

    Examples
    --------
    >>> with kiln.transform.PassContext(opt_level=3):                        # doctest: +SKIP
    ...     lib = relay.build(mod, target="llvm", params=params)
    >>> m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))          # doctest: +SKIP
    """
    if isinstance(ir_mod, Function):
        ir_mod = IRModule.from_expr(ir_mod)
    if not isinstance(ir_mod, IRModule):
        raise KilnError(f"relay.build takes an IRModule or a relay.Function, not {type(ir_mod).__name__}")
    if executor is not None and str(getattr(executor, "name", executor)) != "graph":
        raise KilnError(f"relay.build: executor {executor!s} is not supported; kiln has the graph executor "
                        f"(Executor('graph'))")
    if runtime is not None and str(getattr(runtime, "name", runtime)) != "cpp":
        raise KilnError(f"relay.build: runtime {runtime!s} is not supported; kiln has its Python runtime "
                        f"(Runtime('cpp'))")
    target = resolve_build_target(target, target_host)
    params = normalize_params(params)
    with target, gc_paused():
        optimized, _ = optimize(ir_mod, target, params)
        check_graph_executable(optimized)
        lowered = LowerTE(module_name=mod_name)(optimized)
        result = codegen(lowered)
        lib = compile_kernels(result.lowered_funcs, target) if len(result.lowered_funcs) else None
    return GraphExecutorFactoryModule(result.graph_json, lib, result.params, mod_name, ir_mod=ir_mod, target=target)


def check_graph_executable(mod):
    """Raise KilnError when ``@main`` of the optimized ``mod`` needs the VM: a dimension known only at run time
    (``relay.Any``), an ``if``, a call of a global function (recursion among them), a closure or a call of a function
    value; the message says to use ``relay.vm.compile``."""
    main = mod["main"]
    for param in main.params:
        if has_dynamic_shape(param.checked_type_):
            raise KilnError(f"relay.build: @main parameter %{param.name_hint} has the dynamic type "
                            f"{param.checked_type_}; the graph executor needs static shapes: compile the module with "
                            f"relay.vm.compile(mod, target) and run it with kiln.runtime.vm.VirtualMachine")
    nodes: list = []
    post_order_visit(main.body, nodes.append)
    # let variables bound to primitive functions: LowerTE lowers their calls like any fused call
    kernels = {n.var for n in nodes if isinstance(n, Let) and isinstance(n.value, Function) and n.value.is_primitive()}
    for expr in nodes:
        reason = _needs_vm(expr, mod, kernels)
        if reason:
            raise KilnError(f"relay.build: the graph executor cannot run {reason} in @main; compile the module with "
                            f"relay.vm.compile(mod, target) and run it with kiln.runtime.vm.VirtualMachine")


def _needs_vm(expr, mod, kernels):
    """Why the graph executor cannot run ``expr``, or None."""
    if isinstance(expr, Call | Var) and has_dynamic_shape(expr.checked_type_):
        return f"a value of the dynamic type {expr.checked_type_} (a shape known only at run time)"
    if isinstance(expr, If):
        return "a If (control flow on a condition known only at run time)"
    if isinstance(expr, Function) and not expr.is_primitive():
        return "a closure (a function used as a value)"
    if isinstance(expr, Call) and isinstance(expr.op, GlobalVar):
        callee = mod[expr.op] if expr.op in mod else None
        if not (isinstance(callee, Function) and callee.is_primitive()):
            return f"a call of the global function {expr.op}"
    if isinstance(expr, Call) and isinstance(expr.op, Var) and expr.op not in kernels:
        return f"a call of the function value %{expr.op.name_hint}"
    return None


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while compiling. Compilation allocates hundreds of thousands of
    short-lived, acyclic IR nodes, each allocation burst triggering collections that walk every live object (the
    model's IR, its weights' wrappers...): ResNet-50 builds about 15% faster without them, for some 30 MB more at the
    peak. Reference counting still frees the nodes; the collector resumes afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def compile_kernels(funcs: IRModule, target):
    """``kiln.build`` of the lowered kernels into one library, without lowering them again (LowerTE already ran
    ``kiln.lower``'s passes on each; ``kiln.build`` would repeat them on an IRModule it is given)."""
    with target:
        funcs = build_passes(funcs, target)
    fbuild = get_global_func(f"target.build.{target.kind.name}", allow_missing=True)
    if fbuild is None:
        raise KilnError(f"relay.build: no code generator registered for target kind {target.kind.name!r}")
    return fbuild(funcs, target)


class GraphExecutor(Executor):
    """``relay.create_executor("graph", mod, device, target)``: compiles ``@main`` with :func:`build` and runs it
    (TVM's ``relay.build_module.GraphExecutor``)."""

    def __init__(self, mod, device, target, params=None):
        self.mod = mod
        self.device = device
        self.target = target
        self.params = params

    def _make_executor(self, expr=None):
        mod = self.mod
        if isinstance(expr, Function):
            mod = mod.shallow_copy()
            mod["main"] = expr
        elif expr is not None and (getattr(expr, "name_hint", expr) != "main"):
            raise KilnError(f"the graph executor runs @main only, not {expr}")
        from .transform.infer_type import infer_type

        mod = infer_type(mod)
        main = mod["main"]
        factory = build(mod, target=self.target, params=self.params)
        gmodule = factory["default"](self.device)
        bound = set(self.params or {})
        inputs = [p for p in main.params if p.name_hint not in bound]
        ret_type = main.checked_type_.ret_type

        def _unflatten(flat, ttype):
            if isinstance(ttype, TupleType):
                return tuple(_unflatten(flat, f) for f in ttype.fields)
            if isinstance(ttype, TensorType):
                return next(flat)
            raise KilnError(f"the graph executor cannot return a value of type {ttype}")

        def _graph_wrapper(*args, **kwargs):
            values = list(args)
            names = [p.name_hint for p in inputs]
            if len(values) > len(inputs):
                raise KilnError(f"@main takes {len(inputs)} arguments ({', '.join(names)}), got {len(values)}")
            for name, value in kwargs.items():
                if name not in names:
                    raise KilnError(f"@main has no parameter named {name!r}; parameters: {names}")
                index = names.index(name)
                values.extend([None] * (index + 1 - len(values)))
                if values[index] is not None:
                    raise KilnError(f"@main: parameter {name!r} is given twice")
                values[index] = value
            if len(values) < len(inputs) or any(v is None for v in values):
                missing = [n for k, n in enumerate(names) if k >= len(values) or values[k] is None]
                raise KilnError(f"@main: missing arguments for parameters {', '.join(missing)}")
            for i, (param, value) in enumerate(zip(inputs, values, strict=True)):
                ttype = param.checked_type_
                if isinstance(value, np.ndarray) and isinstance(ttype, TensorType) and value.dtype != ttype.dtype:
                    # TVM's graph executor copies a numpy input into the input tensor, converting it to its dtype
                    value = value.astype(ttype.dtype)
                arr = _convert_arg(value, ttype, f"@main argument {i} (%{param.name_hint})")
                # by position, as TVM's: parameters may share a name hint (the graph names them apart)
                gmodule.set_input(i, arr)
            gmodule.run()
            outputs = iter([gmodule.get_output(i) for i in range(gmodule.get_num_outputs())])
            return _unflatten(outputs, ret_type)

        return _graph_wrapper


@register_func("relay.executor.graph")
def _graph_executor_factory(mod, device, target, params=None):
    return GraphExecutor(mod, device, target, params)
