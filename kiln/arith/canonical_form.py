"""The canonical forms of TVM's ``CanonicalSimplifier``: a sum of scaled split terms plus a constant.

A :class:`SplitExpr` stands for ``((index % upper_factor) / lower_factor) * scale`` with truncated or floored division
(``div_mode``); an unbounded ``upper_factor`` means no ``%``. A :class:`SumExpr` is ``sum(args) + base``. Terms with the
same index are kept next to each other, within a segment in descending order of ``lower_factor``, so that
``x / 6 * 6 + x % 6 / 3 * 3 + x % 3`` merges back into ``x`` when normalized (:meth:`SumExpr.normalize`).

These are values of the simplifier's walk (:mod:`kiln.arith.canonical_simplify`), never IR nodes: a form is turned
back into an expression (``normalize``) before it leaves the simplifier.
"""

from ..tir import op as _op
from ..tir.dtype import DataType
from .const_int_bound import POS_INF
from .linear import expr_key
from .pattern import make_const

TRUNC, FLOOR = 0, 1
"""Division modes (TVM's ``kTruncDiv``, ``kFloorDiv``)."""


def mod_impl(a, b, mode):
    return _op.truncmod(a, b) if mode == TRUNC else _op.floormod(a, b)


def div_impl(a, b, mode):
    return _op.truncdiv(a, b) if mode == TRUNC else _op.floordiv(a, b)


def _min_value(dtype):
    return -(1 << (DataType.parse(dtype).bits - 1))


class SplitExpr:
    """``((index % upper_factor) / lower_factor) * scale``."""

    __slots__ = ("div_mode", "dtype", "index", "lower_factor", "scale", "upper_factor")

    def __init__(self, index, lower_factor=1, upper_factor=POS_INF, scale=1, div_mode=TRUNC, dtype=None):
        self.index, self.lower_factor, self.upper_factor = index, lower_factor, upper_factor
        self.scale, self.div_mode = scale, div_mode
        self.dtype = dtype or index.dtype

    def copy(self):
        return SplitExpr(self.index, self.lower_factor, self.upper_factor, self.scale, self.div_mode, self.dtype)

    def normalize_with_scale(self, sscale):
        """The expression, multiplied by ``sscale``."""
        if self.scale == 0:
            return make_const(0, self.dtype)
        res = self.index
        if self.upper_factor != POS_INF:
            res = mod_impl(res, make_const(self.upper_factor, self.dtype), self.div_mode)
        if self.lower_factor != 1:
            res = div_impl(res, make_const(self.lower_factor, self.dtype), self.div_mode)
        sscale *= self.scale
        if sscale != 1:
            res = _op.multiply(res, make_const(sscale, self.dtype))
        return res

    def normalize(self):
        return self.normalize_with_scale(1)

    def index_equal(self, other) -> bool:
        return self.index is other.index or expr_key(self.index) == expr_key(other.index)

    def div_mode_compatible(self, mode) -> bool:
        return self.div_mode == mode or (self.lower_factor == 1 and self.upper_factor == POS_INF)

    def can_push_cast(self, dtype, analyzer) -> bool:
        """Whether ``cast(dtype, self)`` equals the split of ``cast(dtype, index)`` (no step overflows ``dtype``)."""
        if DataType.parse(dtype).bits >= DataType.parse(self.dtype).bits or self.scale == 0:
            return True
        res = self.index
        if not cast_is_safe(dtype, res, analyzer):
            return False
        if self.upper_factor != POS_INF:
            res = mod_impl(res, make_const(self.upper_factor, self.dtype), self.div_mode)
            if not cast_is_safe(dtype, res, analyzer):
                return False
        if self.lower_factor != 1:
            res = div_impl(res, make_const(self.lower_factor, self.dtype), self.div_mode)
            if not cast_is_safe(dtype, res, analyzer):
                return False
        if self.scale != 1:
            res = _op.multiply(res, make_const(self.scale, self.dtype))
            if not cast_is_safe(dtype, res, analyzer):
                return False
        return True

    def push_cast(self, dtype):
        self.index = _op.cast(self.index, dtype)
        self.dtype = dtype


def cast_is_safe(dtype, value, analyzer) -> bool:
    """Whether ``value`` fits ``dtype`` (an index type) by its bounds."""
    if dtype not in ("int32", "int64"):
        return False
    t = DataType.parse(dtype)
    if DataType.parse(value.dtype).bits <= t.bits:
        return True
    b = analyzer.const_int_bound(value)
    return b.max_value <= (1 << (t.bits - 1)) - 1 and b.min_value >= -(1 << (t.bits - 1))


class SumExpr:
    """``sum(args) + base``."""

    __slots__ = ("args", "base", "dtype")

    def __init__(self, dtype, args=None, base=0):
        self.dtype, self.args, self.base = dtype, args if args is not None else [], base

    def copy(self):
        return SumExpr(self.dtype, [a.copy() for a in self.args], self.base)

    def is_zero(self) -> bool:
        return self.base == 0 and not self.args

    def divisible_by(self, scale) -> bool:
        return self.base % scale == 0 and all(a.scale % scale == 0 for a in self.args)

    def mul_to_self(self, scale):
        self.base *= scale
        for a in self.args:
            a.scale *= scale

    def divide_by(self, scale):
        self.base = _exact(self.base, scale)
        for a in self.args:
            a.scale = _exact(a.scale, scale)

    def add_split(self, other, scale):
        """``self += other * scale``, kept in segment order."""
        if other.scale == 0:
            return
        other = other.copy()
        start = next((i for i, a in enumerate(self.args) if a.index_equal(other)), len(self.args))
        for j in range(start, len(self.args)):
            arg = self.args[j]
            if not arg.index_equal(other) or other.lower_factor > arg.lower_factor:
                other.scale *= scale
                self.args.insert(j, other)
                return
            if other.lower_factor == arg.lower_factor and other.upper_factor == arg.upper_factor and \
                    other.div_mode_compatible(arg.div_mode):
                arg.scale += other.scale * scale
                return
        other.scale *= scale
        self.args.append(other)

    def add_sum(self, other, scale):
        for a in other.args:
            self.add_split(a, scale)
        self.base += other.base * scale

    def can_push_cast(self, dtype, analyzer) -> bool:
        """Whether the cast can move into every term (no partial sum overflows ``dtype``)."""
        if DataType.parse(dtype).bits >= DataType.parse(self.dtype).bits:
            return True
        is_min = self.base == _min_value(dtype)
        res = make_const(0, dtype)
        steps = [a.normalize() for a in self.args if a.scale > 0]
        for term in steps:
            res = _op.add(res, term)
            if not cast_is_safe(dtype, res, analyzer):
                return False
        if self.base > 0 or is_min:
            res = _op.add(res, make_const(self.base, dtype))
            if not cast_is_safe(dtype, res, analyzer):
                return False
        for a in self.args:
            if a.scale < 0:
                res = _op.subtract(res, a.normalize_with_scale(-1))
                if not cast_is_safe(dtype, res, analyzer):
                    return False
        if self.base < 0 and not is_min:
            res = _op.subtract(res, make_const(-self.base, dtype))
            if not cast_is_safe(dtype, res, analyzer):
                return False
        return all(a.can_push_cast(dtype, analyzer) for a in self.args)

    def push_cast(self, dtype):
        for a in self.args:
            a.push_cast(dtype)
        self.dtype = dtype

    def normalize(self):
        """The expression: positive terms (larger scales first), the constant, then the negative terms."""
        if not self.args:
            return make_const(self.base, self.dtype)
        args = _merge_splits([a.copy() for a in self.args])
        is_min = self.base == _min_value(self.dtype)
        res = make_const(0, self.dtype)
        for a in args:
            if a.scale > 0:
                res = _op.add(res, a.normalize())
        if self.base > 0 or is_min:
            res = _op.add(res, make_const(self.base, self.dtype))
        for a in args:
            if a.scale < 0:
                res = _op.subtract(res, a.normalize_with_scale(-1))
        if self.base < 0 and not is_min:
            res = _op.subtract(res, make_const(-self.base, self.dtype))
        return res


def _exact(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _merge_splits(args):
    """Merge neighbouring splits of one index: equal factors add their scales, and ``x / (c*k) * k * s`` next to
    ``(x % c*k) / k ...`` joins into one split with the wider range."""
    for i in range(len(args)):
        if args[i].scale == 0:
            continue
        for j in range(i + 1, len(args)):
            lhs, rhs = args[i], args[j]
            if not lhs.index_equal(rhs) or lhs.upper_factor < rhs.lower_factor:
                break
            if lhs.upper_factor == rhs.upper_factor and lhs.lower_factor == rhs.lower_factor and \
                    lhs.div_mode_compatible(rhs.div_mode):
                rhs.scale += lhs.scale
                lhs.scale = 0
            elif lhs.lower_factor == rhs.upper_factor and rhs.scale != 0 and lhs.scale % rhs.scale == 0 and \
                    lhs.lower_factor == _exact(lhs.scale, rhs.scale) * rhs.lower_factor and \
                    lhs.div_mode_compatible(rhs.div_mode):
                rhs.upper_factor = lhs.upper_factor
                lhs.scale = 0
                break
    order = sorted(range(len(args)), key=lambda k: (-args[k].scale, -args[k].lower_factor, -args[k].upper_factor,
                                                    -args[k].div_mode, k))
    return [args[k] for k in order]
