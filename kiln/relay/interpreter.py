"""The reference interpreter: evaluates Relay with numpy, the oracle every pass and every compiled module is checked
against (TVM's ``relay.create_executor("debug")``).

The evaluation itself is :mod:`kiln.relay.evaluator`; this module is its Python face. The executor types an
untyped module itself, checks arguments against the parameter types, converts them (NDArrays, numpy arrays, Python
numbers, tuples, :class:`ConstructorValue` and :class:`RefValue`) and returns NDArrays, tuples of results,
ConstructorValues with NDArray fields, RefValues, or callables for function results.
"""

import numpy as np

from ..error import KilnError, RuntimeArgumentError
from ..ir.expr import GlobalVar, RelayExpr
from ..ir.module import IRModule
from ..ir.type import TensorType, TupleType
from ..ir.type_poly import FuncType, GlobalTypeVar, RelayRefType, TypeCall
from ..runtime.container import ADT
from ..runtime.device import Device, cpu
from ..runtime.device import device as make_device
from ..runtime.ndarray import NDArray
from ..runtime.ndarray import array as nd_array
from ..runtime.packed_func import get_global_func
from .analysis import free_vars
from .evaluator import Closure, ConstructorFunction, ConstructorValue, Env, Frame, Machine, RefValue
from .expr import Constant, TupleWrapper, bind, const
from .function import Function
from .transform.infer_type import TypeInferencer, infer_type

_MISSING = object()


def _to_numpy(value):
    """An NDArray, numpy value, Python scalar, tuple (or runtime ADT tuple), ConstructorValue or RefValue of them as
    the interpreter's value."""
    if isinstance(value, NDArray):
        return value.handle
    if isinstance(value, ADT) and value.tag == 0:
        return tuple(_to_numpy(v) for v in value.fields)
    if isinstance(value, tuple | list) and not all(isinstance(v, int | float | bool) for v in value):
        return tuple(_to_numpy(v) for v in value)
    if isinstance(value, FunctionCallable):
        return value.closure
    if isinstance(value, ConstructorValue):
        return ConstructorValue(value.tag, [_to_numpy(f) for f in value.fields], value.constructor)
    if isinstance(value, RefValue):
        return RefValue(_to_numpy(value.value))
    if isinstance(value, Closure | ConstructorFunction | np.ndarray):
        return value
    return np.asarray(value)


def evaluate_expr(expr, env=None, mod=None):
    """Evaluate ``expr`` with numpy and return its value (for passes such as FoldConstant).

    Parameters
    ----------
    expr : RelayExpr
        A closed expression, or one whose free variables ``env`` binds.
    env : dict of Var to value, optional
        Values (NDArray, numpy array, Python scalar or tuple) of free variables.
    mod : IRModule, optional
        The module that global functions called by ``expr`` live in.

    Returns
    -------
    numpy.ndarray, tuple or Closure
        The value: an ndarray for a tensor (possibly sharing memory with a constant: do not write into it), a
        tuple of values, or a Closure for a function.

    Examples
    --------
    >>> evaluate_expr(relay.const(1.0) + relay.const(2.0))   # doctest: +SKIP
    array(3., dtype=float32)
    """
    bindings = {var: _to_numpy(value) for var, value in (env or {}).items()}
    machine = Machine(mod if mod is not None else IRModule())
    with np.errstate(all="ignore"):
        return machine.run(expr, Frame(Env(bindings, None)))


def _arg_error(where, message):
    return RuntimeArgumentError(f"{where}: {message}")


def _convert_arg(value, ttype, where):
    """A user argument as an interpreter value, checked against the parameter type ``ttype``."""
    if isinstance(value, ADT) and value.tag == 0:  # TVM's tuple value (runtime.container.tuple_object)
        value = tuple(value.fields)
    if isinstance(value, Constant):  # TVM's executors take relay constants as arguments
        value = value.data
    if isinstance(ttype, TypeCall | GlobalTypeVar) and not isinstance(value, ConstructorValue):
        raise _arg_error(where, f"expects a value of data type {ttype} (a ConstructorValue), got "
                                f"{type(value).__name__}")
    if isinstance(ttype, RelayRefType) and not isinstance(value, RefValue):
        raise _arg_error(where, f"expects a reference of type {ttype} (a RefValue), got {type(value).__name__}")
    if not isinstance(ttype, TensorType | TupleType | FuncType):  # data type, reference or type parameter: any value
        return _to_numpy(value)
    if isinstance(ttype, TupleType):
        if not isinstance(value, tuple | list) or len(value) != len(ttype.fields):
            raise _arg_error(where, f"expects a tuple of {len(ttype.fields)} values of type {ttype}")
        return tuple(_convert_arg(v, t, f"{where}[{i}]")
                     for i, (v, t) in enumerate(zip(value, ttype.fields, strict=True)))
    if isinstance(ttype, FuncType):
        if not isinstance(value, FunctionCallable):
            raise _arg_error(where, f"expects a function of type {ttype}, got {type(value).__name__}")
        return value.closure
    if isinstance(value, NDArray):
        arr = value.handle
    elif isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
    elif isinstance(value, bool | int | float | list | tuple) and isinstance(ttype, TensorType):
        # Python numbers take the parameter's dtype, if they fit it exactly
        try:
            arr = np.asarray(value, dtype=ttype.dtype)
            fits = np.array_equal(arr, np.asarray(value))
        except (ValueError, TypeError, OverflowError) as exc:  # a ragged list, a number no dtype holds
            raise _arg_error(where, f"the Python value {value!r:.80} is not a {ttype.dtype} tensor ({exc})") from None
        if not fits:
            raise _arg_error(where, f"the Python value {value!r} does not fit dtype {ttype.dtype}")
    else:
        raise _arg_error(where, f"expects a tensor (NDArray, numpy array or Python number), got {type(value).__name__}")
    if isinstance(ttype, TensorType):
        if arr.dtype.name != ttype.dtype:
            raise _arg_error(where, f"expects dtype {ttype.dtype}, got {arr.dtype.name} (type {ttype})")
        if not ttype.admits(arr.shape):
            raise _arg_error(where, f"expects shape {ttype.shape}, got {arr.shape} (type {ttype})")
    return arr


def _to_user(value, machine, device):
    if isinstance(value, tuple):  # TVM's runtime.container.ADT of tag 0, which is also a Python tuple here
        return ADT(0, [_to_user(v, machine, device) for v in value])
    if isinstance(value, Closure):
        return FunctionCallable(machine, value, "a closure", device)
    if isinstance(value, ConstructorValue):
        return ConstructorValue(value.tag, [_to_user(f, machine, device) for f in value.fields], value.constructor)
    if isinstance(value, RefValue):
        return RefValue(_to_user(value.value, machine, device))
    if isinstance(value, ConstructorFunction):
        return value
    return nd_array(value, device)


class FunctionCallable:
    """A Relay function made callable from Python: takes NDArrays, numpy arrays or Python scalars (positionally or
    by parameter name) and returns an NDArray, or for a tuple result an ADT (a Python tuple of the fields, as the
    VM's)."""

    def __init__(self, machine, closure, name, device):
        self.machine = machine
        self.closure = closure
        self.name = name
        self.device = device

    def _ordered(self, args, kwargs):
        params = self.closure.func.params
        names = [p.name_hint for p in params]
        if len(args) > len(params):
            raise RuntimeArgumentError(f"{self.name} takes {len(params)} arguments ({', '.join(names)}), "
                                       f"got {len(args)}")
        values = list(args) + [_MISSING] * (len(params) - len(args))
        for key, value in kwargs.items():
            if key not in names:
                raise RuntimeArgumentError(f"{self.name} has no parameter named {key!r}; parameters: {names}")
            index = names.index(key)
            if values[index] is not _MISSING:
                raise RuntimeArgumentError(f"{self.name}: parameter {key!r} is given twice")
            values[index] = value
        missing = [n for n, v in zip(names, values, strict=True) if v is _MISSING]
        if missing:
            raise RuntimeArgumentError(f"{self.name}: missing arguments for parameters {', '.join(missing)}")
        return values

    def __call__(self, *args, **kwargs):
        values = self._ordered(args, kwargs)
        converted = []
        for i, (param, value) in enumerate(zip(self.closure.func.params, values, strict=True)):
            ttype = param.checked_type_ or param.type_annotation
            converted.append(_convert_arg(value, ttype, f"{self.name} argument {i} (%{param.name_hint})"))
        with np.errstate(all="ignore"):
            result = self.machine.apply(self.closure, converted, self.name)
        return _to_user(result, self.machine, self.device)


def _as_expr(value):
    """A bound value as an expression: arrays keep their dtype, Python numbers follow ``relay.const``'s rules."""
    if isinstance(value, RelayExpr):
        return value
    if isinstance(value, NDArray | np.ndarray | np.generic):
        arr = _to_numpy(value)
        return const(arr, dtype=arr.dtype.name)
    return const(value)


class Executor:
    """Base of executors: ``evaluate(expr=None, binds=None)`` returns a callable, or a value (TVM's API)."""

    def _make_executor(self, expr=None):
        raise NotImplementedError

    def evaluate(self, expr=None, binds=None):
        """Return ``mod["main"]`` (``expr`` None), a global function (GlobalVar or name) or a Function as a Python
        callable; any other expression is evaluated and its value returned. ``binds`` maps Vars of ``expr`` to
        expressions substituted first."""
        if isinstance(expr, TupleWrapper):
            expr = expr.astuple()
        if binds:
            expr = bind(expr, {var: _as_expr(value) for var, value in binds.items()})
        if expr is None or isinstance(expr, Function | GlobalVar | str):
            return self._make_executor(expr)
        return self._make_executor(Function([], expr))()


class Interpreter(Executor):
    """The numpy reference interpreter over ``mod`` (``create_executor("debug")``)."""

    def __init__(self, mod, device=None, target="llvm"):
        self.mod = mod
        self.device = device or cpu(0)
        self.target = target

    def _make_executor(self, expr=None):
        mod = infer_type(self.mod)
        machine = Machine(mod)
        if expr is None or isinstance(expr, GlobalVar | str):
            gv = mod.get_global_var(expr if isinstance(expr, str) else getattr(expr, "name_hint", "main"))
            return FunctionCallable(machine, Closure(mod[gv], None), str(gv), self.device)
        free = free_vars(expr)
        if free:
            raise KilnError(f"cannot evaluate an expression with free variables "
                            f"{', '.join('%' + v.name_hint for v in free)}; bind them with evaluate(expr, binds=...)")
        if expr.checked_type_ is None:
            expr = TypeInferencer(lambda gv: mod[gv.name_hint].checked_type_, mod=mod).visit(expr)
        return FunctionCallable(machine, Closure(expr, None), "the function", self.device)


def _bind_params(mod, params):
    """``mod`` with parameters of ``main`` named in ``params`` replaced by constants (TVM's bind_params_by_name;
    unknown names are ignored, as in TVM)."""
    main = mod["main"]
    binds = {}
    for param in main.params:
        if param.name_hint not in params:
            continue
        value = _to_numpy(params[param.name_hint])
        ttype = param.type_annotation
        if isinstance(ttype, TensorType):
            _convert_arg(value, ttype, f"params[{param.name_hint!r}]")
        binds[param.name_hint] = const(value, dtype=value.dtype.name)
    bound = mod.shallow_copy()
    bound["main"] = bind(main, binds) if binds else main
    return bound


def create_executor(kind="debug", mod=None, device=None, target="llvm", params=None):
    """Create an executor for ``mod``, as TVM's ``relay.create_executor``.

    Parameters
    ----------
    kind : str
        ``"debug"`` (alias ``"interpreter"``): the numpy reference interpreter. ``"graph"``, ``"vm"`` and ``"aot"``
        compile with relay.build; they are available when the build layer registered
        ``relay.executor.<kind>`` (called as ``factory(mod, device, target, params)``).
    mod : IRModule, optional
        The module (an empty one by default; a Function or expression is wrapped with ``IRModule.from_expr``).
    device : Device, optional
        Where results live (``kiln.cpu(0)`` by default).
    target : str, optional
        The compilation target (unused by the interpreter).
    params : dict of str to array, optional
        Values bound to parameters of ``main`` by name, as constants.

    Examples
    --------
    >>> f = relay.create_executor("debug", mod=mod, device=kiln.cpu(0)).evaluate()   # doctest: +SKIP
    >>> out = f(np.ones((1, 3), "float32"))                                         # doctest: +SKIP
    """
    if mod is None:
        mod = IRModule()
    elif not isinstance(mod, IRModule):
        mod = IRModule.from_expr(mod)
    device = cpu(0) if device is None else (device if isinstance(device, Device) else make_device(device))
    if kind in ("debug", "interpreter"):
        if params:
            mod = _bind_params(mod, params)
        return Interpreter(mod, device, target)
    if kind in ("graph", "vm", "aot"):
        factory = get_global_func(f"relay.executor.{kind}", allow_missing=True)
        if factory is None:
            raise KilnError(f"executor kind {kind!r} comes with relay.build, which has not registered "
                            f"relay.executor.{kind}; use kind='debug' for the reference interpreter")
        return factory(mod, device, target, params)
    raise KilnError(f"unknown executor kind {kind!r}; expected debug, interpreter, graph, vm or aot")


__all__ = ["Closure", "ConstructorValue", "Executor", "FunctionCallable", "Interpreter", "RefValue", "create_executor",
           "evaluate_expr"]
