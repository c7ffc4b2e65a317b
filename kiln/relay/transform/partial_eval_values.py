"""The values and bookkeeping of PartialEvaluate (``partial_eval.py``): partially static values, fuel, the
environment, the reference store, the let list, and the renaming helpers (TVM's ``partial_eval.cc`` and
``let_list.h``, ``de_duplicate.cc``, ``TypeSubst``).

A :class:`PStatic` pairs what is known at compile time (``pstatic``: an :class:`STensor`, :class:`STuple`,
:class:`SConstructor`, :class:`SRef` or :class:`SFunc`, or None) with an atomic expression computing the value at
run time (``dynamic``). *Fuel* bounds inlining: each function has a fuel, met with the fuel of the arguments of
every call; a call is inlined only while the meet makes progress, and every chain of meets is finite, so
partial evaluation terminates even on recursive functions.
"""

import itertools
from contextlib import contextmanager

import numpy as np

from ...error import KilnError
from ...ir.type import IncompleteType
from ..adt import pattern_vars
from ..expr import Call, Let, Var
from ..expr_functor import ExprMutator
from ..function import Function
from .type_solver import bind_type_vars

_CLOCK = itertools.count()


class PStatic:
    """A partially static value: the static part (or None) and the atomic expression computing it."""

    __slots__ = ("pstatic", "dynamic", "created_time")

    def __init__(self, pstatic, dynamic):
        self.pstatic = pstatic
        self.dynamic = dynamic
        self.created_time = next(_CLOCK)


def has_static(static, dynamic) -> PStatic:
    """A value known at compile time."""
    return PStatic(static, dynamic)


def no_static(dynamic) -> PStatic:
    """A value known only at run time."""
    return PStatic(None, dynamic)


class STensor:
    """A tensor known at compile time."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data


class STuple:
    """A tuple whose fields are partially static values."""

    __slots__ = ("fields",)

    def __init__(self, fields):
        self.fields = list(fields)


class SConstructor:
    """A value of an algebraic data type made by a known constructor."""

    __slots__ = ("constructor", "fields")

    def __init__(self, constructor, fields):
        self.constructor = constructor
        self.fields = list(fields)


class SRef:
    """A reference created in the program; its current value lives in the :class:`Store` (keyed by identity)."""

    __slots__ = ()


class SFunc:
    """A function the evaluator can apply: ``func(self_pstatic, args, attrs, type_args, let_list) -> PStatic``."""

    __slots__ = ("func",)

    def __init__(self, func):
        self.func = func


# --- fuel: a meet-semilattice with finite descending chains --------------------------------------------------------
class FTop:
    """The fuel of a function never called yet: the top element."""

    def meet(self, other):
        return other, not isinstance(other, FTop)


class FSeq:
    """Fuels met component by component (one per argument)."""

    def __init__(self, fuels):
        self.fuels = list(fuels)

    def meet(self, other):
        if not isinstance(other, FSeq) or len(other.fuels) != len(self.fuels):
            return self, False
        progress = False
        fuels = []
        for mine, theirs in zip(self.fuels, other.fuels, strict=True):
            met, moved = mine.meet(theirs)
            fuels.append(met)
            progress |= moved
        return FSeq(fuels), progress


class FMin:
    """A natural number met by taking the minimum: an argument's creation time (``FTime``), or the value of a
    non-negative integer scalar argument (``FTValue``), so a recursion on a shrinking counter keeps unrolling."""

    def __init__(self, value):
        self.value = value

    def meet(self, other):
        new = min(self.value, other.value)
        return FMin(new), new < self.value


def argument_fuel(ps: PStatic) -> FSeq:
    """The fuel of one argument: its creation time and its value when it is a static non-negative int scalar."""
    tvalue = 0
    if isinstance(ps.pstatic, STensor):
        data = ps.pstatic.data
        if data.shape == () and data.dtype in (np.int32, np.int64):
            tvalue = max(0, int(data))
    return FSeq([FMin(ps.created_time), FMin(tvalue)])


# --- environment and store -------------------------------------------------------------------------------------------
class Environment:
    """Frames of variable bindings, keyed by the variable's identity (``vid``), searched innermost first."""

    def __init__(self):
        self.frames: list = [{}]

    @contextmanager
    def extend(self):
        """A new innermost frame for the duration of the ``with`` block."""
        self.frames.append({})
        try:
            yield
        finally:
            self.frames.pop()

    def insert(self, var, ps: PStatic) -> None:
        self.frames[-1][var.vid] = ps

    def lookup(self, var) -> PStatic:
        for frame in reversed(self.frames):
            found = frame.get(var.vid)
            if found is not None:
                return found
        raise KilnError(f"PartialEvaluate: the variable {var.name_hint} is not bound")


class _StoreFrame:
    __slots__ = ("store", "history_valid")

    def __init__(self, history_valid=True):
        self.store: dict = {}
        self.history_valid = history_valid


class Store:
    """The values of references, in frames so a path that may not run can be rolled back; an unknown effect
    pushes an invalid frame that hides everything known before it."""

    def __init__(self):
        self.frames = [_StoreFrame()]

    @contextmanager
    def extend(self):
        """Evaluate in a copy of the store, dropped (with the invalidations made inside) at the end."""
        self.frames.append(_StoreFrame())
        try:
            yield
        finally:
            while not self.frames[-1].history_valid:
                self.frames.pop()
            self.frames.pop()

    def insert(self, ref: SRef, ps: PStatic) -> None:
        self.frames[-1].store[ref] = ps

    def lookup(self, ref: SRef):
        for frame in reversed(self.frames):
            found = frame.store.get(ref)
            if found is not None:
                return found
            if not frame.history_valid:
                return None
        return None

    def invalidate(self) -> None:
        """Forget every reference's value: an effect the evaluator cannot see happened."""
        self.frames.append(_StoreFrame(history_valid=False))


class LetList:
    """Bindings generated in order, closed over a body by :meth:`get` (keeps generated code in A-normal form)."""

    def __init__(self):
        self.bindings: list = []

    def push(self, expr, var=None) -> Var:
        """Bind ``expr`` to ``var`` (a fresh variable when None) and return the variable."""
        var = Var("x") if var is None else var
        self.bindings.append((var, expr))
        return var

    def get(self, body):
        for var, value in reversed(self.bindings):
            body = Let(var, value, body)
        return body

    @staticmethod
    def with_bindings(build):
        """``build(let_list)`` returns the body; the result is the body under the bindings it pushed."""
        ll = LetList()
        return ll.get(build(ll))


def is_atomic(expr) -> bool:
    """Whether ``expr`` may be duplicated freely (a variable, constant, operator, constructor or global)."""
    from ...ir.adt import Constructor
    from ...ir.expr import GlobalVar
    from ...ir.op import Op
    from ..expr import Constant

    return isinstance(expr, Var | Constant | Op | Constructor | GlobalVar)


# --- renaming ----------------------------------------------------------------------------------------------------
def _fresh(var) -> Var:
    return Var(var.name_hint, var.type_annotation)


class DeDup(ExprMutator):
    """Give every variable bound inside an expression a fresh identity (TVM's ``DeDup``); ``on_function(old, new)``
    is told of every function rebuilt, so facts keyed by a function (its fuel id) follow it."""

    def __init__(self, on_function=None):
        super().__init__()
        self.rename: dict = {}
        self.on_function = on_function

    def visit_var(self, var):
        return self.rename.get(var.vid, var)

    def _bind(self, var):
        new = _fresh(var)
        self.rename[var.vid] = new
        return new

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        bindings = []
        for binding in chain:
            new_var = self._bind(binding.var)
            bindings.append((new_var, self.visit(binding.value)))
        result = self.visit(body)
        for binding, (new_var, new_value) in zip(reversed(chain), reversed(bindings), strict=True):
            result = Let(new_var, new_value, result, span=binding.span)
            self.memo_map[binding] = result
        return result

    def visit_function(self, fn):
        params = tuple(self._bind(p) for p in fn.params)
        new = fn.with_fields(params=params, body=self.visit(fn.body))
        if self.on_function is not None:
            self.on_function(fn, new)
        return new

    def visit_clause(self, clause):
        for var in pattern_vars(clause.lhs):
            self._bind(var)
        return super().visit_clause(clause)


class Remap(ExprMutator):
    """Make every variable one object per identity (type substitution copies variables, keeping their ``vid``)."""

    def __init__(self):
        super().__init__()
        self.canonical: dict = {}

    def visit_var(self, var):
        return self.canonical.setdefault(var.vid, var)


class TypeSubst(ExprMutator):
    """Replace type variables in the annotations and type arguments of an expression (TVM's ``TypeSubst``);
    variables keep their identity, and ``on_function(old, new)`` is told of every function rebuilt."""

    def __init__(self, mapping, on_function=None):
        super().__init__()
        self.mapping = mapping
        self.on_function = on_function

    def _type(self, ttype):
        return None if ttype is None else bind_type_vars(ttype, self.mapping)

    def visit_var(self, var):
        return var.with_fields(type_annotation=self._type(var.type_annotation))

    def visit_call(self, call):
        new = super().visit_call(call)
        type_args = tuple(self._type(t) for t in call.type_args)
        return new.with_fields(type_args=type_args) if any(
            a is not b for a, b in zip(type_args, call.type_args, strict=True)) else new

    def visit_function(self, fn):
        new = super().visit_function(fn)
        new = new.with_fields(ret_type=self._type(fn.ret_type))
        if self.on_function is not None:
            self.on_function(fn, new)
        return new


def type_subst(expr, type_params, type_args, on_function=None):
    """``expr`` with ``type_params`` replaced by ``type_args`` (by unknown types where the arguments run out)."""
    mapping = {tp: (type_args[i] if i < len(type_args) else IncompleteType()) for i, tp in enumerate(type_params)}
    return TypeSubst(mapping, on_function).visit(expr) if mapping else expr


def binder_vids(expr) -> set:
    """The identities of the variables bound inside ``expr``."""
    from ..analysis.free_vars import bound_vars

    return {v.vid for v in bound_vars(expr)}


def free_vars_by_vid(func: Function) -> list:
    """The free variables of ``func``, one per identity."""
    from ..analysis.free_vars import free_vars

    bound = binder_vids(func)
    seen: dict = {}
    for var in free_vars(func):
        if var.vid not in bound:
            seen.setdefault(var.vid, var)
    return list(seen.values())


def as_call(op, args, attrs=None, type_args=()):
    """A call built from evaluated parts."""
    return Call(op, tuple(args), attrs, tuple(type_args or ()))
