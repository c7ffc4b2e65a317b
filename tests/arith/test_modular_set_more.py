"""Modular sets of truncated division/modulo, shifts, bitwise and, casts and constraints: every value computed on
random integers satisfies the set (value == base mod coeff)."""

import random

import pytest

from kiln import arith, tir
from kiln.arith import ConstIntBound
from kiln.tir.evaluator import evaluate_expr

x, y = tir.Var("x", "int32"), tir.Var("y", "int32")


@pytest.mark.parametrize("make", [
    lambda: tir.truncdiv(x * 8, 4), lambda: tir.truncmod(x * 4, 4), lambda: tir.truncmod(x * 6 + 4, 4),
    lambda: tir.shift_right(x * 4 + 2, 1), lambda: tir.bitwise_and(x * 16 + y * 4, 31),
    lambda: (x * 3 + 1).astype("float32").astype("int32"), lambda: (x * 12).astype("int64"),
])
def test_values_in_modular_set(make):
    expr = make()
    ana = arith.Analyzer()
    m = ana.modular_set(expr)
    rng = random.Random(1)
    for _ in range(100):
        env = {x: rng.randint(-1000, 1000), y: rng.randint(-1000, 1000)}
        value = int(evaluate_expr(expr, env))
        assert (value - m.base) % m.coeff == 0 if m.coeff else value == m.base, (expr, m, env)


def test_truncdiv_with_remainder_needs_nonnegative():
    ana = arith.Analyzer()
    assert ana.modular_set(tir.truncdiv(x * 4 + 2, 2)).coeff == 1  # sign unknown: the rounding is not known
    ana.update(x, ConstIntBound(0, 100))
    m = ana.modular_set(tir.truncdiv(x * 4 + 2, 2))
    assert (m.coeff, m.base) == (2, 1)


def test_constraints_intersect_by_crt():
    a = tir.Var("a", "int32")
    ana = arith.Analyzer()
    with ana.constraint_scope(tir.truncmod(a, 3) == 2):
        with ana.constraint_scope(tir.truncmod(a, 5) == 3):
            with ana.constraint_scope(tir.floormod(a, 7) == 2):
                m = ana.modular_set(a)
                assert (m.coeff, m.base) == (105, 23)
        m = ana.modular_set(a)
        assert (m.coeff, m.base) == (3, 2)
    assert ana.modular_set(a).coeff == 1


def test_direct_reducers_and_bitwise_folding():
    assert tir.max(*range(7)) == 6 and tir.min(5, 3, 9) == 3 and tir.sum(1, 2, 3) == 6
    assert tir.bitwise_and(tir.const(112), tir.const(138)).value == 112 & 138
    assert tir.shift_left(tir.const(3), tir.const(4)).value == 48
