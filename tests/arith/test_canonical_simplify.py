"""Tests of kiln/arith/canonical_simplify.py and canonical_form.py (``Analyzer.canonical_simplify``, TVM's canonical
simplifier): the forms it prints, and random index expressions keeping their value."""

import random

import pytest

from kiln import arith, tir
from kiln.arith.canonical_form import FLOOR, SplitExpr, SumExpr
from kiln.arith.canonical_simplify import prod_div_simplify
from kiln.arith.const_int_bound import POS_INF
from kiln.error import KilnError
from kiln.tir import expr as E
from kiln.tir.evaluator import evaluate_expr

x, y, z = tir.Var("x", "int32"), tir.Var("y", "int32"), tir.Var("z", "int32")


def same(a, b):
    return arith.expr_key(a) == arith.expr_key(tir.convert(b))


def canon(expr, **ranges):
    ana = arith.Analyzer()
    for name, (lo, hi) in ranges.items():
        ana.bind({"x": x, "y": y, "z": z}[name], tir.Range(lo, hi))
    return ana.canonical_simplify(expr)


def test_sum_order_positive_terms_then_constant_then_negative():
    assert same(canon(y * 2 + 7 - x * 5 + x * 2), y * 2 + 7 - x * 3)
    assert same(canon(x * 2 - x * 2 + 3), 3)
    assert same(canon(1 + (x + 2) * 3), x * 3 + 7)


def test_split_terms_merge_back():
    assert same(canon(tir.floordiv(x, 8) * 8 + tir.floormod(x, 8)), x)
    assert same(canon(tir.floordiv(x, 12) * 12 + tir.floordiv(tir.floormod(x, 12), 4) * 4 + tir.floormod(x, 4)), x)
    assert same(canon(tir.floormod(x * 6, 4)), tir.floormod(x * 6, 4))
    assert same(canon(tir.floormod(x * 8, 32)), tir.floormod(x, 4) * 8)


def test_division_of_a_sum_separates_the_divisible_part():
    assert same(canon(tir.floordiv(x * 6 + y * 3 + 5, 3)), x * 2 + y + 1)
    assert same(canon(tir.floordiv(x * 4 + y, 4), y=(0, 4)), x)
    assert same(canon(tir.floormod(x * 4 + y, 4), y=(0, 4)), y)


def test_truncated_division_needs_non_negative_parts():
    assert same(canon(tir.truncdiv(x * 4 + 1, 4)), tir.truncdiv(x * 4 + 1, 4))
    assert same(canon(tir.truncdiv(x * 4 + 1, 4), x=(0, 100)), x)


def test_comparison_divides_out_a_common_scale():
    assert same(canon(x * 4 + y < 8, y=(0, 4)), x < 2)


def test_product_division_cancels_shared_factors():
    lhs, rhs, common = prod_div_simplify(x * y * 6, y * 4)
    assert same(lhs, x * 3) and same(rhs, 2) and same(common, y * 2)
    assert prod_div_simplify(x * 3, tir.const(4)) is None


def test_cast_moves_into_the_sum_when_it_cannot_overflow():
    i, j = tir.Var("i", "int64"), tir.Var("j", "int64")
    ana = arith.Analyzer()
    ana.bind(i, tir.Range(tir.const(0, "int64"), tir.const(10, "int64")))
    ana.bind(j, tir.Range(tir.const(0, "int64"), tir.const(10, "int64")))
    out = ana.canonical_simplify(tir.Cast("int32", i + j + 1) - tir.Cast("int32", i))
    assert same(out, tir.Cast("int32", j) + 1)


def test_forms_normalize():
    s = SumExpr("int32", [SplitExpr(x, 1, 8, 2, FLOOR)], 3)
    assert same(s.normalize(), tir.floormod(x, 8) * 2 + 3)
    s.add_split(SplitExpr(x, 8, POS_INF, 16, FLOOR), 1)
    assert same(s.normalize(), x * 2 + 3)


# ---- random expressions ------------------------------------------------------------------------------------------
RANGES = {x: (-12, 30), y: (0, 20), z: (1, 9)}


def _expr(rng, depth):
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([x, y, z]) if rng.random() < 0.7 else tir.const(rng.randint(-5, 9))
    a = _expr(rng, depth - 1)
    c = tir.const(rng.choice([2, 3, 4, 6, 8, 16]))
    kind = rng.randrange(8)
    if kind < 2:
        return (E.Add, E.Sub)[kind](a, _expr(rng, depth - 1))
    if kind < 4:
        return E.Mul(a, tir.const(rng.choice([-3, -1, 2, 4, 5])))
    return (E.FloorDiv, E.FloorMod, E.Div, E.Mod)[kind - 4](a, c)


@pytest.mark.parametrize("seed", range(4))
def test_random_expressions_keep_their_value(seed):
    rng = random.Random(seed)
    for _ in range(50):
        ana = arith.Analyzer()
        bounded = rng.random() < 0.6
        if bounded:
            for var, (lo, hi) in RANGES.items():
                ana.bind(var, tir.Range(lo, hi))
        expr = _expr(rng, 4) if rng.random() < 0.8 else E.LT(_expr(rng, 3), _expr(rng, 2))
        simple = ana.canonical_simplify(expr)
        for _ in range(10):
            env = {v: rng.randrange(lo, hi) if bounded else rng.randint(-200, 200) for v, (lo, hi) in RANGES.items()}
            try:
                before = int(evaluate_expr(expr, env))
            except KilnError:  # division by zero on this assignment
                continue
            assert before == int(evaluate_expr(simple, env)), f"{expr} -> {simple} at {env}"


def test_constraint_on_a_sum_bounds_it():
    ana = arith.Analyzer()
    with ana.constraint_scope(x * 4 + y >= 1000):
        out = ana.canonical_simplify(tir.truncmod(x * 4 + y - 1000, 24))
    assert same(out, tir.truncmod(x * 4 + y - 16, 24))  # 1000 = 41 * 24 + 16: the same residue
    env = {x: 300, y: 7}
    assert int(evaluate_expr(out, env)) == (300 * 4 + 7 - 1000) % 24


def test_reduction_without_axes_is_its_step_and_axes_have_domains():
    from kiln import te

    k = te.reduce_axis((0, 8), name="k")
    A = te.placeholder((8,), name="A")
    ana = arith.Analyzer()
    assert same(ana.canonical_simplify(te.sum(A[2], [])), A[2])
    out = ana.canonical_simplify(te.sum(tir.Select(k < 8, k * 2, 0), k))
    assert same(out.source[0], k.var * 2)


def test_reduction_drops_combiner_components_the_result_does_not_use():
    from kiln import te

    k = te.reduce_axis((0, 8), name="k")
    A = te.placeholder((8,), name="A")
    pair = te.comm_reducer(lambda a, b: (a[0] + b[0], a[1] * b[1]),
                           lambda t0, t1: (tir.const(0, t0), tir.const(1, t1)))
    out = arith.Analyzer().canonical_simplify(pair((A[k], A[7 - k]), k)[1])
    assert len(out.source) == 1 and out.value_index == 0 and same(out.source[0], A[7 - k])
