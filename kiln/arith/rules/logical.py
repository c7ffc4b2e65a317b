"""Rewrite rules for ``&&`` and ``||`` (TVM's ``RewriteSimplifier`` for And and Or nodes): contradictions and
tautologies over the same operand, ranges that cannot meet, and ``floordiv``/``floormod`` pairs that pin a value."""

from ..pattern import broadcast, floordiv, floormod, le, make_const, rewrite, rewrite_rec
from .common import c1, c2, c3, lanes, v, vector, x, y, z


def _const_rule(src, value, cond=None):
    """A rule whose result is the bool constant ``value`` (TVM's ``cfalse``/``ctrue`` of the node's dtype)."""
    alternatives = tuple(src) if isinstance(src, list) else (src,)

    def rule(node, s):
        for alt in alternatives:
            m = alt.match(node)
            if m is not None and (cond is None or cond(m, s)):
                return make_const(value, node.dtype)
        return None

    rule.sources = alternatives  # type: ignore[attr-defined]
    return rule


def _residue(r, c):
    """Whether ``r`` is a possible ``floormod(_, c)``. TVM applies the floordiv/floormod pair rules without this
    check; for an impossible residue their left side is false while the result need not be, so kiln requires it."""
    return 0 <= r < c if c > 0 else c < r <= 0


def _block(m):
    """The residue bound ``c3`` lies within one block of a positive ``c2`` (the derivation assumes both; TVM's
    rules do not check it)."""
    return v(m.c2) > 0 and 0 <= v(m.c3) <= v(m.c2)


def _in_block(m, s):
    return v(m.c2) > 0 and 0 <= v(m.c3) < v(m.c2)


def _tmod(a, b):
    """C's ``a % b`` (the sign of ``a``)."""
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def _cmod(a, b):
    """``(a % b + b) % b`` with C's ``%``, as TVM's condition computes it."""
    return _tmod(_tmod(a, b) + b, b)


AND = (
    (vector, (rewrite(broadcast(x, lanes) & broadcast(y, lanes), broadcast(x & y, lanes)),)),
    (lambda node: True, (
        _const_rule((x == y) & (x != y), 0),
        _const_rule((x != y) & (x == y), 0),
        _const_rule(x & ~x, 0),
        _const_rule((x <= y) & (y < x), 0),
        _const_rule((y < x) & (x <= y), 0),
        _const_rule((x < c1) & (c2 < x), 0, lambda m, s: v(m.c2) + 1 >= v(m.c1)),
        _const_rule((c2 < x) & (x < c1), 0, lambda m, s: v(m.c2) + 1 >= v(m.c1)),
        _const_rule([(x < c1) & (c2 <= x), (c2 <= x) & (x < c1), (x <= c1) & (c2 < x), (c2 < x) & (x <= c1)], 0,
                    lambda m, s: v(m.c2) >= v(m.c1)),
        _const_rule([(x <= c1) & (c2 <= x), (c2 <= x) & (x <= c1)], 0, lambda m, s: v(m.c2) > v(m.c1)),
        rewrite((x == c1) & (x == c2), (x == c1) & (c1 == c2)),
        rewrite([(x == c1) & (x != c2), (x != c2) & (x == c1)], (x == c1) & (c1 != c2)),
        rewrite_rec([(floordiv(x, c2) == c1) & (floormod(x, c2) == c3),
                     (floormod(x, c2) == c3) & (floordiv(x, c2) == c1)],
                    x == c1 * c2 + c3, lambda m, s: _residue(v(m.c3), v(m.c2))),
        rewrite_rec([le(0, x - y * c1) & (x - y * c1 < c1), (x - y * c1 < c1) & le(0, x - y * c1)],
                    y == floordiv(x, c1), lambda m, s: v(m.c1) > 0),
        rewrite_rec((c1 < x - y * c1) & (x - y * c1 <= 0), y == floordiv(x, c1), lambda m, s: v(m.c1) < 0),
        rewrite_rec([le(0, x + y * c2) & (x + y * c2 < c1), (x + y * c2 < c1) & le(0, x + y * c2)],
                    y == floordiv(x, c1), lambda m, s: v(m.c2) == -v(m.c1)),
        rewrite_rec((x < c1) & (floormod(x, c2) < c3), (x < c1 - c2 + c3) & (floormod(x, c2) < c3),
                    lambda m, s: _block(m) and v(m.c1) % v(m.c2) == 0),
        rewrite_rec((x < c1) & (floormod(x, c2) < c3), (x < c1 - floormod(c1, c2) + c3) & (floormod(x, c2) < c3),
                    lambda m, s: _block(m) and _cmod(v(m.c1), v(m.c2)) > v(m.c3)),
        rewrite_rec((x <= c1) & (floormod(x, c2) < c3), (x < c1 + 1 - c2 + c3) & (floormod(x, c2) < c3),
                    lambda m, s: _block(m) and _tmod(v(m.c1) + 1, v(m.c2)) == 0),
        rewrite_rec((x <= c1) & (floormod(x, c2) < c3), (x < c1 + 1 - floormod(c1, c2) + c3) & (floormod(x, c2) < c3),
                    lambda m, s: _block(m) and _cmod(v(m.c1) + 1, v(m.c2)) > v(m.c3)),
        rewrite_rec([(floordiv(x, c2) == c1) & (floormod(x, c2) < c3),
                     (floormod(x, c2) < c3) & (floordiv(x, c2) == c1)],
                    (c1 * c2 <= x) & (x < c1 * c2 + c3), _in_block),
        rewrite_rec([(floordiv(x, c2) == c1) & (floormod(x, c2) <= c3),
                     (floormod(x, c2) <= c3) & (floordiv(x, c2) == c1)],
                    (c1 * c2 <= x) & (x <= c1 * c2 + c3), _in_block),
        rewrite_rec([(floordiv(x, c2) == c1) & (c3 <= floormod(x, c2)),
                     (c3 <= floormod(x, c2)) & (floordiv(x, c2) == c1)],
                    (c1 * c2 + c3 <= x) & (x < (c1 + 1) * c2), _in_block),
        rewrite_rec([(floordiv(x, c2) == c1) & (c3 < floormod(x, c2)),
                     (c3 < floormod(x, c2)) & (floordiv(x, c2) == c1)],
                    (c1 * c2 + c3 < x) & (x < (c1 + 1) * c2), _in_block),
        rewrite_rec(x & (y & z), (x & y) & z),
    )),
)
"""Rules for ``And`` nodes."""


OR = (
    (vector, (rewrite(broadcast(x, lanes) | broadcast(y, lanes), broadcast(x | y, lanes)),)),
    (lambda node: True, (
        _const_rule((x == y) | (x != y), 1),
        _const_rule((x != y) | (x == y), 1),
        _const_rule(x | ~x, 1),
        _const_rule((x <= y) | (y < x), 1),
        _const_rule((y < x) | (x <= y), 1),
        rewrite((x < y) | (y < x), x != y),
        _const_rule((x < c1) | (c2 < x), 1, lambda m, s: v(m.c2) < v(m.c1)),
        _const_rule((c2 < x) | (x < c1), 1, lambda m, s: v(m.c2) < v(m.c1)),
        _const_rule((x <= c1) | (c2 < x), 1, lambda m, s: v(m.c2) <= v(m.c1)),
        _const_rule((c2 < x) | (x <= c1), 1, lambda m, s: v(m.c2) <= v(m.c1)),
        _const_rule((x < c1) | (c2 <= x), 1, lambda m, s: v(m.c2) <= v(m.c1)),
        _const_rule((c2 <= x) | (x < c1), 1, lambda m, s: v(m.c2) <= v(m.c1)),
        _const_rule((x <= c1) | (c2 <= x), 1, lambda m, s: v(m.c2) <= v(m.c1) + 1),
        _const_rule((c2 <= x) | (x <= c1), 1, lambda m, s: v(m.c2) <= v(m.c1) + 1),
        rewrite((x != c1) | (x != c2), (x != c1) | (c1 != c2)),
        rewrite((x != c1) | (x == c2), (x != c1) | (c1 == c2)),
        rewrite((x == c2) | (x != c1), (x != c1) | (c1 == c2)),
        rewrite_rec((x < y) | (x == y), x <= y),
        rewrite_rec((x < y) | (y == x), x <= y),
        rewrite_rec((x == y) | (x < y), x <= y),
        rewrite_rec((y == x) | (x < y), x <= y),
        rewrite_rec(x | (y | z), (x | y) | z),
    )),
)
"""Rules for ``Or`` nodes."""
