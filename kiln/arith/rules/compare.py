"""Rewrite rules for comparisons (TVM's ``RewriteSimplifier::ApplyRewriteRules`` for EQ and LT; NE, LE, GT and GE
are expressed through them by the driver, :mod:`kiln.arith.pattern_simplify`).

Before any rule, the simplifier tries to decide the comparison from the bounds of ``a - b`` (``s.try_compare``).
The rules then cancel common terms, move constants to one side, and divide out a common factor.
"""

from ...tir import expr as E
from ...tir import op as _op
from ..pattern import (
    broadcast,
    floordiv,
    floormod,
    lt,
    make_const,
    max_,
    min_,
    ramp,
    rewrite,
    rewrite_rec,
    truncdiv,
    truncmod,
)
from .common import EQ_, GE_, GT_, LT_, NE_, c1, c2, index_operands, lanes, run, s1, v, vector, x, y, z


def _true(node):
    return make_const(1, node.dtype)


def _false(node):
    return make_const(0, node.dtype)


EQ_RULES = (
    (vector, (rewrite(broadcast(x, lanes) == broadcast(y, lanes), broadcast(x == y, lanes)),)),
    (index_operands, (
        rewrite(c1 == x, x == c1),
        rewrite(x - c1 == c2, x == c2 + c1),
        rewrite(c1 - x == c2, x == c1 - c2),
        rewrite(x + c1 == c2, x == c2 - c1),
        rewrite_rec(x * y == 0, (x == 0) | (y == 0)),
    )),
)


def apply_eq(node, s):
    """TVM's ``ApplyRewriteRules(EQ)``: decided by :meth:`try_compare`, else the first rule that applies."""
    if index_operands(node) and not vector(node):
        result = s.try_compare(node.a, node.b)
        if result == EQ_:
            return _true(node)
        if result in (NE_, GT_, LT_):
            return _false(node)
    out = run(EQ_RULES, node, s)
    return node if out is None else out


def _pos(m, s):
    return v(m.c1) > 0


LT_RULES = (
    (vector, (
        rewrite(broadcast(x, lanes) < broadcast(y, lanes), broadcast(x < y, lanes)),
        rewrite(ramp(x, s1, lanes) < ramp(y, s1, lanes), broadcast(x < y, lanes)),
    )),
    (index_operands, (
        rewrite(x + y < x + z, y < z),
        rewrite(x + y < z + x, y < z),
        rewrite(y + x < x + z, y < z),
        rewrite(y + x < z + x, y < z),
        rewrite(y - x < z - x, y < z),
        rewrite(x - y < x - z, z < y),
        rewrite(x < x + z, lt(0, z)),
        rewrite(x < z + x, lt(0, z)),
        rewrite(x < x - z, z < 0),
        rewrite(x * c1 < y * c1, x < y, lambda m, s: v(m.c1) > 0),
        rewrite(x * c1 < y * c1, y < x, lambda m, s: v(m.c1) < 0),
        rewrite(x * c2 < c1, x < truncdiv(c1 - 1, c2) + 1, lambda m, s: v(m.c1) > 0 and v(m.c2) > 0),
        rewrite(x * c2 < c1, x < truncdiv(c1, c2), lambda m, s: v(m.c1) <= 0 and v(m.c2) > 0),
        rewrite(x * c2 < c1, truncdiv(c1 - 1, c2) - 1 < x, lambda m, s: v(m.c1) > 0 and v(m.c2) < 0),
        rewrite(x * c2 < c1, truncdiv(c1, c2) < x, lambda m, s: v(m.c1) <= 0 and v(m.c2) < 0),
        rewrite(c1 < x * c2, truncdiv(c1 + 1, c2) - 1 < x, lambda m, s: v(m.c1) < 0 and v(m.c2) > 0),
        rewrite(c1 < x * c2, truncdiv(c1, c2) < x, lambda m, s: v(m.c1) >= 0 and v(m.c2) > 0),
        rewrite(c1 < x * c2, x < truncdiv(c1 + 1, c2) + 1, lambda m, s: v(m.c1) < 0 and v(m.c2) < 0),
        rewrite(c1 < x * c2, x < truncdiv(c1, c2), lambda m, s: v(m.c1) >= 0 and v(m.c2) < 0),
        rewrite(truncdiv(x, c1) < c2, x < c1 * c2, lambda m, s: v(m.c1) > 0 and v(m.c2) > 0),
        rewrite(truncdiv(x, c1) < c2, x < c1 * (c2 - 1) + 1, lambda m, s: v(m.c1) > 0 and v(m.c2) <= 0),
        rewrite(c1 < truncdiv(x, c2), (c1 + 1) * c2 - 1 < x, lambda m, s: v(m.c1) >= 0 and v(m.c2) > 0),
        rewrite(c1 < truncdiv(x, c2), c1 * c2 < x, lambda m, s: v(m.c1) < 0 and v(m.c2) > 0),
        rewrite(truncdiv(x, c1) * c1 < x, lt(0, truncmod(x, c1)), _pos),
        rewrite(truncdiv(x, c1) * c1 < x + y, lt(0, truncmod(x, c1) + y), _pos),
        rewrite(truncdiv(x, c1) * c1 < x - y, y < truncmod(x, c1), _pos),
        rewrite(truncdiv(x + c2, c1) * c1 < x, c2 < truncmod(x + c2, c1), _pos),
        rewrite(truncdiv(x + c2, c1) * c1 < x + y, c2 < truncmod(x + c2, c1) + y, _pos),
        rewrite(truncdiv(x + c2, c1) * c1 < x - y, y < truncmod(x + c2, c1) + (0 - c2), _pos),
        rewrite(floordiv(x, c1) < c2, x < c1 * c2, _pos),
        rewrite(c1 < floordiv(x, c2), (c1 + 1) * c2 - 1 < x, lambda m, s: v(m.c2) > 0),
        rewrite(floordiv(x, c1) * c1 < x, lt(0, floormod(x, c1)), _pos),
        rewrite(floordiv(x, c1) * c1 < x + y, lt(0, floormod(x, c1) + y), _pos),
        rewrite(floordiv(x, c1) * c1 < x - y, y < floormod(x, c1), _pos),
        rewrite(floordiv(x + c2, c1) * c1 < x, c2 < floormod(x + c2, c1), _pos),
        rewrite(floordiv(x + c2, c1) * c1 < x + y, c2 < floormod(x + c2, c1) + y, _pos),
        rewrite(floordiv(x + c2, c1) * c1 < x - y, y < floormod(x + c2, c1) + (0 - c2), _pos),
        rewrite_rec(min_(x, y) < z, (x < z) | (y < z)),
        rewrite_rec(max_(x, y) < z, (x < z) & (y < z)),
        rewrite_rec(z < min_(x, y), (z < x) & (z < y)),
        rewrite_rec(z < max_(x, y), (z < x) | (z < y)),
        rewrite_rec([c1 < x + c2, c1 - x < c2], c1 - c2 < x),
        rewrite_rec([c1 < c2 - x, x + c1 < c2], x < c2 - c1),
        rewrite_rec(c1 < x - c2, c1 + c2 < x),
        rewrite_rec(x - c2 < c1, x < c1 + c2),
        rewrite_rec(x < c1 - y, x + y < c1),
        rewrite_rec(c1 - y < x, c1 < x + y),
        rewrite_rec(x < c1 + y, x - y < c1),
        rewrite_rec(c1 + y < x, c1 < x - y),
    )),
)


def constant_offset(e):
    """TVM's ``ExtractConstantOffset``: ``(rest, c)`` with ``e == rest + c``."""
    if type(e) is E.Add and type(e.b) is E.IntImm:
        return e.a, e.b.value
    if type(e) is E.Sub and type(e.b) is E.IntImm:
        return e.a, -e.b.value
    if type(e) is E.Sub and type(e.a) is E.IntImm:
        return e.b, e.a.value
    return e, 0


def _merge_constants(node):
    lhs, lo = constant_offset(node.a)
    rhs, ro = constant_offset(node.b)
    if lo == 0 and ro == 0:
        return None
    diff = ro - lo
    if diff == 0:
        return E.LT(lhs, rhs)
    if diff == 1:
        return E.LE(lhs, rhs)
    if diff < 0 and ro != 0:
        return E.LT(_op.add(lhs, make_const(-diff, lhs.dtype)), rhs)
    if diff > 0 and lo != 0:
        return E.LT(lhs, _op.add(rhs, make_const(diff, rhs.dtype)))
    return None


def _gcd(a, b):
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a


def apply_lt(node, s):
    """TVM's ``ApplyRewriteRules(LT)``: decided by :meth:`try_compare`, else the rules, then constants merged into
    one side and a common factor of both sides divided out."""
    if index_operands(node) and not vector(node):
        result = s.try_compare(node.a, node.b)
        if result == LT_:
            return _true(node)
        if result in (EQ_, GT_, GE_):
            return _false(node)
    out = run(LT_RULES, node, s)
    if out is not None:
        return out
    if index_operands(node) and not vector(node):
        merged = _merge_constants(node)
        if merged is not None:
            return s.recursive_rewrite(merged)
        ma, mb = s.modular(node.a), s.modular(node.b)
        factor = _gcd(_gcd(ma.base, ma.coeff), _gcd(mb.base, mb.coeff))
        if factor > 1:
            return s.recursive_rewrite(E.LT(_op.floordiv(node.a, factor), _op.floordiv(node.b, factor)))
    return node


def apply_not(node, s):
    """TVM's ``ApplyRewriteRules(Not)``: push the negation inward."""
    out = run(NOT_RULES, node, s)
    return node if out is None else out


NOT_RULES = (
    (vector, (rewrite(~broadcast(x, lanes), broadcast(~x, lanes)),)),
    (lambda node: True, (
        rewrite(~~x, x),
        rewrite(~(x <= y), y < x),
        rewrite(~(x >= y), x < y),
        rewrite(~(x < y), y <= x),
        rewrite(~(x > y), x <= y),
        rewrite(~(x == y), x != y),
        rewrite(~(x != y), x == y),
        rewrite_rec(~(x | y), ~x & ~y),
        rewrite_rec(~(x & y), ~x | ~y),
    )),
)
