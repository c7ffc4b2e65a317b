"""Tests of kiln/arith/rewrite_rules.py and rewrite_simplify.py: each rule, then random-expression equivalence."""

import random

import numpy as np
import pytest

from kiln import arith, tir
from kiln.tir.evaluator import evaluate_expr

x, y, z = tir.Var("x", "int32"), tir.Var("y", "int32"), tir.Var("z", "int32")


def _ana(**ranges):
    ana = arith.Analyzer()
    for name, (lo, hi) in ranges.items():
        ana.bind({"x": x, "y": y, "z": z}[name], tir.Range(lo, hi))
    return ana


def check(before, expected, ana=None):
    ana = ana or arith.Analyzer()
    got = ana.simplify(before)
    assert arith.expr_key(got) == arith.expr_key(tir.convert(expected)), f"{before} -> {got}, expected {expected}"


def test_fold_constants():
    check(tir.Add(tir.const(2), tir.const(3)), 5)
    check(tir.Mul(x, tir.const(0)), 0)
    check(tir.FloorDiv(tir.const(-7), tir.const(2)), -4)


def test_canonicalize_linear():
    check(x * 4 + x * 2, x * 6)
    check(x - x, 0)
    check(x + 3 - x, 3)
    check((x + 1) + (y + 2) - 1, x + y + 2)
    check(tir.Mul(tir.const(4), x), x * 4)
    check(0 - x, x * -1)
    check(5 - x - 2, 3 - x)


def test_div_mod_identity():
    check(tir.floordiv(x, 8) * 8 + tir.floormod(x, 8), x)
    check((tir.floordiv(x, 8) * 8 + tir.floormod(x, 8)) * 2 + y, x * 2 + y)


def test_fold_vector_arith():
    check(tir.Ramp(x, 1, 4) + tir.Broadcast(y, 4), tir.Ramp(x + y, 1, 4))
    check(tir.Ramp(x, 1, 4) * tir.Broadcast(tir.const(2), 4), tir.Ramp(x * 2, 2, 4))
    check(tir.Broadcast(x, 4) + tir.Broadcast(y, 4), tir.Broadcast(x + y, 4))
    check(tir.Ramp(x, 1, 4) + tir.Ramp(y, 2, 4), tir.Ramp(x + y, 3, 4))


def test_simplify_floordiv():
    ana = _ana(x=(0, 16))
    check(tir.floordiv(x, 16), 0, ana)
    check(tir.floordiv(x + 16, 16), 1, ana)
    check(tir.floordiv(tir.floordiv(y, 4), 8), tir.floordiv(y, 32))
    check(tir.floordiv(y * 8 + z * 4 + 3, 4), y * 2 + z)
    check(tir.floordiv(y * 8 + z, 8), y + tir.floordiv(z, 8))
    check(tir.floordiv(y * 4 + 2, 8), tir.floordiv(y, 2))
    check(tir.floordiv(x * 4, 8), tir.floordiv(x, 2), ana)


def test_simplify_floormod():
    ana = _ana(x=(0, 16))
    check(tir.floormod(x, 16), x, ana)
    check(tir.floormod(x + 16, 16), x, ana)
    check(tir.floormod(y * 8 + z * 4 + 3, 4), 3)
    check(tir.floormod(y * 8 + z, 8), tir.floormod(z, 8))
    check(tir.floormod(tir.floormod(y, 16), 4), tir.floormod(y, 4))
    check(tir.floormod(y * 4 + 1, 8), tir.floormod(y, 2) * 4 + 1)
    check(tir.floormod(y, 1), 0)


def test_trunc_to_floor_when_non_negative():
    ana = _ana(x=(0, 100))
    check(tir.truncdiv(x, 4), tir.floordiv(x, 4), ana)
    check(tir.truncmod(x, 4), tir.floormod(x, 4), ana)
    got = arith.Analyzer().simplify(tir.truncdiv(y, 4))
    assert isinstance(got, tir.Div)  # y may be negative: truncation and flooring differ


def test_vector_div_mod():
    ana = _ana(x=(0, 10))
    check(tir.floordiv(tir.Ramp(x * 8, 1, 4), tir.Broadcast(tir.const(8), 4)), tir.Broadcast(x, 4), ana)
    check(tir.floormod(tir.Ramp(x * 8, 1, 4), tir.Broadcast(tir.const(8), 4)), tir.Ramp(tir.const(0), 1, 4), ana)
    got = ana.simplify(tir.floordiv(tir.Ramp(x * 8 + 6, 1, 4), tir.Broadcast(tir.const(8), 4)))
    assert isinstance(got, tir.FloorDiv)  # crosses a block boundary: left alone


def test_min_max():
    check(tir.min(x + 1, x + 3), x + 1)
    check(tir.max(x + 1, x + 3), x + 3)
    check(tir.min(x, x), x)
    check(tir.Min(tir.Min(x, tir.const(4)), tir.const(2)), tir.Min(x, tir.const(2)))
    ana = _ana(x=(0, 8))
    check(tir.min(x, 100), x, ana)
    check(tir.max(x, -1), x, ana)


def test_compare():
    ana = _ana(x=(0, 16))
    check(x < 16, True, ana)
    check(x >= 16, False, ana)
    check(x + 1 < y + 1, x < y)
    check(y * 4 < 8, y < 2)
    check(y * 4 + 1 <= 9, y <= 2)
    check(y > z, z < y)
    check((y * 2).equal(3), False)
    check((y * 2 + 2).equal(4), y.equal(1))


def test_logic():
    check(tir.And(y < 3, tir.const(True)), y < 3)
    check(tir.Or(y < 3, tir.const(True)), True)
    check(tir.And(y < 3, tir.Not(y < 3)), False)
    check(tir.Not(y < 3), tir.LE(tir.const(3), y))
    check(tir.Not(tir.Not(y < 3)), y < 3)
    check(tir.Not(tir.EQ(y, z)), tir.NE(y, z))


def test_select_cast_call():
    check(tir.Select(tir.const(True), y, z), y)
    check(tir.Select(y < 3, z, z), z)
    check(tir.Cast("int32", y), y)
    check(tir.Cast("float32", tir.const(3)), tir.const(3.0))
    f = tir.Var("f", "float32")
    check(tir.if_then_else(y < 3, f, f), f)
    ana = _ana(x=(0, 4))
    check(tir.Call("float32", "tir.if_then_else", [x < 4, f, tir.const(0.0)]), f, ana)


def test_let_binding():
    v = tir.Var("v", "int32")
    check(tir.Let(v, tir.const(3), v + 1), 4)


# ---- random equivalence ---------------------------------------------------------------------------------------
def _random_expr(rng, depth):
    if depth == 0 or rng.random() < 0.2:
        choice = rng.random()
        if choice < 0.6:
            return rng.choice([x, y, z])
        return tir.const(rng.randint(-8, 8))
    a = _random_expr(rng, depth - 1)
    b = _random_expr(rng, depth - 1)
    c = rng.choice([1, 2, 3, 4, 8, 16])
    kind = rng.randrange(11)
    if kind == 0:
        return tir.Add(a, b)
    if kind == 1:
        return tir.Sub(a, b)
    if kind == 2:
        return tir.Mul(a, tir.const(rng.randint(-4, 4)))
    if kind == 3:
        return tir.FloorDiv(a, tir.const(c))
    if kind == 4:
        return tir.FloorMod(a, tir.const(c))
    if kind == 5:
        return tir.Min(a, b)
    if kind == 6:
        return tir.Max(a, b)
    if kind == 7:
        return tir.Select(tir.LT(a, b), a, b)
    if kind == 8:
        return tir.Div(a, tir.const(c))
    if kind == 9:
        return tir.Mod(a, tir.const(c))
    return tir.Mul(a, b)


def _random_cond(rng, depth):
    a, b = _random_expr(rng, depth), _random_expr(rng, depth)
    cmp = rng.choice([tir.LT, tir.LE, tir.GT, tir.GE, tir.EQ, tir.NE])(a, b)
    if rng.random() < 0.3:
        other = rng.choice([tir.LT, tir.EQ])(_random_expr(rng, 1), _random_expr(rng, 1))
        return rng.choice([tir.And, tir.Or])(cmp, other)
    return cmp


@pytest.mark.parametrize("seed", range(6))
def test_random_expressions_keep_their_value(seed):
    rng = random.Random(seed)
    ranges = {x: (-20, 41), y: (0, 33), z: (1, 9)}
    for _ in range(60):
        ana = arith.Analyzer()
        for var, (lo, extent) in ranges.items():
            ana.bind(var, tir.Range.from_min_extent(lo, extent))
        expr = _random_expr(rng, 4) if rng.random() < 0.75 else _random_cond(rng, 2)
        simple = ana.simplify(expr)
        for _ in range(12):
            env = {var: rng.randrange(lo, lo + extent) for var, (lo, extent) in ranges.items()}
            want, got = evaluate_expr(expr, env), evaluate_expr(simple, env)
            assert np.array_equal(np.asarray(want), np.asarray(got)), f"{expr} -> {simple} at {env}"


@pytest.mark.parametrize("seed", range(3))
def test_random_expressions_unbounded_vars(seed):
    rng = random.Random(100 + seed)
    for _ in range(60):
        expr = _random_expr(rng, 3)
        simple = arith.Analyzer().simplify(expr)
        for _ in range(10):
            env = {var: rng.randint(-1000, 1000) for var in (x, y, z)}
            want, got = evaluate_expr(expr, env), evaluate_expr(simple, env)
            assert np.array_equal(np.asarray(want), np.asarray(got)), f"{expr} -> {simple} at {env}"


def test_exact_trunc_division():
    check(tir.truncdiv(x * 8 - y * 8 + 8, 4), x * 2 - y * 2 + 2)
    check(tir.truncmod(x * 8 + 4, 4), 0)


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "int8"])
def test_wrapping_types_are_not_canonicalized(dtype):
    """``0 - u`` in uint16 has no form ``u * -1`` (-1 is no uint16); wrapping types are data, not indices."""
    u = tir.Var("u", dtype)
    before = tir.Sub(tir.const(0, dtype), u)
    after = arith.Analyzer().simplify(before)
    for value in (0, 1, 7):
        assert evaluate_expr(after, {u: value}) == evaluate_expr(before, {u: value})


def test_data_comparisons_are_not_rearranged_into_overflow():
    """Moving terms across a comparison assumes the sums do not wrap; for values loaded from a tensor that is not
    known, so ``A[0] * A[1] > -A[2]`` keeps its sides (as ``0 < A[2] + A[0] * A[1]`` it overflowed: fuzz seed
    9076); index arithmetic over variables is still normalized."""
    A = tir.decl_buffer((3,), "int32", "A")
    a, b, c = (tir.BufferLoad(A, [k]) for k in range(3))
    out = arith.Analyzer().simplify(tir.GT(a * b, -c))
    assert isinstance(out, tir.LT) and isinstance(out.b, tir.Mul)  # -A[2] < A[0] * A[1]
    check(x + 1 < y + 1, x < y)


def test_reshape_digits_merge_back():
    ana = _ana(x=(0, 24))
    e = x * 3 + y
    flat = tir.floordiv(e, 12) * 12 + tir.floordiv(tir.floormod(e, 12), 4) * 4 + tir.floormod(e, 4)
    assert arith.expr_key(ana.simplify(flat)) == arith.expr_key(ana.simplify(e))
    # the merge needs the inner divisor to divide the outer one: 5 does not divide 12
    other = tir.floordiv(tir.floormod(x, 12), 5) * 5 + tir.floormod(x, 5)
    assert type(arith.Analyzer().simplify(other)) is tir.Add
    for v in range(-30, 30):
        assert int(evaluate_expr(ana.simplify(tir.floordiv(tir.floormod(x, 12), 4) * 4 + tir.floormod(x, 4)),
                                 {x: v})) == v % 12
