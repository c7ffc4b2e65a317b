"""Expression builders with TVM's type matching and constant folding (``tvm.tir.op`` / TVM's C++ ``tvm::add`` ...).

Each builder converts its operands (a Python number takes the other operand's dtype when it fits: an int with any
numeric expression, a float with a float expression), matches dtypes (:func:`kiln.tir.dtype.binary_result`: a cast on
the narrower side, a ``Broadcast`` of a scalar meeting a vector), then folds what TVM's ``TryConstFold`` folds: two
constants, adding 0, multiplying by 1 (and an integer by 0), dividing by 1. Anything else becomes a node. The node
constructors in :mod:`kiln.tir.expr` build exactly what they are given instead.
"""

import builtins
import math
from numbers import Integral, Real

import numpy as np

from ..error import TIRError
from ..runtime.packed_func import register_func
from . import dtype as _dt
from .dtype_semantics import BOOL_ARITHMETIC, wrap_int
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Broadcast,
    Cast,
    Div,
    EqualOp,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    IterVar,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Select,
    Sub,
    convert,
)

__all__ = [
    "abs", "add", "all", "any", "cast", "const", "const_value", "div", "equal", "floordiv", "floormod", "greater",
    "greater_equal", "indexdiv", "indexmod", "infinity", "is_const_int", "less", "less_equal", "logical_and",
    "logical_not", "logical_or", "max_value", "min_value", "multiply", "not_equal", "subtract", "truncdiv", "truncmod",
]


def const(value, dtype=None, span=None) -> PrimExpr:
    """A constant of ``dtype`` (default int32 for ints, float32 for floats, bool for bools, a numpy scalar's own
    dtype); a vector dtype gives a ``Broadcast``.

    Examples
    --------
    >>> const(1, "float32")
    T.float32(1.0)
    """
    if dtype is None:
        if isinstance(value, bool | np.bool_):
            dtype = "bool"
        elif isinstance(value, np.generic):  # a numpy scalar keeps its dtype (np.uint8(3) is uint8, as in TVM)
            dtype = value.dtype.name
        elif isinstance(value, Integral):
            dtype = "int32" if -(2**31) <= int(value) < 2**31 else "int64"
        else:  # float32 unless the value is finite and beyond its range (TVM)
            big = math.isfinite(float(value)) and builtins.abs(float(value)) > float(np.finfo(np.float32).max)
            dtype = "float64" if big else "float32"
    t = _dt.DataType.parse(dtype)
    if t.lanes != 1:
        return Broadcast(const(value, str(t.element_of())), t.lanes)
    if t.is_float():
        return FloatImm(str(t), float(value), span=span)
    if t.is_bool():
        return IntImm("bool", int(bool(value)), span=span)
    if t.is_integer():
        if isinstance(value, float) and not float(value).is_integer():
            raise TIRError(f"tir.const: {value} is not an integer value for dtype {dtype}")
        return IntImm(str(t), int(value), span=span)
    raise TIRError(f"tir.const: cannot make a constant of dtype {dtype}")


register_func("tir.const", const)  # kiln.runtime.convert makes its numbers with it


def const_value(expr):
    """The Python value of a scalar IntImm/FloatImm (or a Broadcast of one), else None."""
    if isinstance(expr, Broadcast):
        expr = expr.value
    if isinstance(expr, IntImm | FloatImm):
        return expr.value
    return None


def is_const_int(expr, value=None) -> bool:
    """Whether ``expr`` is an integer constant (equal to ``value`` when given)."""
    if isinstance(expr, Broadcast):
        expr = expr.value
    return isinstance(expr, IntImm) and (value is None or expr.value == value)


def _make_const(value, dtype):
    if _dt.is_float(dtype):
        value = float(np.array(value, dtype=_dt.DataType.parse(dtype).element_of().numpy()))
    else:
        value = wrap_int(int(value), dtype)
    return const(value, dtype)


def cast(value, dtype, span=None) -> PrimExpr:
    """Convert ``value`` to ``dtype`` (a scalar dtype is widened to the value's lanes); constants fold."""
    value = convert(value)
    dtype = _dt.normalize(dtype)
    n = _dt.lanes(value.dtype)
    if _dt.lanes(dtype) == 1 and n != 1:
        dtype = _dt.with_lanes(dtype, n)
    if value.dtype == dtype:
        return value
    if value.dtype == "handle":
        raise TIRError(f"tir.cast: Can't cast a handle to other types ({value} to {dtype})")
    if isinstance(value, Broadcast):
        return Broadcast(cast(value.value, _dt.element(dtype)), value.lanes)
    if isinstance(value, IntImm | FloatImm) and _dt.lanes(dtype) == 1:
        v = value.value
        t = _dt.DataType.parse(dtype)
        if t.is_bool():
            return const(bool(v), "bool")
        if t.is_integer():
            if isinstance(v, float) and not math.isfinite(v):
                return Cast(dtype, value, span=span)
            return const(wrap_int(int(v), dtype), dtype)
        if t.is_float():
            return _make_const(float(v), dtype)
    if _dt.lanes(value.dtype) == 1 and _dt.lanes(dtype) != 1:
        return Broadcast(cast(value, _dt.element(dtype)), _dt.lanes(dtype))
    return Cast(dtype, value, span=span)


def _operand_pair(a, b):
    """Convert and type-match two operands (TVM's BinaryOpMatchTypes, with Python numbers adapting)."""
    a_expr = isinstance(a, PrimExpr | EqualOp | IterVar)
    b_expr = isinstance(b, PrimExpr | EqualOp | IterVar)
    if a_expr and not b_expr:
        a = convert(a)
        b = _adapt(b, a.dtype)
    elif b_expr and not a_expr:
        b = convert(b)
        a = _adapt(a, b.dtype)
    else:
        a, b = convert(a), convert(b)
    target = _dt.binary_result(a.dtype, b.dtype)
    return cast(a, target), cast(b, target)


def _adapt(number, dtype):
    """A Python number as a constant of ``dtype``'s element type when its kind fits, else its natural dtype."""
    elem = _dt.DataType.parse(dtype).element_of()
    if isinstance(number, bool | np.bool_):
        return const(bool(number), str(elem)) if elem.is_bool() else const(int(number), "int32")
    if isinstance(number, Integral) and (elem.is_integer() or elem.is_float()):
        return const(int(number), str(elem)) if elem.is_float() or _fits(int(number), elem) else convert(number)
    if isinstance(number, Real) and not isinstance(number, Integral) and elem.is_float():
        return const(float(number), str(elem))
    return convert(number)


def _fits(value: int, t) -> bool:
    return t.min_value() <= value <= t.max_value()


def _both_const(a, b):
    ca, cb = const_value(a), const_value(b)
    if ca is None or cb is None or isinstance(a, Broadcast) != isinstance(b, Broadcast):
        return None
    if _dt.is_float(a.dtype):
        # the operands as the dtype holds them: float32 arithmetic on them, rounded once, is what folding must give
        # (float64 arithmetic of two float32 values rounds correctly to float32)
        element = _dt.DataType.parse(a.dtype).element_of().numpy()
        ca, cb = float(np.array(ca, dtype=element)), float(np.array(cb, dtype=element))
    return ca, cb


def _result(value, like):
    """A folded constant with the dtype (and lanes) of ``like``."""
    return _make_const(value, like.dtype)


def _bool_arithmetic(name, a, b, span):
    """``name`` on bool operands: the logical operation :data:`BOOL_ARITHMETIC` gives it (1-bit values saturate, so
    ``sum`` over bool is ``any``), or None for other dtypes."""
    if not _dt.DataType.parse(a.dtype).is_bool():
        return None
    return (logical_or if BOOL_ARITHMETIC[name] == "or" else logical_and)(a, b, span=span)


def add(a, b, span=None) -> PrimExpr:
    """``a + b`` with type matching and constant folding."""
    a, b = _operand_pair(a, b)
    if (logical := _bool_arithmetic("add", a, b, span)) is not None:
        return logical
    if (c := _both_const(a, b)) is not None:
        return _result(c[0] + c[1], a)
    if is_const_int(a, 0):
        return b
    if is_const_int(b, 0):
        return a
    return Add(a, b, span=span)


def subtract(a, b, span=None) -> PrimExpr:
    """``a - b``."""
    a, b = _operand_pair(a, b)
    if (c := _both_const(a, b)) is not None:
        return _result(c[0] - c[1], a)
    if is_const_int(b, 0):
        return a
    return Sub(a, b, span=span)


def multiply(a, b, span=None) -> PrimExpr:
    """``a * b``."""
    a, b = _operand_pair(a, b)
    if (logical := _bool_arithmetic("multiply", a, b, span)) is not None:
        return logical
    if (c := _both_const(a, b)) is not None:
        return _result(c[0] * c[1], a)
    for x, y in ((a, b), (b, a)):
        v = const_value(x)
        if v == 1:
            return y
        if v == 0 and _dt.is_integer(x.dtype):
            return x
    return Mul(a, b, span=span)


def _check_divisor(b, what):
    # a constant zero divisor is refused for floats too, as TVM's folding does (it would fold to inf or nan)
    if const_value(b) == 0 and _dt.lanes(b.dtype) == 1 and not _dt.is_bool(b.dtype):
        raise TIRError(f"{what}: division by zero")


def div(a, b, span=None) -> PrimExpr:
    """``a / b``: true division of floats, truncating division of integers (C semantics)."""
    a, b = _operand_pair(a, b)
    _check_divisor(b, "tir.div")
    if (c := _both_const(a, b)) is not None and c[1] != 0:
        if _dt.is_float(a.dtype):
            return _result(c[0] / c[1], a)
        return _result(_truncdiv(c[0], c[1]), a)
    if const_value(b) == 1 or is_const_int(a, 0):
        return a
    return Div(a, b, span=span)


def _truncdiv(x: int, y: int) -> int:
    q = builtins.abs(x) // builtins.abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def truncdiv(a, b, span=None) -> PrimExpr:
    """Integer division rounding toward zero (C's ``/``): the ``Div`` node on integers."""
    a, b = _operand_pair(a, b)
    if not _dt.is_integer(a.dtype):
        raise TIRError(f"tir.truncdiv: operands must be integers, got {a.dtype}")
    return div(a, b, span)


def truncmod(a, b, span=None) -> PrimExpr:
    """Remainder of :func:`truncdiv` (C's ``%``, the sign of ``a``): the ``Mod`` node."""
    a, b = _operand_pair(a, b)
    _check_divisor(b, "tir.truncmod")
    if (c := _both_const(a, b)) is not None and c[1] != 0:
        if _dt.is_float(a.dtype):
            return _result(math.fmod(c[0], c[1]), a)
        return _result(c[0] - _truncdiv(c[0], c[1]) * c[1], a)
    if is_const_int(b, 1):
        return _result(0, a)
    if is_const_int(a, 0):  # 0 divided by anything nonzero (TVM's TryConstFold)
        return a
    return Mod(a, b, span=span)


def floordiv(a, b, span=None) -> PrimExpr:
    """``floor(a / b)`` (Python's ``//``)."""
    a, b = _operand_pair(a, b)
    _check_divisor(b, "tir.floordiv")
    if (c := _both_const(a, b)) is not None and c[1] != 0:
        return _result(math.floor(c[0] / c[1]) if _dt.is_float(a.dtype) else c[0] // c[1], a)
    if const_value(b) == 1:
        return a
    if is_const_int(a, 0):  # 0 divided by anything nonzero (TVM's TryConstFold)
        return a
    return FloorDiv(a, b, span=span)


def floormod(a, b, span=None) -> PrimExpr:
    """``a - floor(a / b) * b`` (Python's ``%``)."""
    a, b = _operand_pair(a, b)
    _check_divisor(b, "tir.floormod")
    if (c := _both_const(a, b)) is not None and c[1] != 0:
        return _result(c[0] - math.floor(c[0] / c[1]) * c[1] if _dt.is_float(a.dtype) else c[0] % c[1], a)
    if is_const_int(b, 1):
        return _result(0, a)
    if is_const_int(a, 0):  # 0 divided by anything nonzero (TVM's TryConstFold)
        return a
    return FloorMod(a, b, span=span)


def indexdiv(a, b, span=None) -> PrimExpr:
    """Division of non-negative indices (kiln lowers it to ``floordiv``, as TVM does)."""
    return floordiv(a, b, span)


def indexmod(a, b, span=None) -> PrimExpr:
    """Remainder of non-negative indices (``floormod``)."""
    return floormod(a, b, span)


def minimum(a, b, span=None) -> PrimExpr:
    """``min(a, b)`` of two expressions."""
    a, b = _operand_pair(a, b)
    if (logical := _bool_arithmetic("minimum", a, b, span)) is not None:
        return logical
    if (c := _both_const(a, b)) is not None:
        return _result(builtins.min(c[0], c[1]), a)
    if a is b:
        return a
    return Min(a, b, span=span)


def maximum(a, b, span=None) -> PrimExpr:
    """``max(a, b)`` of two expressions."""
    a, b = _operand_pair(a, b)
    if (logical := _bool_arithmetic("maximum", a, b, span)) is not None:
        return logical
    if (c := _both_const(a, b)) is not None:
        return _result(builtins.max(c[0], c[1]), a)
    if a is b:
        return a
    return Max(a, b, span=span)


def _compare(node_cls, fold):
    def build(a, b, span=None):
        a, b = _operand_pair(a, b)
        if (c := _both_const(a, b)) is not None:
            return const(bool(fold(c[0], c[1])), _dt.with_lanes("bool", _dt.lanes(a.dtype)))
        return node_cls(a, b, span=span)

    build.__name__ = node_cls.__name__.lower()
    build.__doc__ = f"The comparison ``{node_cls.__name__}(a, b)``; constants fold to a bool constant."
    return build


less = _compare(LT, lambda x, y: x < y)
less_equal = _compare(LE, lambda x, y: x <= y)
greater = _compare(GT, lambda x, y: x > y)
greater_equal = _compare(GE, lambda x, y: x >= y)
equal = _compare(EQ, lambda x, y: x == y)
not_equal = _compare(NE, lambda x, y: x != y)


def _as_bool(value):
    value = convert(value)
    if not _dt.is_bool(value.dtype):
        value = not_equal(value, 0)
    return value


def logical_and(a, b, span=None) -> PrimExpr:
    """``a && b``; a constant operand folds."""
    a, b = _as_bool(a), _as_bool(b)
    for x, y in ((a, b), (b, a)):
        v = const_value(x)
        if v is not None and _dt.lanes(x.dtype) == _dt.lanes(y.dtype):
            return y if v else x
    a, b = _operand_pair(a, b)
    return And(a, b, span=span)


def logical_or(a, b, span=None) -> PrimExpr:
    """``a || b``; a constant operand folds."""
    a, b = _as_bool(a), _as_bool(b)
    for x, y in ((a, b), (b, a)):
        v = const_value(x)
        if v is not None and _dt.lanes(x.dtype) == _dt.lanes(y.dtype):
            return x if v else y
    a, b = _operand_pair(a, b)
    return Or(a, b, span=span)


def logical_not(a, span=None) -> PrimExpr:
    """``!a``; a constant folds."""
    a = _as_bool(a)
    v = const_value(a)
    if v is not None:
        return const(not v, a.dtype)
    return Not(a, span=span)


def _conditions(args, what):
    """The conditions of ``all``/``any``, each a bool expression (TVM refuses integers here). None at all is
    allowed, unlike TVM (which raises): kiln's builders join lists of guards that may be empty."""
    if len(args) == 1 and isinstance(args[0], list | tuple):
        args = args[0]
    conds = [convert(a) for a in args]
    for c in conds:
        if not _dt.is_bool(c.dtype):
            raise TIRError(f"tir.{what}: every argument must be a bool condition, got {c.dtype} ({c})")
    return conds


def all(*args, span=None) -> PrimExpr:
    """The conjunction of the conditions (``tir.all(i < n, j < m)``), folded where one is constant; true when
    there are none."""
    conds = _conditions(args, "all")
    result = conds[0] if conds else const(True)
    for c in conds[1:]:
        result = logical_and(result, c, span=span)
    return result


def any(*args, span=None) -> PrimExpr:
    """The disjunction of the conditions, folded where one is constant; false when there are none."""
    conds = _conditions(args, "any")
    result = conds[0] if conds else const(False)
    for c in conds[1:]:
        result = logical_or(result, c, span=span)
    return result


def select(cond, true_value, false_value) -> PrimExpr:
    """``Select`` with type matching; a constant condition folds."""
    t, f = _operand_pair(true_value, false_value)
    cond = _as_bool(cond)
    v = const_value(cond)
    if v is not None and _dt.lanes(cond.dtype) == 1:
        return t if v else f
    return Select(cond, t, f)


def max_value(dtype, span=None) -> PrimExpr:
    """The largest value of ``dtype`` as a constant."""
    return const(_dt.DataType.parse(dtype).max_value(), dtype)


def min_value(dtype, span=None) -> PrimExpr:
    """The smallest value of ``dtype`` as a constant."""
    return const(_dt.DataType.parse(dtype).min_value(), dtype)


def infinity(dtype, span=None) -> PrimExpr:
    """``+inf`` of a float dtype."""
    if not _dt.is_float(dtype):
        raise TIRError(f"tir.infinity: {dtype} is not a float dtype")
    return const(float("inf"), dtype)


def reinterpret(dtype, value, span=None) -> PrimExpr:
    """Reinterpret the bits of ``value`` as ``dtype`` (same width)."""
    from .intrin import call_intrin

    return call_intrin(dtype, "tir.reinterpret", value)


def abs(x, span=None) -> PrimExpr:
    """``|x|``: ``fabs`` of floats, a Select on integers."""
    x = convert(x)
    if _dt.is_float(x.dtype):
        from .intrin import call_intrin

        if (v := const_value(x)) is not None and not isinstance(x, Broadcast):
            return const(builtins.abs(v), x.dtype)
        return call_intrin(x.dtype, "tir.fabs", x)
    if _dt.DataType.parse(x.dtype).is_uint():
        return x
    return select(greater_equal(x, 0), x, multiply(x, -1))


def __getattr__(name):
    """TVM's ``tvm.tir.op`` also holds the intrinsics (``shift_right``, ``bitwise_and``, ``exp``...); kiln keeps
    them in :mod:`kiln.tir.intrin`, which imports this module, so they are looked up there on first use."""
    from . import intrin

    try:
        return getattr(intrin, name)
    except AttributeError:
        raise AttributeError(f"module 'kiln.tir.op' has no attribute {name!r}") from None
