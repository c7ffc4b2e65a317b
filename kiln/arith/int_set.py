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
    """``[min_value, max_value]`` (inclusive, symbolic); ``None`` ends are unbounded.

    Examples
    --------
    >>> i = tir.Var("i", "int32")
    >>> s = eval_set(i * 4 + 1, {i: tir.Range(0, 8)})
    >>> (str(s.min_value), str(s.max_value))
    ('1', '29')
    """

    __slots__ = ("max_value", "min_value")

    def __init__(self, min_value, max_value):
        # numbers become constants (IntervalSet(2, 3) as in TVM); None stays an unbounded end
        self.min_value = None if min_value is None else E.convert(min_value)
        self.max_value = None if max_value is None else E.convert(max_value)

    def is_everything(self) -> bool:
        return self.min_value is None and self.max_value is None

    def is_bounded(self) -> bool:
        return self.min_value is not None and self.max_value is not None

    def is_single_point(self) -> bool:
        return self.is_bounded() and (self.min_value is self.max_value or _same(self.min_value, self.max_value))

    def to_range(self, analyzer=None):
        """The Range ``[min, max]`` (raises when unbounded)."""
        from ..error import TIRError
        from .analyzer import Analyzer

        if not self.is_bounded():
            raise TIRError("IntervalSet.to_range: the set is unbounded")
        ana = analyzer or Analyzer()
        extent = ana.simplify(_op.add(_op.subtract(self.max_value, self.min_value), 1))
        return E.Range.from_min_extent(self.min_value, extent)

    def __repr__(self):
        lo = "-inf" if self.min_value is None else str(self.min_value)
        hi = "+inf" if self.max_value is None else str(self.max_value)
        return f"IntervalSet[{lo}, {hi}]"


def _same(a, b) -> bool:
    from .linear import expr_key

    return expr_key(a) == expr_key(b)


def union(sets) -> IntervalSet:
    """The smallest interval holding every set of ``sets``."""
    sets = list(sets)
    lo, hi = sets[0].min_value, sets[0].max_value
    for s in sets[1:]:
        lo = None if lo is None or s.min_value is None else _op.minimum(lo, s.min_value)
        hi = None if hi is None or s.max_value is None else _op.maximum(hi, s.max_value)
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
                b = IntervalSet(_neg(b.max_value), _neg(b.min_value))
            return IntervalSet(_bin(_op.add, a.min_value, b.min_value), _bin(_op.add, a.max_value, b.max_value))
        if kind is E.Mul:
            return self._mul(e)
        if kind in (E.FloorDiv, E.Div):
            a, b = self.eval(e.a), self.eval(e.b)
            if not b.is_single_point() or not self.ana.can_prove(_op.greater(b.min_value, 0)):
                return IntSet.everything()
            if kind is E.Div and not (a.min_value is not None and self.nonneg(a.min_value)):
                return IntSet.everything()
            c = b.min_value
            return IntervalSet(_bin(_op.floordiv, a.min_value, c), _bin(_op.floordiv, a.max_value, c))
        if kind in (E.FloorMod, E.Mod):
            return self._mod(e)
        if kind in (E.Min, E.Max):
            a, b = self.eval(e.a), self.eval(e.b)
            f = _op.minimum if kind is E.Min else _op.maximum
            # an unbounded end of one operand: min keeps the other's upper end, max the other's lower end
            if kind is E.Min:
                lo = None if a.min_value is None or b.min_value is None else f(a.min_value, b.min_value)
                hi = b.max_value if a.max_value is None else a.max_value if b.max_value is None else f(a.max_value,
                                                                                                        b.max_value)
            else:
                hi = None if a.max_value is None or b.max_value is None else f(a.max_value, b.max_value)
                lo = b.min_value if a.min_value is None else a.min_value if b.min_value is None else f(a.min_value,
                                                                                                        b.min_value)
            return IntervalSet(lo, hi)
        if kind is E.Select:
            return union([self.eval(e.true_value), self.eval(e.false_value)])
        if kind is E.Cast:
            a = self.eval(e.value)
            return IntervalSet(_bin(lambda x, _: _op.cast(x, e.dtype), a.min_value, 0),
                               _bin(lambda x, _: _op.cast(x, e.dtype), a.max_value, 0))
        return IntSet.everything()

    def _mul(self, e):
        a, b = self.eval(e.a), self.eval(e.b)
        if not a.is_single_point():
            a, b = b, a
        if not a.is_single_point():
            return IntSet.everything()
        c = a.min_value
        if self.ana.can_prove(_op.greater_equal(c, 0)):
            return IntervalSet(_bin(_op.multiply, b.min_value, c), _bin(_op.multiply, b.max_value, c))
        if self.ana.can_prove(_op.less(c, 0)):
            return IntervalSet(_bin(_op.multiply, b.max_value, c), _bin(_op.multiply, b.min_value, c))
        return IntSet.everything()

    def _mod(self, e):
        a, b = self.eval(e.a), self.eval(e.b)
        if not b.is_single_point() or not self.ana.can_prove(_op.greater(b.min_value, 0)):
            return IntSet.everything()
        if type(e) is E.Mod and not (a.min_value is not None and self.nonneg(a.min_value)):
            return IntSet.everything()
        c = b.min_value
        if a.is_bounded():
            same_block = _op.equal(_op.floordiv(a.min_value, c), _op.floordiv(a.max_value, c))
            if self.ana.can_prove(same_block):
                return IntervalSet(_op.floormod(a.min_value, c), _op.floormod(a.max_value, c))
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
    lo = None if result.min_value is None else ana.simplify(result.min_value)
    hi = None if result.max_value is None else ana.simplify(result.max_value)
    return IntervalSet(lo, hi)


def estimate_region(indices, dom_map, analyzer=None) -> list:
    """The Range each index of ``indices`` covers over ``dom_map`` (bound inference of a buffer access)."""
    return [eval_set(i, dom_map, analyzer).to_range(analyzer) for i in indices]
