"""Symbolic interval sets (TVM's ``arith.IntervalSet``): the range of values an index expression takes while some
variables sweep their domains. This is what bound inference needs (which part of a tensor a loop nest touches).

``eval_set(expr, dom_map)`` evaluates ``expr`` over intervals: each variable of ``dom_map`` stands for its interval,
any other variable for itself (a single point). ``+``/``-`` combine end points, a product by a constant scales (and
swaps ends when negative), ``floordiv`` by a positive constant is monotonic, ``floormod`` by ``c`` is ``[0, c-1]``
unless the whole interval stays in one block, ``min``/``max`` are monotonic. What cannot be bounded becomes the
unbounded set (ends are ``None``). End points are simplified with the analyzer.
"""

from ..tir import expr as E
from ..tir import op as _op
from ..tir.analysis import undefined_vars

_POS_INF = E.Var("pos_inf", "handle")
_NEG_INF = E.Var("neg_inf", "handle")


def pos_inf():
    """The symbol of an unbounded upper end (TVM's ``arith.int_set.pos_inf``)."""
    return _POS_INF


def neg_inf():
    """The symbol of an unbounded lower end (TVM's ``arith.int_set.neg_inf``)."""
    return _NEG_INF


class IntSet:
    """Base of integer sets; :class:`IntervalSet` is the one kind kiln uses."""

    @staticmethod
    def single_point(point) -> "IntervalSet":
        point = E.convert(point)
        return IntervalSet(point, point)

    @staticmethod
    def interval(min_value, max_value) -> "IntervalSet":
        return IntervalSet(E.convert(min_value), E.convert(max_value))

    @staticmethod
    def from_range(rng) -> "IntervalSet":
        """The interval ``[min, min + extent - 1]`` of a Range."""
        return IntervalSet(rng.min, _op.subtract(_op.add(rng.min, rng.extent), 1))

    @staticmethod
    def vector(vec) -> "IntervalSet":
        """The values of the lanes of a vector: a Ramp's first to last lane (either order by the stride's sign;
        unbounded on the growing side when the lane count is scalable), a Broadcast's value, else the one point."""
        vec = E.convert(vec)
        if isinstance(vec, E.Broadcast):
            return IntSet.single_point(vec.value)
        if not isinstance(vec, E.Ramp):
            return IntSet.single_point(vec)
        if not isinstance(vec.lanes, int):  # vscale() * k lanes: the last lane is known only at run time
            stride = vec.stride.value if isinstance(vec.stride, E.IntImm) else None
            if stride is None:
                return IntSet.everything()
            return IntervalSet(vec.base, None) if stride >= 0 else IntervalSet(None, vec.base)
        t = E.Var("lane", vec.base.dtype)
        return eval_set(_op.add(vec.base, _op.multiply(vec.stride, t)), {t: E.Range(0, vec.lanes)})

    @staticmethod
    def everything() -> "IntervalSet":
        return IntervalSet(None, None)


class IntervalSet(IntSet):
    """``[min_value, max_value]`` (inclusive, symbolic); an unbounded end is :func:`neg_inf` / :func:`pos_inf`.

    Examples
    --------
    >>> i = tir.Var("i", "int32")
    >>> s = eval_set(i * 4 + 1, {i: tir.Range(0, 8)})
    >>> (str(s.min_value), str(s.max_value))
    ('1', '29')
    """

    __slots__ = ("_max", "_min")

    def __init__(self, min_value, max_value):
        # numbers become constants (IntervalSet(2, 3) as in TVM); None (or neg_inf()/pos_inf()) is an unbounded end,
        # kept as None; pos_inf() as the lower end (neg_inf() as the upper) is TVM's empty set and kept as given
        self._min = None if min_value is None or min_value is _NEG_INF else \
            min_value if min_value is _POS_INF else E.convert(min_value)
        self._max = None if max_value is None or max_value is _POS_INF else \
            max_value if max_value is _NEG_INF else E.convert(max_value)

    @property
    def min_value(self):
        """The lower end; :func:`neg_inf` when unbounded."""
        return _NEG_INF if self._min is None else self._min

    @property
    def max_value(self):
        """The upper end; :func:`pos_inf` when unbounded."""
        return _POS_INF if self._max is None else self._max

    def has_lower_bound(self) -> bool:
        """Whether the lower end is finite."""
        return self._min is not None

    def has_upper_bound(self) -> bool:
        """Whether the upper end is finite."""
        return self._max is not None

    def is_nothing(self) -> bool:
        """Whether the set is empty (TVM's ``[pos_inf, neg_inf]``)."""
        return self._min is _POS_INF or self._max is _NEG_INF

    def is_everything(self) -> bool:
        return self._min is None and self._max is None

    def is_bounded(self) -> bool:
        return self._min is not None and self._max is not None

    def is_single_point(self) -> bool:
        return self.is_bounded() and (self._min is self._max or _same(self._min, self._max))

    def to_range(self, analyzer=None):
        """The Range ``[min, max]`` (raises when unbounded)."""
        from ..error import TIRError
        from .analyzer import Analyzer

        if not self.is_bounded():
            raise TIRError("IntervalSet.to_range: the set is unbounded")
        ana = analyzer or Analyzer()
        extent = ana.simplify(_op.add(_op.subtract(self._max, self._min), 1))
        return E.Range.from_min_extent(self._min, extent)

    def __repr__(self):
        lo = "-inf" if self._min is None else str(self._min)
        hi = "+inf" if self._max is None else str(self._max)
        return f"IntervalSet[{lo}, {hi}]"


def _same(a, b) -> bool:
    from .linear import expr_key

    return expr_key(a) == expr_key(b)


def union(sets) -> IntervalSet:
    """The smallest interval holding every set of ``sets``."""
    sets = list(sets)
    lo, hi = sets[0]._min, sets[0]._max
    for s in sets[1:]:
        lo = None if lo is None or s._min is None else _op.minimum(lo, s._min)
        hi = None if hi is None or s._max is None else _op.maximum(hi, s._max)
    return IntervalSet(lo, hi)


def _as_set(value):
    if isinstance(value, IntervalSet):
        return value
    if isinstance(value, E.Range):
        return IntSet.from_range(value)
    return IntSet.single_point(value)


class _SetEvaluator:
    def __init__(self, dom_map, analyzer):
        self.dom = {id(k.var if isinstance(k, E.IterVar) else k): _as_set(v) for k, v in dom_map.items()}
        self.keep = list(dom_map)
        self.ana = analyzer

    def nonneg(self, e):
        return self.ana.can_prove(_op.greater_equal(e, 0))

    def eval(self, e):
        kind = type(e)
        if isinstance(e, E.Var):
            return self.dom.get(id(e)) or IntSet.single_point(e)
        if kind in (E.IntImm, E.FloatImm):
            return IntSet.single_point(e)
        if not any(id(v) in self.dom for v in undefined_vars(e)):
            return IntSet.single_point(e)  # independent of the swept variables
        if kind is E.Add or kind is E.Sub:
            a, b = self.eval(e.a), self.eval(e.b)
            if kind is E.Sub:
                b = IntervalSet(_neg(b._max), _neg(b._min))
            return IntervalSet(_bin(_op.add, a._min, b._min), _bin(_op.add, a._max, b._max))
        if kind is E.Mul:
            return self._mul(e)
        if kind in (E.FloorDiv, E.Div):
            a, b = self.eval(e.a), self.eval(e.b)
            if not b.is_single_point() or not self.ana.can_prove(_op.greater(b._min, 0)):
                return IntSet.everything()
            if kind is E.Div and not (a._min is not None and self.nonneg(a._min)):
                return IntSet.everything()
            c = b._min
            return IntervalSet(_bin(_op.floordiv, a._min, c), _bin(_op.floordiv, a._max, c))
        if kind in (E.FloorMod, E.Mod):
            return self._mod(e)
        if kind in (E.Min, E.Max):
            a, b = self.eval(e.a), self.eval(e.b)
            f = _op.minimum if kind is E.Min else _op.maximum
            # an unbounded end of one operand: min keeps the other's upper end, max the other's lower end
            if kind is E.Min:
                lo = None if a._min is None or b._min is None else f(a._min, b._min)
                hi = b._max if a._max is None else a._max if b._max is None else f(a._max, b._max)
            else:
                hi = None if a._max is None or b._max is None else f(a._max, b._max)
                lo = b._min if a._min is None else a._min if b._min is None else f(a._min, b._min)
            return IntervalSet(lo, hi)
        if kind is E.Select:
            return union([self.eval(e.true_value), self.eval(e.false_value)])
        if kind is E.Cast:
            a = self.eval(e.value)
            return IntervalSet(_bin(lambda x, _: _op.cast(x, e.dtype), a._min, 0),
                               _bin(lambda x, _: _op.cast(x, e.dtype), a._max, 0))
        return IntSet.everything()

    def _mul(self, e):
        a, b = self.eval(e.a), self.eval(e.b)
        if not a.is_single_point():
            a, b = b, a
        if not a.is_single_point():
            ends = (a._min, a._max, b._min, b._max)
            if all(isinstance(x, E.IntImm) for x in ends):  # two constant intervals: the extreme products
                products = [x.value * y.value for x in ends[:2] for y in ends[2:]]
                return IntervalSet(_op.const(min(products), e.dtype), _op.const(max(products), e.dtype))
            return IntSet.everything()
        c = a._min
        if self.ana.can_prove(_op.greater_equal(c, 0)):
            return IntervalSet(_bin(_op.multiply, b._min, c), _bin(_op.multiply, b._max, c))
        if self.ana.can_prove(_op.less(c, 0)):
            return IntervalSet(_bin(_op.multiply, b._max, c), _bin(_op.multiply, b._min, c))
        return IntSet.everything()

    def _mod(self, e):
        a, b = self.eval(e.a), self.eval(e.b)
        if not b.is_single_point() or not self.ana.can_prove(_op.greater(b._min, 0)):
            return IntSet.everything()
        if type(e) is E.Mod and not (a._min is not None and self.nonneg(a._min)):
            return IntSet.everything()
        c = b._min
        if a.is_bounded():
            same_block = _op.equal(_op.floordiv(a._min, c), _op.floordiv(a._max, c))
            if self.ana.can_prove(same_block):
                return IntervalSet(_op.floormod(a._min, c), _op.floormod(a._max, c))
        return IntervalSet(_op.const(0, e.dtype), _op.subtract(c, 1))


def _neg(x):
    return None if x is None else _op.multiply(x, -1)


def _bin(f, x, y):
    return None if x is None or y is None else f(x, y)


def eval_set(expr, dom_map, analyzer=None) -> IntervalSet:
    """The interval of ``expr`` while each variable of ``dom_map`` (``{Var or IterVar: Range or IntervalSet}``) takes
    every value of its domain; ends are simplified."""
    from .analyzer import Analyzer

    ana = analyzer or Analyzer()
    result = _SetEvaluator(dom_map, ana).eval(E.convert(expr))
    lo = None if result._min is None else ana.simplify(result._min)
    hi = None if result._max is None else ana.simplify(result._max)
    return IntervalSet(lo, hi)


def estimate_region(indices, dom_map, analyzer=None) -> list:
    """The Range each index of ``indices`` covers over ``dom_map`` (bound inference of a buffer access)."""
    return [eval_set(i, dom_map, analyzer).to_range(analyzer) for i in indices]


def union_lower_bound(sets) -> IntervalSet:
    """A lower bound of the union of ``sets``: the hull of those that touch or overlap the first non-empty one (a
    set separated by a gap is left out, since the hull would claim the gap) (TVM's ``arith.int_set.
    union_lower_bound``)."""
    from .analyzer import Analyzer

    sets = [s for s in sets if not s.is_nothing()]
    if not sets:
        return IntervalSet(_POS_INF, _NEG_INF)
    ana = Analyzer()
    lo, hi = sets[0]._min, sets[0]._max
    for s in sets[1:]:
        # joined when neither lies beyond the other with a gap between them
        joins_right = s._min is None or hi is None or ana.can_prove(_op.less_equal(s._min, _op.add(hi, 1)))
        joins_left = lo is None or s._max is None or ana.can_prove(_op.less_equal(lo, _op.add(s._max, 1)))
        if joins_right and joins_left:
            lo = None if lo is None or s._min is None else _op.minimum(lo, s._min)
            hi = None if hi is None or s._max is None else _op.maximum(hi, s._max)
    return IntervalSet(lo, hi)
