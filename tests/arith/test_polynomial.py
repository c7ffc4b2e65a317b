"""Polynomial equality and exact division: what they claim holds on random integer values."""

import numpy as np
import pytest

from kiln import tir
from kiln.arith.polynomial import poly_divisible, poly_equal, poly_quotient
from kiln.tir.evaluator import evaluate_expr

a, b, c = (tir.SizeVar(n, "int64") for n in "abc")


def _values(rng):
    return {a: int(rng.integers(1, 50)), b: int(rng.integers(1, 50)), c: int(rng.integers(1, 50))}


@pytest.mark.parametrize("lhs, rhs", [(a * b, b * a), ((a + b) * c, c * b + a * c), (a * 4 * b - b * a, 3 * b * a),
                                      ((a + 1) * (a - 1), a * a - 1)], ids=str)
def test_equal_polynomials_agree_everywhere(lhs, rhs):
    assert poly_equal(lhs, rhs)
    rng = np.random.default_rng(1)
    for _ in range(20):
        env = _values(rng)
        assert int(evaluate_expr(lhs, env)) == int(evaluate_expr(rhs, env))


@pytest.mark.parametrize("num, den", [(a * b * 32, b * 4), (c * a * 6 + a * 3, a * 3), (a * b, b)], ids=str)
def test_quotient_times_divisor_is_the_dividend(num, den):
    assert poly_divisible(num, den)
    q = poly_quotient(num, den)
    rng = np.random.default_rng(2)
    for _ in range(20):
        env = _values(rng)
        assert int(evaluate_expr(q, env)) * int(evaluate_expr(den, env)) == int(evaluate_expr(num, env))


@pytest.mark.parametrize("num, den", [(a * b + 1, b), (a * 6, a * 4), (a, a + b), (tir.max(a, b), a)], ids=str)
def test_non_divisible_is_refused(num, den):
    assert not poly_divisible(num, den)
    assert poly_quotient(num, den) is None
    assert not poly_equal(num, den)
