"""The evaluator behind the reference interpreter (:mod:`kiln.relay.interpreter`): Relay evaluated with numpy.

How it works. Values are numpy arrays (tensors), Python tuples (tuple values), :class:`Closure` objects (function
values: a Function plus the environment it was created in), :class:`ConstructorValue` (a value of an algebraic data
type: the constructor's tag and the fields) and :class:`RefValue` (a mutable reference cell). Evaluation is a small
stack machine rather than a recursive visitor, so a chain of 10,000 operators or a 10,000-deep let chain needs no
Python recursion:

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
* A call of a constructor makes a :class:`ConstructorValue`; a constructor used as a value (``foldr(Cons, ...)``)
  is a :class:`ConstructorFunction`, which does the same when called.
* ``match`` tries its clauses in order; the first whose pattern fits the value binds the pattern's variables in the
  frame's environment and evaluates its right-hand side. A partial match (``match?``) that no clause fits is a
  run-time error.
* ``ref(v)`` makes a new cell, ``ref_read``/``ref_write`` read and replace its content; effects happen in the
  order the expressions are evaluated (let values before bodies, call arguments left to right).
"""

import numpy as np

from ..error import InternalError, KilnError, OpNotImplemented
from ..ir.adt import Constructor
from ..ir.expr import GlobalVar
from ..ir.op import Op
from ..ir.type import TensorType, TupleType
from ..runtime.object import Object
from . import reference  # noqa: F401  (registers the FEvaluate of every operator)
from .adt import Match, PatternConstructor, PatternTuple, PatternVar
from .expr import Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from .function import Function
from .op.op import OpPattern

_MISSING = object()
_EVAL, _CALL, _TUPLE, _GETITEM, _LET, _IF, _STORE, _MATCH, _REF = range(9)


class Closure:
    """A function value: ``func`` with the environment ``env`` it captured (None for a global function)."""

    __slots__ = ("env", "func")

    def __init__(self, func, env):
        self.func = func
        self.env = env

    def __repr__(self):
        return f"<Closure of fn with {len(self.func.params)} parameters>"


class ConstructorValue(Object):
    """A value of an algebraic data type: made by ``constructor`` (whose ``tag`` it records) from ``fields``
    (TVM's ``relay.backend.interpreter.ConstructorValue``).

    Examples
    --------
    >>> nil_value = ConstructorValue(nil.tag, [], nil)   # doctest: +SKIP
    """

    __slots__ = ("constructor", "fields", "tag")

    def __init__(self, tag, fields, constructor=None):
        self.tag = int(tag)
        self.fields = list(fields)
        self.constructor = constructor

    def __repr__(self):
        name = self.constructor.name_hint if self.constructor is not None else f"tag {self.tag}"
        return f"ConstructorValue({name}, {len(self.fields)} fields)"


class RefValue(Object):
    """A mutable reference cell holding ``value`` (TVM's ``relay.backend.interpreter.RefValue``)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"RefValue({self.value!r})"


class ConstructorFunction:
    """A constructor used as a function value: calling it makes a :class:`ConstructorValue`."""

    __slots__ = ("constructor",)

    def __init__(self, constructor):
        self.constructor = constructor

    def __repr__(self):
        return f"<constructor {self.constructor.name_hint}>"


def make_value(ctor, args):
    """The value ``ctor(*args)``."""
    if len(args) != len(ctor.inputs):
        raise KilnError(f"constructor {ctor.name_hint} takes {len(ctor.inputs)} fields, got {len(args)}")
    return ConstructorValue(ctor.tag, args, ctor)


def bind_pattern(pattern, value, bindings) -> bool:
    """Whether ``value`` fits ``pattern``; the pattern's variables are added to ``bindings`` (var -> value)."""
    stack = [(pattern, value)]
    while stack:
        p, v = stack.pop()
        if isinstance(p, PatternVar):
            bindings[p.var] = v
        elif isinstance(p, PatternConstructor):
            if not isinstance(v, ConstructorValue) or v.tag != p.constructor.tag:
                return False
            stack.extend(zip(p.patterns, v.fields, strict=True))
        elif isinstance(p, PatternTuple):
            if not isinstance(v, tuple) or len(v) != len(p.patterns):
                return False
            stack.extend(zip(p.patterns, v, strict=True))
    return True


class Env:
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


class Frame:
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
    if isinstance(value, Closure | ConstructorValue | RefValue | ConstructorFunction):
        return value
    arr = value if type(value) is np.ndarray else np.asarray(value)
    if isinstance(ttype, TensorType):
        if arr.dtype.name != ttype.dtype:
            arr = arr.astype(ttype.dtype)
        if not ttype.admits(arr.shape):
            raise InternalError(f"{what}: evaluated to shape {arr.shape}, its type is {ttype}")
    return arr


class Machine:
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
        return Frame(Env(dict(zip(func.params, args, strict=True)), env))

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
            if op.get_attr("TOpPattern") == OpPattern.BROADCAST and call.attrs is None:
                # numpy's broadcasting; nn.bias_add, nn.prelu and the like broadcast along an attribute's axis
                _check_broadcast(op.name, args)
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
                elif kind_of is Constructor:
                    put(ConstructorFunction(node))
                elif kind_of is Match:
                    push((_MATCH, node, frame))
                    push((_EVAL, node.data, frame))
                elif kind_of is RefCreate or kind_of is RefRead:
                    push((_REF, node, frame))
                    push((_EVAL, node.value if kind_of is RefCreate else node.ref, frame))
                elif kind_of is RefWrite:
                    push((_REF, node, frame))
                    push((_EVAL, node.value, frame))
                    push((_EVAL, node.ref, frame))
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
                    if isinstance(callee, ConstructorFunction):
                        frame.memo[node] = value = make_value(callee.constructor, args)
                        put(value)
                        continue
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
            elif kind == _MATCH:
                push((_STORE, node, frame))
                push((_EVAL, _choose_clause(node, vals.pop(), frame.env.vars), frame))
            elif kind == _REF:
                frame.memo[node] = value = _ref_op(node, vals)
                put(value)
            else:  # _IF
                push((_STORE, node, frame))
                push((_EVAL, node.true_branch if _truth(vals.pop()) else node.false_branch, frame))
        return vals.pop()


def _choose_clause(match, value, env_vars):
    """The right-hand side of the first clause of ``match`` that ``value`` fits, its variables bound in
    ``env_vars``."""
    for clause in match.clauses:
        bindings: dict = {}
        if bind_pattern(clause.lhs, value, bindings):
            env_vars.update(bindings)
            return clause.rhs
    shown = value.constructor.name_hint if isinstance(value, ConstructorValue) and value.constructor else \
        type(value).__name__
    raise KilnError(f"match failed: no clause handles a value made by {shown}"
                    f"{' (a partial match, match?)' if not match.complete else ''}")


def _ref_op(node, vals):
    """Apply a RefCreate, RefRead or RefWrite to its evaluated operands (on top of ``vals``)."""
    if type(node) is RefCreate:
        return RefValue(vals.pop())
    if type(node) is RefWrite:
        value, cell = vals.pop(), vals.pop()
    else:
        cell = vals.pop()
    if not isinstance(cell, RefValue):
        raise KilnError(f"{'ref_write' if type(node) is RefWrite else 'ref_read'} of a {type(cell).__name__}, "
                        f"not a reference")
    if type(node) is RefRead:
        return cell.value
    cell.value = value
    return ()


def _truth(value) -> bool:
    arr = np.asarray(value) if isinstance(value, np.ndarray | np.generic | bool | int | float) else None
    if arr is None or arr.size != 1:
        raise KilnError(f"an If condition must be a scalar tensor, got {getattr(arr, 'shape', type(value).__name__)}")
    return bool(arr.reshape(()))




__all__ = ["Closure", "ConstructorFunction", "ConstructorValue", "Machine", "RefValue", "Frame", "Env", "bind_pattern",
           "make_value"]


def _check_broadcast(name, args):
    """Refuse operands of a broadcast operator whose shapes do not broadcast, in the words of TVM's shape
    functions ("Invalid broadcast shapes"), when its reference failed (only then: some broadcast-pattern operators,
    such as fixed_point_multiply_per_axis, broadcast along an axis rather than numpy's way)."""
    shapes = [np.shape(a) for a in args if isinstance(a, np.ndarray | np.generic)]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise KilnError(f"{name}: Invalid broadcast shapes {', '.join(str(s) for s in shapes)}: they do not "
                        f"broadcast together") from None
