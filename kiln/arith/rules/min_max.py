"""Rewrite rules for ``min`` and ``max`` (TVM's ``RewriteSimplifier`` for Min and Max nodes).

The two tables mirror each other: where ``min`` keeps the smaller operand, ``max`` keeps the larger, and a negative
scale swaps one for the other.
"""

from ...tir import expr as E
from ...tir import op as _op
from ..pattern import broadcast, floordiv, max_, min_, rewrite, rewrite_rec, select, truncdiv
from .common import c1, c2, index, lanes, s1, s2, v, vector, x, y, z

_KIND = {True: (E.Min, E.Max, min_, max_), False: (E.Max, E.Min, max_, min_)}


def _bounds(is_min):
    def rule(node, s):
        """An operand whose bounds put it on the kept side of the other is the result."""
        a, b = s.bound(node.a), s.bound(node.b)
        if is_min:
            return node.a if a.max_value <= b.min_value else node.b if b.max_value <= a.min_value else None
        return node.a if a.min_value >= b.max_value else node.b if b.min_value >= a.max_value else None
    return rule


def _offsets(is_min):
    pick = min if is_min else max
    this = min_ if is_min else max_

    def rule(node, s):
        """``min(x + c1, x + c2)``, ``min(x + c1, x)`` and ``min(c1 - x, c2 - x)`` by their constants."""
        m = this(x + c1, x + c2).match(node)
        if m is not None:
            return (x + c1).eval(m) if pick(v(m.c1), v(m.c2)) == v(m.c1) and v(m.c1) != v(m.c2) else (x + c2).eval(m)
        m = this(x + c1, x).match(node) or this(x, x + c1).match(node)
        if m is not None:
            return (x + c1).eval(m) if pick(v(m.c1), 0) == v(m.c1) and v(m.c1) != 0 else m.x
        m = this(c1 - x, c2 - x).match(node)
        if m is not None:
            return (c1 - x).eval(m) if pick(v(m.c1), v(m.c2)) == v(m.c1) and v(m.c1) != v(m.c2) else (c2 - x).eval(m)
        return None
    return rule


def _scaling(is_min):
    kind, other, this, that = _KIND[is_min]

    def rule(node, s):
        """Monotone scaling: ``min(x / c, y / c) -> min(x, y) / c`` (a negative ``c`` turns it into ``max``),
        ``min(x * c, y * c)``, and ``min(x * c1, c2) -> min(x, c2 / c1) * c1`` when ``c1 | c2``."""
        for div in (truncdiv, floordiv):
            m = this(div(x, c1), div(y, c1)).match(node)
            if m is not None:
                return div(this(x, y) if v(m.c1) > 0 else that(x, y), c1).eval(m)
        m = this(x * c1, y * c1).match(node)
        if m is not None:
            return ((this(x, y) if v(m.c1) > 0 else that(x, y)) * c1).eval(m)
        m = this(x * c1, c2).match(node)
        if m is not None:
            k1, k2 = v(m.c1), v(m.c2)
            if k1 == 0:
                return m.c2 if (k2 < 0 if is_min else k2 > 0) else m.c1
            if k2 % k1 == 0:
                bound = _op.minimum if (k1 > 0) == is_min else _op.maximum
                return _op.multiply(bound(m.x, int(k2 / k1)), k1)
        return None
    return rule


def _round_up(m, s):
    return v(m.c2) > 0 and v(m.c1) + 1 == v(m.c2)


def _pos(m, s):
    return v(m.c2) > 0


MIN = (
    (vector, (
        rewrite(min_(broadcast(x, lanes), broadcast(y, lanes)), broadcast(min_(x, y), lanes)),
        rewrite(min_(min_(x, broadcast(y, lanes)), broadcast(z, lanes)), min_(x, broadcast(min_(y, z), lanes))),
    )),
    (index, (
        rewrite(min_(x, x), x),
        _bounds(True),
        _offsets(True),
        rewrite([min_(truncdiv(x + c1, c2) * c2, x), min_(x, truncdiv(x + c1, c2) * c2),
                 min_(floordiv(x + c1, c2) * c2, x), min_(x, floordiv(x + c1, c2) * c2)], x, _round_up),
        rewrite([min_(truncdiv(x + c1, c2) * c2, max_(x, c2)), min_(max_(x, c2), truncdiv(x + c1, c2) * c2),
                 min_(floordiv(x + c1, c2) * c2, max_(x, c2)), min_(max_(x, c2), floordiv(x + c1, c2) * c2)],
                max_(x, c2), lambda m, s: _round_up(m, s) and s.can_prove_ge(m.x, 1)),
        rewrite([min_(x, floordiv(x, c2) * c2), min_(floordiv(x, c2) * c2, x)], floordiv(x, c2) * c2, _pos),
        rewrite([min_(max_(x, y), min_(x, y)), min_(max_(x, y), min_(y, x)), min_(min_(x, y), max_(x, y)),
                 min_(min_(x, y), max_(y, x)), min_(min_(x, y), x), min_(min_(x, y), y), min_(x, min_(x, y)),
                 min_(y, min_(x, y))], min_(x, y)),
        rewrite([min_(max_(x, y), x), min_(max_(y, x), x), min_(x, max_(x, y)), min_(x, max_(y, x))], x),
        rewrite(min_(min_(min_(x, y), z), y), min_(min_(x, y), z)),
        rewrite(min_(min_(min_(min_(x, y), z), s1), y), min_(min_(min_(x, y), z), s1)),
        rewrite(min_(min_(min_(min_(min_(x, y), z), s1), s2), y), min_(min_(min_(min_(x, y), z), s1), s2)),
        rewrite([min_(max_(x, y), max_(x, z)), min_(max_(x, y), max_(z, x)), min_(max_(y, x), max_(x, z)),
                 min_(max_(y, x), max_(z, x))], max_(min_(y, z), x)),
        rewrite([min_(min_(x, y), min_(x, z)), min_(min_(x, y), min_(z, x)), min_(min_(y, x), min_(x, z)),
                 min_(min_(y, x), min_(z, x))], min_(min_(y, z), x)),
        rewrite([min_(y + x, z + x), min_(y + x, x + z), min_(x + y, x + z), min_(x + y, z + x)], min_(y, z) + x),
        rewrite(min_(y - x, z - x), min_(y, z) - x),
        rewrite(min_(x - y, x - z), x - max_(y, z)),
        rewrite(min_(min_(x, c1), c2), min_(x, min_(c1, c2))),
        _scaling(True),
        rewrite_rec(min_(min_(x, c1), y), min_(min_(x, y), c1)),
        rewrite_rec(min_(c1 - x, c2), c1 - max_(x, c1 - c2), lambda m, s: v(m.c2) != 0),
    )),
    (lambda node: True, (
        rewrite(min_(select(x, y, z), select(x, s1, s2)), select(x, min_(y, s1), min_(z, s2))),
    )),
)
"""Rules for ``Min`` nodes."""

MAX = (
    (vector, (
        rewrite(max_(broadcast(x, lanes), broadcast(y, lanes)), broadcast(max_(x, y), lanes)),
        rewrite(max_(max_(x, broadcast(y, lanes)), broadcast(z, lanes)), max_(x, broadcast(max_(y, z), lanes))),
    )),
    (index, (
        rewrite(max_(x, x), x),
        _bounds(False),
        _offsets(False),
        rewrite([max_(truncdiv(x + c1, c2) * c2, x), max_(x, truncdiv(x + c1, c2) * c2)],
                truncdiv(x + c1, c2) * c2, _round_up),
        rewrite([max_(floordiv(x + c1, c2) * c2, x), max_(x, floordiv(x + c1, c2) * c2)],
                floordiv(x + c1, c2) * c2, _round_up),
        rewrite([max_(floordiv(x, c2) * c2, x), max_(x, floordiv(x, c2) * c2)], x, _pos),
        rewrite([max_(min_(x, y), x), max_(min_(y, x), x), max_(x, min_(x, y)), max_(x, min_(y, x))], x),
        rewrite([max_(min_(x, y), max_(x, y)), max_(min_(x, y), max_(y, x)), max_(max_(x, y), min_(x, y)),
                 max_(max_(x, y), min_(y, x)), max_(max_(x, y), x), max_(max_(x, y), y), max_(x, max_(x, y)),
                 max_(y, max_(x, y))], max_(x, y)),
        rewrite(max_(max_(max_(x, y), z), y), max_(max_(x, y), z)),
        rewrite(max_(max_(max_(max_(x, y), z), s1), y), max_(max_(max_(x, y), z), s1)),
        rewrite(max_(max_(max_(max_(max_(x, y), z), s1), s2), y), max_(max_(max_(max_(x, y), z), s1), s2)),
        rewrite([max_(max_(x, y), max_(x, z)), max_(max_(x, y), max_(z, x)), max_(max_(y, x), max_(x, z)),
                 max_(max_(y, x), max_(z, x))], max_(max_(y, z), x)),
        rewrite([max_(min_(x, y), min_(x, z)), max_(min_(x, y), min_(z, x)), max_(min_(y, x), min_(x, z)),
                 max_(min_(y, x), min_(z, x))], min_(max_(y, z), x)),
        rewrite([max_(y + x, z + x), max_(y + x, x + z), max_(x + y, x + z), max_(x + y, z + x)], max_(y, z) + x),
        rewrite(max_(y - x, z - x), max_(y, z) - x),
        rewrite(max_(x - y, x - z), x - min_(y, z)),
        rewrite(max_(max_(x, c1), c2), max_(x, max_(c1, c2))),
        _scaling(False),
        rewrite_rec(max_(max_(x, c1), y), max_(max_(x, y), c1)),
        rewrite_rec(max_(c1 - x, c2), c1 - min_(x, c1 - c2), lambda m, s: v(m.c2) != 0),
    )),
    (lambda node: True, (
        rewrite(max_(select(x, y, z), select(x, s1, s2)), select(x, max_(y, s1), max_(z, s2))),
    )),
)
"""Rules for ``Max`` nodes."""
