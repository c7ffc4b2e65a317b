"""The reference interpreter: evaluates Relay with numpy, the oracle every pass and every compiled module is checked
against (TVM's ``relay.create_executor("debug")``).

How it works. Values are numpy arrays (tensors), Python tuples (tuple values) and :class:`Closure` objects
(function values: a Function plus the environment it was created in). Evaluation is a small stack machine rather
than a recursive visitor, so a chain of 10,000 operators or a 10,000-deep let chain needs no Python recursion:

* ``todo`` holds tasks ``(kind, node, frame)``; ``vals`` holds computed values. ``EVAL`` of a Call pushes a ``CALL``
  continuation and then the evaluation of each operand, so when ``CALL`` runs its operands sit on top of ``vals``.
  Tuples, TupleGetItem, Let and If work the same way with their own continuation.
* A frame is one function activation: an environment (variable -> value, chained to the closure's captured
  environment) and a memo (node -> value). The memo makes a subexpression shared in the dataflow graph evaluate once
  per activation, as Relay's graph semantics require; a Let binds its variable in the frame's environment.
* Calling a closure or global function pushes a ``STORE`` (memoize the call's result in the caller's frame) and the
  evaluation of the callee body in a fresh frame: calls, including recursion through globals or let-bound closures,
  grow ``todo`` and never the Python stack.
* An operator call runs the operator's ``FEvaluate`` (numpy implementations in :mod:`kiln.relay.reference`) and the
  result is conformed to the call's inferred type (the exact dtype; a shape mismatch is an internal error).

The executor types an untyped module itself, checks arguments against the parameter types and returns NDArrays.
"""

import numpy as np

from ..error import InternalError, KilnError, OpNotImplemented, RuntimeArgumentError
from ..ir.expr import GlobalVar, RelayExpr
from ..ir.module import IRModule
from ..ir.op import Op
from ..ir.type import FuncType, TensorType, TupleType
from ..runtime.device import Device, cpu
from ..runtime.device import device as make_device
from ..runtime.ndarray import NDArray
from ..runtime.ndarray import array as nd_array
from ..runtime.packed_func import get_global_func
from . import reference  # noqa: F401  (registers the FEvaluate of every operator)
from .analysis import free_vars
from .expr import Call, Constant, If, Let, Tuple, TupleGetItem, TupleWrapper, Var, bind, const
from .function import Function
from .transform.infer_type import TypeInferencer, infer_type

_MISSING = object()
_EVAL, _CALL, _TUPLE, _GETITEM, _LET, _IF, _STORE = range(7)


class Closure:
    """A function value: ``func`` with the environment ``env`` it captured (None for a global function)."""

    __slots__ = ("env", "func")

    def __init__(self, func, env):
        self.func = func
        self.env = env

    def __repr__(self):
        return f"<Closure of fn with {len(self.func.params)} parameters>"


class _Env:
    __slots__ = ("parent", "vars")

    def __init__(self, bindings, parent):
        self.vars = bindings
        self.parent = parent

    def lookup(self, var):
        env = self
        while env is not None:
            value = env.vars.get(var, _MISSING)
            if value is not _MISSING:
                return value
            env = env.parent
        raise KilnError(f"variable %{var.name_hint} has no value: it is free in the evaluated expression")


class _Frame:
    __slots__ = ("env", "memo")

    def __init__(self, env):
        self.env = env
        self.memo = {}


def _conform(value, ttype, what):
    """``value`` with exactly the dtype of ``ttype`` (numpy results normalized to ndarrays)."""
    if isinstance(value, tuple):
        fields = ttype.fields if isinstance(ttype, TupleType) else (None,) * len(value)
        if len(fields) != len(value):
            raise InternalError(f"{what}: evaluated to {len(value)} values, its type {ttype} has {len(fields)}")
        return tuple(_conform(v, t, what) for v, t in zip(value, fields, strict=True))
    if isinstance(value, Closure):
        return value
    arr = value if type(value) is np.ndarray else np.asarray(value)
    if isinstance(ttype, TensorType):
        if arr.dtype.name != ttype.dtype:
            arr = arr.astype(ttype.dtype)
        if not ttype.admits(arr.shape):
            raise InternalError(f"{what}: evaluated to shape {arr.shape}, its type is {ttype}")
    return arr


class _Machine:
    """Evaluates expressions of one module (see the module docstring)."""

    def __init__(self, mod):
        self.mod = mod
        self.globals = {}

    def global_func(self, gv):
        func = self.globals.get(gv)
        if func is not None:
            return func
        func = self.mod[gv]
        if not isinstance(func, Function):  # a lowered PrimFunc: not an error of the program, a limit of this oracle
            raise OpNotImplemented(f"the interpreter cannot run {gv}: it is a {type(func).__name__}, not a Relay "
                                   f"function")
        self.globals[gv] = func
        return func

    @staticmethod
    def enter(func, env, args, what):
        if len(args) != len(func.params):
            raise KilnError(f"call of {what} passes {len(args)} arguments, the function takes {len(func.params)}")
        return _Frame(_Env(dict(zip(func.params, args, strict=True)), env))

    def apply(self, closure, args, what="a function"):
        """Call ``closure`` with ``args`` (numpy values)."""
        func = closure.func
        return self.run(func.body, self.enter(func, closure.env, args, what))

    @staticmethod
    def call_op(call, args):
        op = call.op
        fevaluate = op.get_attr("FEvaluate")
        if fevaluate is None:
            raise OpNotImplemented(f"operator {op.name} has no reference implementation (FEvaluate) in the interpreter")
        try:
            out = fevaluate(call.attrs, *args)
        except KilnError:
            raise
        except Exception as exc:  # a numpy error inside an implementation: report which operator failed
            shapes = ", ".join(str(getattr(a, "shape", type(a).__name__)) for a in args)
            raise KilnError(f"{op.name}: evaluation failed on arguments of shapes ({shapes}): "
                            f"{type(exc).__name__}: {exc}") from exc
        return _conform(out, call.checked_type_, op.name)

    def run(self, root, frame):
        """Evaluate ``root`` in ``frame`` without recursion; returns its value."""
        todo = [(_EVAL, root, frame)]
        vals = []
        push, pop, put = todo.append, todo.pop, vals.append
        while todo:
            kind, node, frame = pop()
            if kind == _EVAL:
                memo = frame.memo
                hit = memo.get(node, _MISSING)
                if hit is not _MISSING:
                    put(hit)
                    continue
                kind_of = type(node)
                if kind_of is Var:
                    put(frame.env.lookup(node))
                elif kind_of is Call:
                    push((_CALL, node, frame))
                    for arg in reversed(node.args):
                        push((_EVAL, arg, frame))
                    if not isinstance(node.op, Op | GlobalVar):
                        push((_EVAL, node.op, frame))
                elif kind_of is Constant:
                    memo[node] = node.data.handle
                    put(node.data.handle)
                elif kind_of is Tuple:
                    push((_TUPLE, node, frame))
                    for field in reversed(node.fields):
                        push((_EVAL, field, frame))
                elif kind_of is TupleGetItem:
                    push((_GETITEM, node, frame))
                    push((_EVAL, node.tuple_value, frame))
                elif kind_of is Let:
                    push((_LET, node, frame))
                    push((_EVAL, node.value, frame))
                elif kind_of is If:
                    push((_IF, node, frame))
                    push((_EVAL, node.cond, frame))
                elif kind_of is Function:
                    memo[node] = value = Closure(node, frame.env)
                    put(value)
                elif kind_of is GlobalVar:
                    memo[node] = value = Closure(self.global_func(node), None)
                    put(value)
                elif kind_of is Op:
                    raise KilnError(f"operator {node.name} is used as a value; operators can only be called")
                else:
                    raise KilnError(f"the interpreter cannot evaluate a {kind_of.__name__}")
            elif kind == _CALL:
                count = len(node.args)
                args = vals[-count:] if count else []
                if count:
                    del vals[-count:]
                op = node.op
                if type(op) is Op:
                    frame.memo[node] = value = self.call_op(node, args)
                    put(value)
                    continue
                if type(op) is GlobalVar:
                    func, env, what = self.global_func(op), None, str(op)
                else:
                    callee = vals.pop()
                    if not isinstance(callee, Closure):
                        raise KilnError(f"cannot call a value of type {type(callee).__name__}")
                    func, env, what = callee.func, callee.env, "a closure"
                push((_STORE, node, frame))
                push((_EVAL, func.body, self.enter(func, env, args, what)))
            elif kind == _STORE:
                frame.memo[node] = vals[-1]
            elif kind == _TUPLE:
                count = len(node.fields)
                value = tuple(vals[-count:]) if count else ()
                if count:
                    del vals[-count:]
                frame.memo[node] = value
                put(value)
            elif kind == _GETITEM:
                value = vals.pop()
                if not isinstance(value, tuple) or not 0 <= node.index < len(value):
                    raise KilnError(f"TupleGetItem .{node.index} of a value that is not a tuple of that many fields")
                frame.memo[node] = value = value[node.index]
                put(value)
            elif kind == _LET:
                frame.env.vars[node.var] = vals.pop()
                push((_EVAL, node.body, frame))
            else:  # _IF
                push((_STORE, node, frame))
                push((_EVAL, node.true_branch if _truth(vals.pop()) else node.false_branch, frame))
        return vals.pop()


def _truth(value) -> bool:
    arr = np.asarray(value) if not isinstance(value, tuple | Closure) else None
    if arr is None or arr.size != 1:
        raise KilnError(f"an If condition must be a scalar tensor, got {getattr(arr, 'shape', type(value).__name__)}")
    return bool(arr.reshape(()))


def _to_numpy(value):
    """An NDArray, numpy value, Python scalar or tuple of them as the interpreter's value."""
    if isinstance(value, NDArray):
        return value.handle
    if isinstance(value, tuple | list) and not all(isinstance(v, int | float | bool) for v in value):
        return tuple(_to_numpy(v) for v in value)
    if isinstance(value, FunctionCallable):
        return value.closure
    if isinstance(value, Closure | np.ndarray):
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
    machine = _Machine(mod if mod is not None else IRModule())
    with np.errstate(all="ignore"):
        return machine.run(expr, _Frame(_Env(bindings, None)))


def _arg_error(where, message):
    return RuntimeArgumentError(f"{where}: {message}")


def _convert_arg(value, ttype, where):
    """A user argument as an interpreter value, checked against the parameter type ``ttype``."""
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
        arr = np.asarray(value, dtype=ttype.dtype)
        if not np.array_equal(arr, np.asarray(value)):
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
    if isinstance(value, tuple):
        return tuple(_to_user(v, machine, device) for v in value)
    if isinstance(value, Closure):
        return FunctionCallable(machine, value, "a closure", device)
    return nd_array(value, device)


class FunctionCallable:
    """A Relay function made callable from Python: takes NDArrays, numpy arrays or Python scalars (positionally or
    by parameter name) and returns an NDArray, or a tuple for a tuple result."""

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
        machine = _Machine(mod)
        if expr is None or isinstance(expr, GlobalVar | str):
            gv = mod.get_global_var(expr if isinstance(expr, str) else getattr(expr, "name_hint", "main"))
            return FunctionCallable(machine, Closure(mod[gv], None), str(gv), self.device)
        free = free_vars(expr)
        if free:
            raise KilnError(f"cannot evaluate an expression with free variables "
                            f"{', '.join('%' + v.name_hint for v in free)}; bind them with evaluate(expr, binds=...)")
        if expr.checked_type_ is None:
            expr = TypeInferencer(lambda gv: mod[gv.name_hint].checked_type_).visit(expr)
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


__all__ = ["Closure", "Executor", "FunctionCallable", "Interpreter", "create_executor", "evaluate_expr"]
