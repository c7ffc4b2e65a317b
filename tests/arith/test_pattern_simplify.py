"""Tests of kiln/arith/pattern_simplify.py (``Analyzer.rewrite_simplify``, TVM's rewrite simplifier): result forms
TVM users see, facts from bounds and constraints, and random expressions keeping their value."""

import random

import numpy as np
import pytest

from kiln import arith, tir
from kiln.error import KilnError
from kiln.tir import expr as E
from kiln.tir.evaluator import evaluate_expr

x, y, z = tir.Var("x", "int32"), tir.Var("y", "int32"), tir.Var("z", "int32")


def same(a, b):
    return arith.expr_key(a) == arith.expr_key(tir.convert(b))


def rw(expr, *constraints, **ranges):
    ana = arith.Analyzer()
    for name, (lo, hi) in ranges.items():
        ana.bind({"x": x, "y": y, "z": z}[name], tir.Range(lo, hi))
    if not constraints:
        return ana.rewrite_simplify(expr)
    with ana.constraint_scope(tir.all(*constraints)):
        return ana.rewrite_simplify(expr)


def test_forms_follow_the_rules_not_a_canonical_order():
    assert same(rw(x * 3 + x), x * 4)
    assert same(rw((x + 4) - 7), x + -3)  # a constant subtracted becomes an added negative constant
    assert same(rw(x + 5 - y), x - y + 5)
    assert same(rw(tir.min(x + 2, x + 9)), x + 2)
    assert same(rw(tir.max(x, y) + tir.min(y, x)), x + y)
    assert same(rw(tir.floordiv(x * 6 + 4, 2)), x * 3 + 2)


def test_bounds_decide_comparisons_and_divisions():
    assert same(rw(x < 20, x=(0, 10)), True)
    assert same(rw(tir.floordiv(x * 4 + 3, 16), x=(0, 4)), 0)  # the residue part's bounds fix it
    assert same(rw(tir.floordiv(x, 16), x=(0, 16)), tir.floordiv(x, 16))  # no rule for a bare floordiv
    assert same(rw(tir.floormod(x, 16), x=(0, 16)), x)
    assert same(rw(tir.min(x, y), x=(0, 4), y=(4, 9)), x)


def test_comparison_moves_constants_and_divides_common_factor():
    assert same(rw(x + 3 < y + 5), x < y + 2)
    assert same(rw(x + 3 < y + 4), x <= y)
    assert same(rw(x * 4 < y * 4), x < y)
    assert same(rw(x * 6 < 13), x < 3)


def test_literal_constraint_decides_an_expression_and_its_negation():
    assert same(rw(x < y, x < y), True)
    assert same(rw(y <= x, x < y), False)
    assert same(rw(tir.Select(x < y, y - x, z), x < y), y - x)


def test_select_branch_sees_its_condition():
    assert same(rw(tir.Select(x < 5, tir.min(x, 5), 7)), tir.Select(x < 5, x, 7))


def test_trivial_let_is_substituted():
    v = tir.Var("v", "int32")
    assert same(rw(tir.Let(v, tir.const(3), v + x - 3)), x)


def test_shared_expression_through_if_then_else():
    e = tir.if_then_else(x < 4, tir.if_then_else(y < 2, x, 0), 0)
    out = rw(e)
    assert type(out) is E.Call and type(out.args[0]) is E.And


def test_extension_constraints_on_boolean_branches():
    ana = arith.Analyzer()
    ana.enabled_extensions = arith.Extension.ApplyConstraintsToBooleanBranches
    assert same(ana.rewrite_simplify(tir.And(x < 5, x < 10)), x < 5)


def test_division_by_zero_constant_raises():
    with pytest.raises(KilnError, match="division by zero"):
        arith.Analyzer().rewrite_simplify(tir.FloorDiv(tir.Ramp(1, 1, 2), tir.Broadcast(tir.const(0), 2)))


def test_rewrite_and_simplify_are_separate_engines():
    ana = arith.Analyzer()
    assert same(ana.rewrite_simplify(x - 1 + y), x + y + -1)
    assert same(ana.simplify(x - 1 + y), x + y - 1)


# ---- random expressions ------------------------------------------------------------------------------------------
def _expr(rng, depth):
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([x, y, z]) if rng.random() < 0.65 else tir.const(rng.randint(-6, 9))
    a, b = _expr(rng, depth - 1), _expr(rng, depth - 1)
    c = tir.const(rng.choice([-3, 2, 3, 4, 8]))
    kind = rng.randrange(12)
    if kind < 3:
        return (E.Add, E.Sub, E.Mul)[kind](a, b if kind != 2 else c)
    if kind < 7:
        return (E.FloorDiv, E.FloorMod, E.Div, E.Mod)[kind - 3](a, c)
    if kind < 9:
        return (E.Min, E.Max)[kind - 7](a, b)
    if kind == 9:
        return E.Select(_cond(rng, 1), a, b)
    return E.Add(a, b) if kind == 10 else E.Sub(E.Mul(a, c), b)


def _cond(rng, depth):
    c = rng.choice([E.LT, E.LE, E.GT, E.GE, E.EQ, E.NE])(_expr(rng, depth), _expr(rng, depth))
    r = rng.random()
    if r < 0.2:
        return E.And(c, _cond(rng, 0))
    if r < 0.35:
        return E.Or(c, _cond(rng, 0))
    return E.Not(c) if r < 0.45 else c


RANGES = {x: (-10, 21), y: (0, 17), z: (1, 9)}


def _env(rng):
    return {v: rng.randrange(lo, hi) for v, (lo, hi) in RANGES.items()}


def _check(expr, simple, env):
    try:
        before = int(evaluate_expr(expr, env))
    except KilnError:  # division by zero on this assignment
        return
    assert before == int(evaluate_expr(simple, env)), f"{expr} -> {simple} at {env}"


@pytest.mark.parametrize("seed", range(4))
def test_random_expressions_keep_their_value(seed):
    rng = random.Random(seed)
    for _ in range(50):
        ana = arith.Analyzer()
        for var, (lo, hi) in RANGES.items():
            ana.bind(var, tir.Range(lo, hi))
        expr = _expr(rng, 3) if rng.random() < 0.6 else _cond(rng, 2)
        simple = ana.rewrite_simplify(expr)
        for _ in range(10):
            _check(expr, simple, _env(rng))


@pytest.mark.parametrize("seed", range(3))
def test_random_expressions_under_a_constraint(seed):
    rng = random.Random(50 + seed)
    for _ in range(40):
        ana = arith.Analyzer()
        for var, (lo, hi) in RANGES.items():
            ana.bind(var, tir.Range(lo, hi))
        constraint = _cond(rng, 1)
        expr = _expr(rng, 3) if rng.random() < 0.5 else _cond(rng, 2)
        with ana.constraint_scope(constraint):
            simple = ana.rewrite_simplify(expr)
        for _ in range(60):
            env = _env(rng)
            try:
                holds = bool(evaluate_expr(constraint, env))
            except KilnError:
                continue
            if holds:
                _check(expr, simple, env)


def test_random_vector_expressions():
    rng = random.Random(7)
    for _ in range(40):
        base, stride = _expr(rng, 2), tir.const(rng.randint(0, 3))
        r = tir.Ramp(base, stride, 4)
        c = tir.Broadcast(tir.const(rng.choice([2, 4, 8])), 4)
        other = tir.Broadcast(_expr(rng, 1), 4)
        expr = rng.choice([E.FloorDiv(r, c), E.FloorMod(r, c), E.Add(r, other), E.Sub(other, r), E.Mul(r, c)])
        ana = arith.Analyzer()
        for var, (lo, hi) in RANGES.items():
            ana.bind(var, tir.Range(lo, hi))
        simple = ana.rewrite_simplify(expr)
        env = _env(rng)
        assert np.array_equal(evaluate_expr(expr, env), evaluate_expr(simple, env)), f"{expr} -> {simple}"


def test_cache_of_simplified_constraints_keeps_only_open_scopes(monkeypatch):
    from kiln.arith import pattern_simplify

    monkeypatch.setattr(pattern_simplify, "LITERAL_CACHE_LIMIT", 3)
    ana = arith.Analyzer()
    for k in range(10):
        with ana.constraint_scope(x < y + k):
            assert same(ana.rewrite_simplify(x < y + k), True)
    with ana.constraint_scope(x < y):
        ana.rewrite_simplify(x < y)
        assert len(ana._pattern_simplifier._literals) <= 5
