"""Python operators on TIR expressions (TVM's ``ExprOp``), and ``convert`` from Python values to expressions.

``x + 1``, ``x * y``, ``x // 4`` (FloorDiv), ``x % 4`` (FloorMod), ``x < y`` build nodes through :mod:`kiln.tir.op`,
which matches dtypes and folds constants as TVM's C++ operators do. ``/`` on two integers raises, as in TVM, because C
and Python disagree on integer division: call ``tir.truncdiv``, ``tir.floordiv`` or ``tir.indexdiv`` instead.

``==`` and ``!=`` follow TVM's ``EqualOp``/``NotEqualOp``: they return a small object whose truth value is identity
(so nodes work as dict keys and in ``in`` tests) and which becomes an ``EQ``/``NE`` node wherever an expression is
expected (``tir.Select(i == 0, a, b)``). ``bool(expr)`` raises: use ``tir.all``/``tir.any`` to combine conditions.
"""

from numbers import Integral, Real

import numpy as np

from ..error import ExprTruthValueError, TIRError


def _defers(other) -> bool:
    """Whether ``other`` (a ``te.Tensor``) computes ``expr + tensor`` itself, as a new tensor (TVM's topi
    overrides of the generic operators); its class says so with ``_defers_tir_ops``."""
    return getattr(type(other), "_defers_tir_ops", False)


class ExprOp:
    """Mixin giving TIR expressions Python arithmetic and comparison operators."""

    __slots__ = ()
    __array_ufunc__ = None  # numpy scalars defer to our reflected operators instead of building object arrays

    def __add__(self, other):
        if _defers(other):
            return NotImplemented
        return _op().add(self, other)

    def __radd__(self, other):
        if _defers(other):
            return NotImplemented
        return _op().add(other, self)

    def __sub__(self, other):
        if _defers(other):
            return NotImplemented
        return _op().subtract(self, other)

    def __rsub__(self, other):
        if _defers(other):
            return NotImplemented
        return _op().subtract(other, self)

    def __mul__(self, other):
        if _defers(other):
            return NotImplemented
        return _op().multiply(self, other)

    def __rmul__(self, other):
        if _defers(other):
            return NotImplemented
        return _op().multiply(other, self)

    def __truediv__(self, other):
        if _defers(other):
            return NotImplemented
        _check_not_int_div(self, other)
        return _op().div(self, other)

    def __rtruediv__(self, other):
        if _defers(other):
            return NotImplemented
        _check_not_int_div(other, self)
        return _op().div(other, self)

    def __floordiv__(self, other):
        return _op().floordiv(self, other)

    def __rfloordiv__(self, other):
        return _op().floordiv(other, self)

    def __mod__(self, other):
        return _op().floormod(self, other)

    def __rmod__(self, other):
        return _op().floormod(other, self)

    def __neg__(self):
        expr = convert(self)
        return _op().multiply(expr, _op().const(-1, expr.dtype))

    def __lt__(self, other):
        return _op().less(self, other)

    def __le__(self, other):
        return _op().less_equal(self, other)

    def __gt__(self, other):
        return _op().greater(self, other)

    def __ge__(self, other):
        return _op().greater_equal(self, other)

    def __eq__(self, other):
        return EqualOp(self, other)

    def __ne__(self, other):
        return NotEqualOp(self, other)

    __hash__ = object.__hash__

    def __and__(self, other):
        return _op().logical_and(self, other) if _is_bool(self) else _op().bitwise_and(self, other)

    def __rand__(self, other):
        return _op().logical_and(other, self) if _is_bool(self) else _op().bitwise_and(other, self)

    def __or__(self, other):
        return _op().logical_or(self, other) if _is_bool(self) else _op().bitwise_or(self, other)

    def __ror__(self, other):
        return _op().logical_or(other, self) if _is_bool(self) else _op().bitwise_or(other, self)

    def __xor__(self, other):
        return _op().bitwise_xor(self, other)

    def __invert__(self):
        return _op().logical_not(self) if _is_bool(self) else _op().bitwise_not(self)

    def __lshift__(self, other):
        return _op().shift_left(self, other)

    def __rshift__(self, other):
        return _op().shift_right(self, other)

    def __rxor__(self, other):
        return _op().bitwise_xor(other, self)

    def __rlshift__(self, other):
        return _op().shift_left(other, self)

    def __rrshift__(self, other):
        return _op().shift_right(other, self)

    def __bool__(self):
        raise ExprTruthValueError(
            "cannot use and / or / not or if on a TIR expression: its value is not known until run time; "
            "use tir.all / tir.any / tir.Not, or tir.Select / tir.if_then_else"
        )

    def equal(self, other):
        """Build ``EQ(self, other)`` (``==`` gives an EqualOp, which becomes EQ where an expression is expected)."""
        return _op().equal(self, other)

    def astype(self, dtype):
        """Cast to ``dtype`` (no node when the dtype already matches)."""
        return _op().cast(self, dtype)


_LAZY: dict = {}  # "op" -> kiln.tir.op, "expr" -> kiln.tir.expr, imported once on first use


def _op():
    module = _LAZY.get("op")
    if module is None:  # the builders import the node classes, which import this module
        from . import op as module

        _LAZY["op"] = module
    return module


def _expr():
    module = _LAZY.get("expr")
    if module is None:  # the node classes import this module
        from . import expr as module

        _LAZY["expr"] = module
    return module


def _is_bool(value) -> bool:
    return str(getattr(convert(value), "dtype", "")).startswith("bool")


def _check_not_int_div(a, b):
    def is_int(v):
        if isinstance(v, ExprOp | EqualOp | NotEqualOp):
            dtype = convert(v).dtype
            return dtype.startswith(("int", "uint"))
        return isinstance(v, Integral)

    if is_int(a) and is_int(b):
        raise TIRError(
            "integer '/' is ambiguous (C truncates, Python floors): call tir.truncdiv, tir.floordiv (or //), "
            "tir.indexdiv or tir.div directly"
        )


class EqualOp:
    """The result of ``a == b`` on expressions: truthy iff ``a is b``; ``asobject()`` is the ``EQ`` node."""

    __slots__ = ("a", "b")
    __array_ufunc__ = None

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __bool__(self):
        return self.a is self.b

    def asobject(self):
        """The expression ``EQ(a, b)``."""
        return _op().equal(self.a, self.b)

    def __and__(self, other):
        return _op().logical_and(self.asobject(), other)

    def __or__(self, other):
        return _op().logical_or(self.asobject(), other)

    def __invert__(self):
        return _op().logical_not(self.asobject())

    def __repr__(self):
        return repr(self.asobject())


class NotEqualOp(EqualOp):
    """The result of ``a != b`` on expressions: truthy iff ``a is not b``; ``asobject()`` is the ``NE`` node."""

    __slots__ = ()

    def __bool__(self):
        return self.a is not self.b

    def asobject(self):
        """The expression ``NE(a, b)``."""
        return _op().not_equal(self.a, self.b)


def convert(value, dtype=None):
    """Turn a Python or numpy scalar, string, EqualOp or IterVar into a TIR expression; expressions pass through.

    Parameters
    ----------
    value : PrimExpr, bool, int, float, str, numpy scalar, EqualOp, IterVar
        The value.
    dtype : str, optional
        The dtype a Python number takes (default: int32 for ints, or int64 when too large; float32 for floats).

    Examples
    --------
    >>> convert(3).dtype
    'int32'
    >>> convert(3, "float32").value
    3.0
    """
    expr = _expr()  # a function-level import would cost more than the rest of this call (it is a hot path)
    if isinstance(value, expr.PrimExpr):
        return value
    FloatImm, IntImm, IterVar, StringImm = expr.FloatImm, expr.IntImm, expr.IterVar, expr.StringImm  # noqa: N806
    if isinstance(value, EqualOp):
        return value.asobject()
    if isinstance(value, IterVar):
        return value.var
    if isinstance(value, bool | np.bool_):
        return IntImm("bool", int(bool(value))) if dtype is None else _op().const(value, dtype)
    if isinstance(value, np.generic):
        return _op().const(value.item(), dtype or value.dtype.name)
    if dtype is not None and isinstance(value, Real):
        return _op().const(value, dtype)
    if isinstance(value, Integral):
        value = int(value)
        return IntImm("int32" if -(2**31) <= value < 2**31 else "int64", value)
    if isinstance(value, Real):
        return FloatImm("float32", float(value))
    if isinstance(value, str):
        return StringImm(value)
    raise TIRError(f"cannot convert a {type(value).__name__} ({value!r}) to a TIR expression")
