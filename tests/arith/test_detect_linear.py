"""detect_linear_equation and detect_clip_bound, checked by evaluating the recombined form / the bounds on random
integers; and the comparison-of-min/max rule of the simplifier, checked the same way."""

import random

import pytest

from kiln import arith, tir
from kiln.tir.evaluator import evaluate_expr

a, b, c = (tir.Var(n, "int32") for n in "abc")


@pytest.mark.parametrize("expr,variables", [
    (a * 4 + b * 6 + 7, [a]), (a * 4 + (a + 1) + b * 6 + 7, [a]), (a * b + 7, [a]), (b * 7, [a]),
    ((a * b + c) * 8 + 3, [a, c]), (a - b * 3 - c, [a, b, c]),
])
def test_linear_form_recombines(expr, variables):
    parts = arith.detect_linear_equation(expr, variables)
    assert len(parts) == len(variables) + 1
    rebuilt = parts[-1]
    for coeff, var in zip(parts, variables, strict=False):
        rebuilt = rebuilt + coeff * var
    rng = random.Random(3)
    for _ in range(25):
        env = {v: rng.randint(-50, 50) for v in (a, b, c)}
        assert evaluate_expr(rebuilt, env) == evaluate_expr(expr, env)


def test_nonlinear_gives_nothing():
    assert arith.detect_linear_equation(a * 4 * (a + 1), [a]) == []
    assert arith.detect_linear_equation(a * (b + 1) + b, [a, b]) == []  # a's coefficient uses the later b
    only_base = arith.detect_linear_equation(a + 1, [])
    assert len(only_base) == 1 and str(only_base[0]) == "a + 1"


def test_clip_bounds_hold_exactly_where_condition_does():
    cond = tir.all(a * 1 < b * 6, a - 1 > 0)
    lo, hi = arith.detect_clip_bound(cond, [a])
    rng = random.Random(5)
    for _ in range(200):
        env = {a: rng.randint(-20, 40), b: rng.randint(-3, 6)}
        inside = evaluate_expr(lo, env) <= env[a] <= evaluate_expr(hi, env)
        assert inside == bool(evaluate_expr(cond, env))
    assert arith.detect_clip_bound(tir.all(a < b, b < a + 4), [a, b]) == []  # one conjunct names both


@pytest.mark.parametrize("make", [
    lambda: c < tir.min(a, b), lambda: c < tir.max(a, b), lambda: tir.min(a, b) < c, lambda: tir.max(a, b) <= c,
    lambda: c <= tir.min(a, b), lambda: tir.min(a, b) > 3,
])
def test_min_max_comparisons_split(make):
    expr = make()
    simple = arith.Analyzer().simplify(expr)
    assert not isinstance(simple.a, tir.Min | tir.Max) and not isinstance(simple.b, tir.Min | tir.Max)
    rng = random.Random(11)
    for _ in range(100):
        env = {v: rng.randint(-8, 8) for v in (a, b, c)}
        assert bool(evaluate_expr(simple, env)) == bool(evaluate_expr(expr, env))


def test_clz_of_constants_folds():
    ana = arith.Analyzer()
    for value, dtype in [(0, "int32"), (1, "int32"), (128, "int32"), (2, "int64"), (12345, "int64")]:
        folded = ana.rewrite_simplify(tir.call_intrin("int32", "tir.clz", tir.IntImm(dtype, value)))
        width = 32 if dtype == "int32" else 64
        assert folded.value == width - len(bin(value)[2:].lstrip("0"))


@pytest.mark.parametrize("make", [
    lambda: tir.min(tir.max(a, b), a), lambda: tir.max(a, tir.min(b, a)), lambda: tir.min(tir.min(a, b), b),
    lambda: tir.min(tir.min(tir.min(a, b), c), b), lambda: tir.min(tir.max(a, b), tir.min(b, a)),
    lambda: tir.min(b + a, c + a), lambda: tir.max(a + b, a + c), lambda: tir.min(a - b, a - c),
    lambda: tir.max(b - a, c - a), lambda: tir.max(tir.min(a, b), tir.max(a, b)),
    lambda: tir.max(tir.min(a, b), tir.min(a, c)), lambda: tir.min(tir.floordiv(a, 10), tir.floordiv(b, 10)),
    lambda: tir.max(tir.floordiv(a, -3), tir.floordiv(b, -3)), lambda: tir.max(tir.truncdiv(a, 4), tir.truncdiv(b, 4)),
    lambda: tir.max(a * 3, 9), lambda: tir.min(a * -2, 4), lambda: tir.max(tir.floordiv(a + 3, 4) * 4, a),
    lambda: tir.min(tir.floordiv(a, 4) * 4, a), lambda: tir.max(a, tir.floordiv(a + 1, 4) * 4),
])
def test_min_max_identities_keep_values(make):
    expr = make()
    simple = arith.Analyzer().simplify(expr)
    rng = random.Random(13)
    for _ in range(100):
        env = {v: rng.randint(-20, 20) for v in (a, b, c)}
        assert evaluate_expr(simple, env) == evaluate_expr(expr, env), (expr, simple, env)
