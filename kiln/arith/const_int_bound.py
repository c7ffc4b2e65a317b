"""Constant integer bounds of expressions (TVM's ``arith.ConstIntBound``): ``[min_value, max_value]`` of every value
an integer expression can take, given bounds of its variables.

Interval arithmetic over the expression, bottom-up: ``a + b`` adds bounds, ``a * b`` takes the extreme corner products,
``floordiv``/``floormod`` by a positive constant use floor semantics, ``min``/``max``/``select`` combine branches, and a
cast keeps the bound when the target type can hold it. Unknown values get their dtype's range; infinities are
``ConstIntBound.POS_INF``/``NEG_INF`` (INT64 max and its negation, as in TVM) and absorb arithmetic.
"""

from dataclasses import dataclass

from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir.dtype_semantics import overflow_is_undefined

POS_INF = (1 << 63) - 1
NEG_INF = -POS_INF


@dataclass(frozen=True, slots=True)
class ConstIntBound:
    """The bound ``[min_value, max_value]`` (inclusive) of an integer expression.

    Examples
    --------
    >>> ana = arith.Analyzer()                                 # doctest: +SKIP
    >>> ana.bind(x, tir.Range(0, 8))                           # doctest: +SKIP
    >>> ana.const_int_bound(x * 2 + 1)                         # doctest: +SKIP
    ConstIntBound(min_value=1, max_value=15)
    """

    min_value: int
    max_value: int

    POS_INF = POS_INF
    NEG_INF = NEG_INF

    def is_const(self) -> bool:
        return self.min_value == self.max_value

    def contains(self, value: int) -> bool:
        return self.min_value <= value <= self.max_value


def _clamp(v):
    return POS_INF if v >= POS_INF else max(NEG_INF, v)


def _add(a, b):
    if a in (POS_INF, NEG_INF):
        return a
    if b in (POS_INF, NEG_INF):
        return b
    return _clamp(a + b)


def _neg(a):
    return -a


def _mul(a, b):
    if a == 0 or b == 0:
        return 0
    if a in (POS_INF, NEG_INF) or b in (POS_INF, NEG_INF):
        return POS_INF if (a > 0) == (b > 0) else NEG_INF
    return _clamp(a * b)


def _floordiv(a, b):
    if a in (POS_INF, NEG_INF):
        return a if b > 0 else -a
    return a // b


def _truncdiv(a, b):
    if a in (POS_INF, NEG_INF):
        return a if b > 0 else -a
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def dtype_bound(dtype) -> ConstIntBound:
    """The bound of any value of ``dtype`` (everything for floats and handles)."""
    t = _dt.DataType.parse(dtype)
    if t.is_bool():
        return ConstIntBound(0, 1)
    if t.is_integer():
        return ConstIntBound(max(t.min_value(), NEG_INF), min(t.max_value(), POS_INF))
    return ConstIntBound(NEG_INF, POS_INF)


def _corners(op, a, b):
    values = [op(x, y) for x in (a.min_value, a.max_value) for y in (b.min_value, b.max_value)]
    return ConstIntBound(min(values), max(values))


class ConstIntBoundAnalyzer:
    """Computes :class:`ConstIntBound` of expressions; variable bounds are set with :meth:`update`."""

    def __init__(self):
        self.var_bounds: dict = {}  # id(var), or ("expr", key) of another expression -> (it, ConstIntBound)
        self.expr_facts = 0  # how many bounds of non-variable expressions are known (from constraints)

    @staticmethod
    def _key(var):
        if isinstance(var, E.Var):
            return id(var)
        from .iter_map_fuse import ekey

        return ("expr", ekey(var))

    def update(self, var, bound, override=False):
        """Set the bound of ``var`` (a variable, or any expression a constraint bounds, such as ``a % 58``),
        intersected with a previous one unless ``override``."""
        key = self._key(var)
        old = self.var_bounds.get(key)
        if old is not None and not override:
            bound = ConstIntBound(max(old[1].min_value, bound.min_value), min(old[1].max_value, bound.max_value))
        if old is None and not isinstance(var, E.Var):
            self.expr_facts += 1
        self.var_bounds[key] = (var, bound)

    def get(self, var):
        entry = self.var_bounds.get(self._key(var))
        return None if entry is None else entry[1]

    def restore(self, var, saved):
        key = self._key(var)
        if saved is None:
            if self.var_bounds.pop(key, None) is not None and not isinstance(var, E.Var):
                self.expr_facts -= 1
        else:
            self.var_bounds[key] = (var, saved)

    def __call__(self, expr) -> ConstIntBound:
        """The bound of ``expr``."""
        return self._bound(E.convert(expr), {})

    def _bound(self, e, memo):
        key = id(e)
        hit = memo.get(key)
        if hit is not None:
            return hit[1]
        result = self._compute(e, memo)
        if self.expr_facts and not isinstance(e, E.Var | E.IntImm):
            known = self.get(e)  # a constraint on this very expression (1 <= a % 58 < 57)
            if known is not None:
                result = ConstIntBound(max(result.min_value, known.min_value), min(result.max_value, known.max_value))
        base = dtype_bound(e.dtype) if _dt.DataType.parse(e.dtype).element_of().is_integer() else None
        if base is not None and (result.min_value < base.min_value or result.max_value > base.max_value):
            # never wider than the type; where the type wraps (uint8, int16...), a bound beyond it means anything.
            # An infinite end stays infinite (TVM's "unbounded", as a bound given with NEG_INF or a SizeVar's)
            if overflow_is_undefined(e.dtype):
                lo = result.min_value if result.min_value == NEG_INF else max(result.min_value, base.min_value)
                hi = result.max_value if result.max_value == POS_INF else min(result.max_value, base.max_value)
                result = ConstIntBound(lo, hi)
            else:
                result = base
        memo[key] = (e, result)
        return result

    def _compute(self, e, memo):
        kind = type(e)
        t = _dt.DataType.parse(e.dtype)
        if t.element_of().is_float() or t.is_handle():
            return ConstIntBound(NEG_INF, POS_INF)
        if kind is E.IntImm:
            return ConstIntBound(e.value, e.value)
        if isinstance(e, E.Var):
            known = self.get(e)
            if known is not None:
                return known
            if isinstance(e, E.SizeVar):
                return ConstIntBound(0, POS_INF)  # a size: non-negative, otherwise unknown (TVM's)
            return dtype_bound(e.dtype)
        sub = lambda x: self._bound(x, memo)
        if kind is E.Add:
            a, b = sub(e.a), sub(e.b)
            return ConstIntBound(_add(a.min_value, b.min_value), _add(a.max_value, b.max_value))
        if kind is E.Sub:
            a, b = sub(e.a), sub(e.b)
            return ConstIntBound(_add(a.min_value, _neg(b.max_value)), _add(a.max_value, _neg(b.min_value)))
        if kind is E.Mul:
            return _corners(_mul, sub(e.a), sub(e.b))
        if kind in (E.FloorDiv, E.Div):
            return _division(sub(e.a), _nonzero(sub(e.b)), _floordiv if kind is E.FloorDiv else _truncdiv, e.dtype)
        if kind is E.FloorMod:
            return self._floormod(sub(e.a), _nonzero(sub(e.b)), e.dtype)
        if kind is E.Mod:
            return self._truncmod(sub(e.a), _nonzero(sub(e.b)), e.dtype)
        if kind is E.Min:
            a, b = sub(e.a), sub(e.b)
            return ConstIntBound(min(a.min_value, b.min_value), min(a.max_value, b.max_value))
        if kind is E.Max:
            a, b = sub(e.a), sub(e.b)
            return ConstIntBound(max(a.min_value, b.min_value), max(a.max_value, b.max_value))
        if kind is E.Select:
            a, b = sub(e.true_value), sub(e.false_value)
            return ConstIntBound(min(a.min_value, b.min_value), max(a.max_value, b.max_value))
        if kind is E.Cast:
            return self._cast(e, sub)
        if kind is E.Broadcast:
            return sub(e.value)
        if kind is E.Ramp:
            base, stride = sub(e.base), sub(e.stride)
            last = ConstIntBound(_add(base.min_value, _mul(stride.min_value, e.lanes - 1)),
                                 _add(base.max_value, _mul(stride.max_value, e.lanes - 1)))
            return ConstIntBound(min(base.min_value, last.min_value), max(base.max_value, last.max_value))
        if kind is E.Let:
            saved = self.get(e.var)
            self.update(e.var, sub(e.value), override=True)
            try:
                return self._bound(e.body, {})
            finally:
                self.restore(e.var, saved)
        if kind is E.Call and e.op.name == "tir.if_then_else":
            a, b = sub(e.args[1]), sub(e.args[2])
            return ConstIntBound(min(a.min_value, b.min_value), max(a.max_value, b.max_value))
        if kind is E.Call and e.op.name in ("tir.shift_right", "tir.bitwise_and"):
            return _bit_operation(e.op.name, sub(e.args[0]), sub(e.args[1]), e.dtype)
        return dtype_bound(e.dtype)

    @staticmethod
    def _floormod(a, b, dtype):
        if b.min_value > 0:
            if b.is_const():
                c = b.min_value
                if a.min_value not in (NEG_INF,) and a.max_value != POS_INF and a.min_value // c == a.max_value // c:
                    return ConstIntBound(a.min_value % c, a.max_value % c)
            if 0 <= a.min_value and a.max_value < b.min_value:
                return a
            hi = _add(b.max_value, -1)
            if a.min_value >= 0:
                return ConstIntBound(0, min(a.max_value, hi))
            return ConstIntBound(0, hi)
        if b.min_value > b.max_value:  # an empty range (a loop of extent 0 gives [0, -1])
            return dtype_bound(dtype)
        # floormod(a, b) = b * frac(a / b) lies between b + 1 and 0 for b < 0, and 0 and b - 1 for b > 0
        full = dtype_bound(dtype)
        return ConstIntBound(max(min(0, _add(b.min_value, 1)), full.min_value),
                             min(max(0, _add(b.max_value, -1)), full.max_value))

    @staticmethod
    def _truncmod(a, b, dtype):
        if b.min_value > 0 and 0 <= a.min_value and a.max_value < b.min_value:
            return a
        if b.min_value > 0 or b.max_value < 0:
            m = max(abs(b.min_value), abs(b.max_value)) - 1
            if a.min_value >= 0:
                return ConstIntBound(0, min(a.max_value, m))
            if a.max_value <= 0:
                return ConstIntBound(max(a.min_value, -m), 0)
            return ConstIntBound(max(a.min_value, -m), min(a.max_value, m))
        return dtype_bound(dtype)

    @staticmethod
    def _cast(e, sub):
        src = _dt.DataType.parse(e.value.dtype).element_of()
        target = dtype_bound(e.dtype)
        if src.is_float() or src.is_handle():
            inner = e.value
            # an integer that went through a float wide enough to hold it exactly (int32(float32(int8 x))) keeps
            # its bound
            if isinstance(inner, E.Cast) and src.is_float():
                inner_src = _dt.DataType.parse(inner.value.dtype).element_of()
                mantissa = {16: 11, 32: 24, 64: 53}.get(src.bits, 0)
                if inner_src.is_integer() and inner_src.bits <= mantissa:
                    a = sub(inner.value)
                    if target.min_value <= a.min_value and a.max_value <= target.max_value:
                        return a
            return target
        a = sub(e.value)
        dst = _dt.DataType.parse(e.dtype).element_of()
        # an infinite end (a uint64 beyond 2**63 - 1 too) fits only if the source type's whole range does
        unbounded = a.max_value >= POS_INF or a.min_value <= NEG_INF
        if unbounded and not (dst.min_value() <= src.min_value() and src.max_value() <= dst.max_value()):
            return target
        if target.min_value <= a.min_value and a.max_value <= target.max_value:
            return a
        return target


def _nonzero(divisor):
    """A divisor's bound without zero: a valid program never divides by zero, so a divisor known to be ``>= 0`` is
    ``>= 1`` (TVM assumes this too; symbolic shapes are known non-negative where they are meant to be positive)."""
    if divisor.min_value == 0 and divisor.max_value >= 1:
        return ConstIntBound(1, divisor.max_value)
    return divisor


def _division(a, b, divide, dtype):
    """The bound of ``a / b`` (``divide`` rounds): extreme quotients come from the ends of ``b``'s range, so a range
    that crosses zero is split into its negative and positive parts (a part that is empty stands for the whole
    type, as in TVM, whose quotients are near zero)."""
    if b.min_value > b.max_value:  # an empty range (a loop of extent 0 gives [0, -1]) has no sign to divide by
        return dtype_bound(dtype)
    if b.min_value > 0 or b.max_value < 0:
        return _corners(divide, a, b)
    full = dtype_bound(dtype)
    if not _dt.DataType.parse(dtype).element_of().is_int():
        return full
    neg = ConstIntBound(b.min_value, -1) if b.min_value < 0 else full
    pos = ConstIntBound(1, b.max_value) if b.max_value > 0 else full
    if neg.min_value > neg.max_value or pos.min_value > pos.max_value or 0 in (full.min_value, full.max_value):
        return full
    x, y = _corners(divide, a, neg), _corners(divide, a, pos)
    return ConstIntBound(min(x.min_value, y.min_value), max(x.max_value, y.max_value))


def _bit_operation(name, a, b, dtype):
    """``a >> b`` for a shift known non-negative (its extremes are at the corners); ``a & b`` lies in ``[0, m]``
    for the maximum ``m`` of an operand known non-negative."""
    if name == "tir.shift_right":
        if b.min_value >= 0 and _finite(a) and b.max_value < 64:
            return _corners(lambda x, y: x >> y, a, b)
        return dtype_bound(dtype)
    if a.min_value >= 0 and b.min_value >= 0:
        return ConstIntBound(0, min(a.max_value, b.max_value))
    if a.min_value >= 0 or b.min_value >= 0:
        return ConstIntBound(0, a.max_value if a.min_value >= 0 else b.max_value)
    return dtype_bound(dtype)


def _finite(b):
    return b.min_value != NEG_INF and b.max_value != POS_INF
