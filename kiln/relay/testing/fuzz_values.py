"""Values of the mixed-dtype fuzzer (:mod:`kiln.relay.testing.fuzz`): a Relay expression with what is known about
every element of it, and the guards that keep a random graph inside the semantics kiln defines.

kiln leaves some results undefined (:mod:`kiln.tir.dtype_semantics`): int32/int64 overflow, division by zero, a float
outside an integer type converted to it, shifts by the type's width, and NaN reaching ``min``/``max``/``clip``/sorts.
A graph computing any of them could differ from the reference without a bug, so each :class:`Value` carries

* ``lo``/``hi``: bounds of its elements (``inf`` for a float that may overflow);
* ``nan``: whether it may hold NaN;
* ``exact`` and ``grid``: whether a float was computed without rounding, its elements multiples of ``2**-grid``
  (inputs are quarters; sums and products of them stay exact while they fit the significand). Only exact floats
  reach operations whose result jumps (``floor``, comparisons, casts to integers, ``argmax``, sorts), so a last-bit
  difference of a transcendental function can never flip a branch; inexact floats are compared with a tolerance.

The graph generator consults these facts before each operation and inserts guards (``clip``, ``where(isnan(x),
0, x)``, a divisor kept off 0 and -1) where needed, as a careful programmer would.
"""

import math
from dataclasses import dataclass, replace

import numpy as np

from .. import op as _op
from ..expr import const

MANTISSA = {"float16": 11, "float32": 24, "float64": 53}
SMALLEST_EXPONENT = {"float16": 24, "float32": 149, "float64": 1074}  # the subnormal spacing is 2**-this


def kind(dtype) -> str:
    """numpy's kind letter: ``b`` bool, ``i`` signed, ``u`` unsigned, ``f`` float."""
    return np.dtype(dtype).kind


def dtype_range(dtype):
    """``(lowest, highest)`` finite value of ``dtype`` as Python numbers."""
    k = kind(dtype)
    if k == "b":
        return 0, 1
    if k == "f":
        top = float(np.finfo(dtype).max)
        return -top, top
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def overflow_undefined(dtype) -> bool:
    """int32 and int64: their overflow is undefined; every other integer type wraps."""
    return dtype in ("int32", "int64")


@dataclass(frozen=True)
class Value:
    """An expression of the graph with its shape, dtype and the facts above."""

    expr: object
    shape: tuple
    dtype: str
    lo: float
    hi: float
    nan: bool = False
    exact: bool = True
    grid: int = 0

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def magnitude(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    def with_expr(self, expr, **facts) -> "Value":
        return replace(self, expr=expr, **facts)


def representable(dtype, lo, hi, grid) -> bool:
    """Whether every multiple of ``2**-grid`` in ``[lo, hi]`` is a finite ``dtype`` float (so computing it exactly
    and rounding it agree)."""
    top = max(abs(lo), abs(hi))
    if not math.isfinite(top) or top > dtype_range(dtype)[1] or grid > SMALLEST_EXPONENT[dtype]:
        return False
    return top * 2.0**grid < 2.0 ** MANTISSA[dtype]


def result(dtype, shape, expr, lo, hi, nan=False, exact=True, grid=0, rounded=False) -> Value:
    """A Value of an operation's result: an integer interval past a wrapping type's range becomes the whole range,
    a float one past the finite range reaches infinity, and a float is exact only while representable.

    ``rounded``: the result of one correctly rounded operation (``+ - * /``, a conversion). For float16 its bits are
    then still determined, since float16 rounds after every operation and never contracts (kiln, numpy and the
    hardware agree bit for bit); float32 and float64 ``a * b + c`` may become an FMA, so there only exact values
    are."""
    k = kind(dtype)
    if k == "b":
        return Value(expr, tuple(shape), dtype, 0, 1)
    low, high = dtype_range(dtype)
    if k in "iu":
        if lo < low or hi > high:
            lo, hi = low, high
        return Value(expr, tuple(shape), dtype, int(math.floor(lo)), int(math.ceil(hi)))
    if lo < low:
        lo = -math.inf
    if hi > high:
        hi = math.inf
    if rounded and dtype == "float16" and not representable(dtype, lo, hi, grid):
        grid = SMALLEST_EXPONENT[dtype]  # every float16 is a multiple of its smallest subnormal
    else:
        exact = exact and representable(dtype, lo, hi, grid)
    return Value(expr, tuple(shape), dtype, lo, hi, nan, exact, grid if exact else 0)


def without_nan(v: Value) -> Value:
    """``v`` with NaN replaced by 0 (a no-op unless ``v`` may hold NaN)."""
    if not v.nan:
        return v
    zero = const(np.zeros((), v.dtype), v.dtype)
    expr = _op.where(_op.isnan(v.expr), zero, v.expr)
    return result(v.dtype, v.shape, expr, min(v.lo, 0), max(v.hi, 0), False, v.exact, v.grid)


def clipped(v: Value, lo, hi) -> Value:
    """``v`` clamped into ``[lo, hi]`` (NaN removed first); bounds are integers, so a float keeps its grid."""
    v = without_nan(v)
    if v.hi < lo or v.lo > hi:  # every value on one side of [lo, hi]: all become its nearer end
        lo = hi = lo if v.hi < lo else hi
    else:
        lo, hi = max(lo, v.lo), min(hi, v.hi)
    if v.lo >= lo and v.hi <= hi:
        return v
    if kind(v.dtype) in "iu":
        lo, hi = int(math.ceil(lo)), int(math.floor(hi))
    return result(v.dtype, v.shape, _op.clip(v.expr, float(lo), float(hi)), lo, hi, False, v.exact, v.grid)


def _inward(bound, dtype):
    """The value of float type ``dtype`` nearest ``bound`` towards zero: a clip bound the clip can hold (int16's
    32767 is 32768 in float16, and casting 32768 to int16 is undefined)."""
    rounded = np.asarray(bound, dtype)
    if abs(float(rounded)) > abs(bound):
        rounded = np.nextafter(rounded, np.asarray(0, dtype))
    return int(rounded)


def converted(v: Value, dtype):
    """``v`` cast to ``dtype`` with what makes the cast defined (a float clamped into an integer type), or None
    when the cast would branch on an inexact float (``float -> bool/int`` of a rounded value)."""
    if v.dtype == dtype:
        return v
    src, dst = kind(v.dtype), kind(dtype)
    if src == "f" and dst in "biu":
        if not v.exact:
            return None
        if dst != "b":  # inside the integer type, and finite in the float one (a float16 cannot hold 2**62)
            low, high = dtype_range(dtype)
            top = min(2.0**62, dtype_range(v.dtype)[1])
            v = clipped(v, _inward(max(low, -top), v.dtype), _inward(min(high, top), v.dtype))
    if src in "iu" and dst == "f":
        top = dtype_range(dtype)[1]
        if v.magnitude > top:
            v = clipped(v, -top, top)
    expr = _op.cast(v.expr, dtype)
    if dst == "b":
        return result(dtype, v.shape, expr, 0, 1)
    if dst == "f":
        return result(dtype, v.shape, expr, v.lo, v.hi, v.nan, v.exact, v.grid, rounded=True)
    lo, hi = (0, 1) if src == "b" else (math.trunc(v.lo), math.trunc(v.hi))
    return result(dtype, v.shape, expr, lo, hi)


def random_values(rng, shape, dtype, lo, hi, grid) -> np.ndarray:
    """Random elements of ``dtype`` in ``[lo, hi]``: multiples of ``2**-grid`` for floats, bools half true."""
    k = kind(dtype)
    if k == "b":
        return rng.random(shape) < 0.5
    if k == "f":
        scale = 2**grid
        return (rng.integers(int(lo * scale), int(hi * scale), shape, endpoint=True) / scale).astype(dtype)
    return rng.integers(int(lo), int(hi), shape, endpoint=True, dtype=np.dtype(dtype))
