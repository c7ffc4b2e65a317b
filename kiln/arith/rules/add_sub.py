"""Rewrite rules for ``+`` and ``-`` (the identities of TVM's ``RewriteSimplifier`` for Add and Sub nodes).

Each section is guarded as TVM's is: vector rules for vectors, index rules for scalar int32/int64 (which are assumed
not to overflow), select rules for everything. Rules are tried in order; the first that applies gives the result.
"""

from ...tir import expr as E
from ..pattern import (
    broadcast,
    floordiv,
    floormod,
    max_,
    min_,
    one_like,
    ramp,
    rewrite,
    rewrite_rec,
    select,
    truncdiv,
    truncmod,
    zero_like,
)
from .common import always, b1, b2, c1, c2, c3, c4, floating, index, lanes, s1, s2, v, vector, x, y, z


def _neg(a, b):
    return lambda m, s: v(m[a]) == -v(m[b])


def _scaled(m, s):
    return v(m.c1) != 0 and v(m.c3) == v(m.c1) * v(m.c2)


def _nonzero(m, s):
    return v(m.c1) != 0


def _pure(name):
    return lambda m, s: s.side_effect_free(m[name])


ADD = (
    (vector, (
        rewrite(ramp(b1, s1, lanes) + ramp(b2, s2, lanes), ramp(b1 + b2, s1 + s2, lanes)),
        rewrite(ramp(b1, s1, lanes) + broadcast(x, lanes), ramp(b1 + x, s1, lanes)),
        rewrite(broadcast(x, lanes) + ramp(b1, s1, lanes), ramp(x + b1, s1, lanes)),
        rewrite(broadcast(x, lanes) + broadcast(y, lanes), broadcast(x + y, lanes)),
        rewrite(x + broadcast(c4, lanes), x, lambda m, s: m.c4.value == 0.0),
    )),
    (index, (
        rewrite((x - y) + y, x),
        rewrite(x + (y - x), y),
        rewrite((x - y) + (y - z), x - z),
        rewrite((x - y) + (z - x), z - y),
        rewrite(min_(x, y - z) + z, min_(x + z, y)),
        rewrite(min_(x - z, y) + z, min_(x, y + z)),
        rewrite(max_(x, y - z) + z, max_(x + z, y)),
        rewrite(max_(x - z, y) + z, max_(x, y + z)),
        rewrite(min_(x, y + z * c1) + z * c2, min_(x + z * c2, y), _neg("c1", "c2")),
        rewrite(max_(x, y + z * c1) + z * c2, max_(x + z * c2, y), _neg("c1", "c2")),
        rewrite(min_(y + z * c1, x) + z * c2, min_(x + z * c2, y), _neg("c1", "c2")),
        rewrite(max_(y + z * c1, x) + z * c2, max_(x + z * c2, y), _neg("c1", "c2")),
        rewrite([max_(x, y) + min_(x, y), min_(x, y) + max_(x, y), max_(x, y) + min_(y, x),
                 min_(x, y) + max_(y, x)], x + y),
        rewrite(min_(x, y + c1) + c2, min_(x + c2, y), _neg("c1", "c2")),
        rewrite(min_(x + c1, y) + c2, min_(x, y + c2), _neg("c1", "c2")),
        rewrite(max_(x, y + c1) + c2, max_(x + c2, y), _neg("c1", "c2")),
        rewrite(max_(x + c1, y) + c2, max_(x, y + c2), _neg("c1", "c2")),
        rewrite((x + c1) + c2, x + (c1 + c2)),
        rewrite(x + x, x * 2),
        rewrite([x * y + x, y * x + x, x + y * x, x + x * y], x * (y + 1)),
        rewrite([x * y + x * z, y * x + x * z, x * y + z * x, y * x + z * x], x * (y + z)),
        rewrite(truncdiv(x, c1) * c1 + truncmod(x, c1), x),
        rewrite([floordiv(x, y) * y + floormod(x, y), y * floordiv(x, y) + floormod(x, y),
                 floormod(x, y) + floordiv(x, y) * y, floormod(x, y) + y * floordiv(x, y)], x),
        rewrite(floordiv(floormod(x, c2) + c1, c2) + floordiv(x, c2), floordiv(x + c1, c2),
                lambda m, s: v(m.c2) > 0),
        rewrite_rec(floordiv(x, 2) + floormod(x, 2), floordiv(x + 1, 2)),
        rewrite(floormod(x + c1, 2) + floormod(x, 2), one_like(x), lambda m, s: v(m.c1) % 2 == 1),
        rewrite(floormod(x, 2) + floormod(x + c1, 2), one_like(x), lambda m, s: v(m.c1) % 2 == 1),
        rewrite_rec([x + (c1 - y), (c1 - y) + x], (x - y) + c1),
        rewrite_rec([(x + c1) + y, x + (c1 + y), x + (y + c1)], (x + y) + c1),
        rewrite_rec(x + max_(y, z), max_(y, z) + x),
        rewrite_rec(x + min_(y, z), min_(y, z) + x),
        rewrite_rec(truncmod(y, c1) + x * c1, x * c1 + truncmod(y, c1)),
        rewrite_rec(floormod(y, c1) + x * c1, x * c1 + floormod(y, c1)),
    )),
    (always, (
        rewrite(select(x, b1, b2) + select(x, s1, s2), select(x, b1 + s1, b2 + s2)),
    )),
)
"""Rules for ``Add`` nodes."""

SUB = (
    (vector, (
        rewrite(ramp(b1, s1, lanes) - ramp(b2, s2, lanes), ramp(b1 - b2, s1 - s2, lanes)),
        rewrite(ramp(b1, s1, lanes) - broadcast(x, lanes), ramp(b1 - x, s1, lanes)),
        rewrite(broadcast(x, lanes) - ramp(b1, s1, lanes), ramp(x - b1, 0 - s1, lanes)),
        rewrite(broadcast(x, lanes) - broadcast(y, lanes), broadcast(x - y, lanes)),
    )),
    (index, (
        rewrite([(x + y) - y, (y + x) - y], x),
        rewrite([x - (y + x), x - (x + y)], 0 - y),
        rewrite([min_(x, y) - y, x - max_(y, x)], min_(x - y, 0)),
        rewrite([x - max_(x, y), min_(y, x) - y], min_(0, x - y)),
        rewrite([max_(x, y) - y, x - min_(y, x)], max_(x - y, 0)),
        rewrite([x - min_(x, y), max_(y, x) - y], max_(0, x - y)),
        rewrite(x - x, zero_like(x)),
        rewrite([x * y - x, y * x - x], x * (y - 1)),
        rewrite([x - y * x, x - x * y], x * (1 - y)),
        rewrite([x * y - x * z, y * x - x * z, x * y - z * x, y * x - z * x], x * (y - z)),
        rewrite((x + c1) - c2, x + (c1 - c2)),
        rewrite((c1 - x) - (c2 - y), (y - x) + (c1 - c2)),
        rewrite([(x + y) - (x + z), (x + y) - (z + x), (y + x) - (z + x), (y + x) - (x + z)], y - z),
        rewrite([min_(x + y, z) - x, min_(y + x, z) - x], min_(y, z - x)),
        rewrite([min_(z, x + y) - x, min_(z, y + x) - x], min_(z - x, y)),
        rewrite([max_(x + y, z) - x, max_(y + x, z) - x], max_(y, z - x)),
        rewrite([max_(z, x + y) - x, max_(z, y + x) - x], max_(z - x, y)),
        rewrite([x - min_(x + y, z), x - min_(y + x, z)], max_(0 - y, x - z)),
        rewrite([x - min_(z, x + y), x - min_(z, y + x)], max_(x - z, 0 - y)),
        rewrite([x - max_(x + y, z), x - max_(y + x, z)], min_(0 - y, x - z)),
        rewrite([x - max_(z, x + y), x - max_(z, y + x)], min_(x - z, 0 - y)),
        rewrite(min_(x, y) - min_(y, x), zero_like(x)),
        rewrite(max_(x, y) - max_(y, x), zero_like(x)),
        rewrite([min_(b1, b2) - min_(s1, s2), min_(b1, b2) - min_(s2, s1)], b1 - s1,
                lambda m, s: s.can_prove_equal(E.Sub(E.Sub(m.b1, m.s1), E.Sub(m.b2, m.s2)), 0)),
        rewrite([max_(b1, b2) - max_(s1, s2), max_(b1, b2) - max_(s2, s1)], b1 - s1,
                lambda m, s: s.can_prove_equal(E.Sub(E.Sub(m.b1, m.s1), E.Sub(m.b2, m.s2)), 0)),
        rewrite(x - truncdiv(x, c1) * c1, truncmod(x, c1), _nonzero),
        rewrite(truncdiv(x, c1) * c1 - x, 0 - truncmod(x, c1), _nonzero),
        rewrite(x - truncdiv(x + y, c1) * c1, truncmod(x + y, c1) - y, _nonzero),
        rewrite(truncdiv(x + y, c1) * c1 - x, y - truncmod(x + y, c1), _nonzero),
        rewrite(x - truncdiv(x - y, c1) * c1, truncmod(x - y, c1) + y, _nonzero),
        rewrite(truncdiv(x - y, c1) * c1 - x, 0 - truncmod(x - y, c1) - y, _nonzero),
        rewrite(x * c2 - truncdiv(x, c1) * c3, truncmod(x, c1) * c2, _scaled),
        rewrite(truncdiv(x, c1) * c3 - x * c2, 0 - truncmod(x, c1) * c2, _scaled),
        rewrite(x * c2 - truncdiv(x + y, c1) * c3, (truncmod(x + y, c1) - y) * c2, _scaled),
        rewrite(truncdiv(x + y, c1) * c3 - x * c2, (y - truncmod(x + y, c1)) * c2, _scaled),
        rewrite(x * c2 - truncdiv(x - y, c1) * c3, (truncmod(x - y, c1) + y) * c2, _scaled),
        rewrite(truncdiv(x - y, c1) * c3 - x * c2, (0 - truncmod(x - y, c1) - y) * c2, _scaled),
        rewrite(truncdiv(x + c1, c3) - truncdiv(x + c2, c3),
                truncdiv(truncmod(x + floormod(c2, c3), c3) + (c1 - c2), c3),
                lambda m, s: s.can_prove_ge(m.x, -v(m.c2)) and v(m.c1) >= v(m.c2) and v(m.c3) > 0),
        rewrite(truncdiv(x + c1, c3) - truncdiv(x, c3), truncdiv(truncmod(x, c3) + c1, c3),
                lambda m, s: s.can_prove_ge(m.x, 0) and v(m.c1) >= 0 and v(m.c3) > 0),
        rewrite(x - floordiv(x, c1) * c1, floormod(x, c1), _nonzero),
        rewrite(floordiv(x, c1) * c1 - x, 0 - floormod(x, c1), _nonzero),
        rewrite(x - floordiv(x + y, c1) * c1, floormod(x + y, c1) - y, _nonzero),
        rewrite(floordiv(x + y, c1) * c1 - x, y - floormod(x + y, c1), _nonzero),
        rewrite(x - floordiv(x - y, c1) * c1, floormod(x - y, c1) + y, _nonzero),
        rewrite(floordiv(x - y, c1) * c1 - x, 0 - floormod(x - y, c1) - y, _nonzero),
        rewrite_rec(floordiv(x + c1, 2) - floordiv(x + c2, 2),
                    floormod(x, 2) * (floormod(c1, 2) - floormod(c2, 2)) + (floordiv(c1, 2) - floordiv(c2, 2))),
        rewrite_rec(floordiv(x, 2) - floordiv(x + c2, 2), floormod(x, 2) * (0 - floormod(c2, 2)) - floordiv(c2, 2)),
        rewrite_rec(floordiv(x + c1, 2) - floordiv(x, 2), floormod(x, 2) * floormod(c1, 2) + floordiv(c1, 2)),
        rewrite(x * c2 - floordiv(x, c1) * c3, floormod(x, c1) * c2, _scaled),
        rewrite(floordiv(x, c1) * c3 - x * c2, 0 - floormod(x, c1) * c2, _scaled),
        rewrite(x * c2 - floordiv(x + y, c1) * c3, (floormod(x + y, c1) - y) * c2, _scaled),
        rewrite(floordiv(x + y, c1) * c3 - x * c2, (y - floormod(x + y, c1)) * c2, _scaled),
        rewrite(x * c2 - floordiv(x - y, c1) * c3, (floormod(x - y, c1) + y) * c2, _scaled),
        rewrite(floordiv(x - y, c1) * c3 - x * c2, (0 - floormod(x - y, c1) - y) * c2, _scaled),
        rewrite_rec(floordiv(x + 1, 2) - floormod(x, 2), floordiv(x, 2)),
        rewrite(floordiv(x + c1, c3) - floordiv(x + c2, c3),
                floordiv(floormod(x + floormod(c2, c3), c3) + (c1 - c2), c3),
                lambda m, s: v(m.c3) > 0),
        rewrite(floordiv(x + c1, c3) - floordiv(x, c3), floordiv(floormod(x, c3) + c1, c3), lambda m, s: v(m.c3) > 0),
        rewrite(x - c1, x + (0 - c1)),
        rewrite_rec((x + c1) - y, (x - y) + c1),
        rewrite_rec(x - (y + c1), (x - y) + (0 - c1)),
        rewrite_rec(x - (y - z), (x + z) - y),
        rewrite_rec(x - y * c1, x + y * (0 - c1)),
    )),
    (floating, (
        rewrite(x - x, zero_like(x), _pure("x")),
        rewrite((x + y) - y, x, _pure("y")),
        rewrite((x + y) - x, y, _pure("x")),
        rewrite(x - (y + x), 0 - y, _pure("x")),
        rewrite(x - (x + y), 0 - y, _pure("x")),
    )),
    (always, (
        rewrite(select(x, b1, b2) - select(x, s1, s2), select(x, b1 - s1, b2 - s2)),
        rewrite(select(x, y, z) - z, select(x, y - z, zero_like(z))),
        rewrite(select(x, y, z) - y, select(x, zero_like(y), z - y)),
    )),
)
"""Rules for ``Sub`` nodes."""
