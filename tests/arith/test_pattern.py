"""Tests of kiln/arith/pattern.py: matching, evaluation, constant folding as TVM's TryConstFold, rules."""

import random

import pytest

from kiln import arith, tir
from kiln.arith import pattern as P
from kiln.arith.pattern_simplify import PatternSimplifier
from kiln.error import TIRError
from kiln.tir import expr as E

x, y = P.pvars("x y")
(c1,) = P.pconsts("c1")
a, b = tir.Var("a", "int32"), tir.Var("b", "int32")


def test_match_binds_placeholders():
    m = ((x + y) * c1).match((a + b) * 3)
    assert m.x is a and m.y is b and m.c1.value == 3


def test_repeated_placeholder_needs_equal_operands():
    pat = (x + y) - y
    assert pat.match((a + b) - b) is not None
    assert pat.match((a + b) - a) is None
    assert pat.match((a + (b + 1)) - (b + 1)) is not None  # structurally equal, different objects


def test_constant_placeholder_matches_only_constants():
    assert (x * c1).match(a * b) is None
    assert (x * c1).match(a * 2) is not None


def test_number_in_pattern_matches_its_value():
    pat = P.floordiv(x, 2)
    assert pat.match(tir.FloorDiv(a, tir.const(2))) is not None
    assert pat.match(tir.FloorDiv(a, tir.const(3))) is None


def test_number_on_left_of_comparison_keeps_its_side():
    e = P.lt(0, x).eval(P.Match(x=a))
    assert type(e) is E.LT and e.a.value == 0 and e.b is a


def test_eval_folds_constants_and_keeps_shape():
    m = ((x + c1) * 2).match((a + 3) * 2)
    assert arith.expr_key((x * 2 + c1 * 2).eval(m)) == arith.expr_key(E.Add(E.Mul(a, tir.const(2)), tir.const(6)))
    assert (x + 0).eval(m) is a  # x + 0 folds, as TryConstFold<Add>
    assert type((0 - x).eval(m)) is E.Sub  # 0 - x does not


def test_number_takes_dtype_of_neighbour():
    v = tir.Var("v", "int64")
    e = (x + 1).eval(P.Match(x=v))
    assert e.dtype == "int64" and e.b.dtype == "int64"


def test_vector_patterns():
    r = tir.Ramp(a, 1, 4)
    m = P.ramp(x, y, P.PVar("lanes")).match(r)
    assert m.x is a and m.lanes == 4
    assert P.broadcast(x, P.PVar("lanes")).match(r) is None


@pytest.mark.parametrize("kind", [E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max, E.LT,
                                  E.LE, E.GT, E.GE, E.EQ, E.NE])
def test_try_const_fold_matches_python(kind):
    from kiln.tir.evaluator import evaluate_expr

    rng = random.Random(kind.__name__)
    for _ in range(50):
        p, q = rng.randint(-50, 50), rng.choice([v for v in range(-9, 10) if v])
        folded = P.try_const_fold(kind, tir.const(p), tir.const(q))
        assert type(folded) is E.IntImm
        assert int(folded.value) == int(evaluate_expr(kind(tir.const(p), tir.const(q))))


def test_try_const_fold_identities():
    zero, one = tir.const(0), tir.const(1)
    assert P.try_const_fold(E.Add, a, zero) is a and P.try_const_fold(E.Add, zero, a) is a
    assert P.try_const_fold(E.Sub, zero, a) is None
    assert P.try_const_fold(E.Mul, a, one) is a and P.try_const_fold(E.Mul, a, zero) is zero
    assert P.try_const_fold(E.FloorMod, a, one).value == 0
    assert P.try_const_fold(E.Div, zero, a) is zero
    assert P.try_const_fold(E.Min, a, b) is None and P.try_const_fold(E.Min, a, a) is a
    true = tir.const(True)
    cond = a < b
    assert P.try_const_fold(E.And, true, cond) is cond and P.try_const_fold(E.Or, true, cond) is true


def test_try_const_fold_division_by_zero_raises():
    with pytest.raises(TIRError, match="division by zero"):
        P.try_const_fold(E.FloorDiv, tir.const(3), tir.const(0))


def test_rewrite_rule_with_alternatives_and_condition():
    rule = P.rewrite([x * c1 + x, x + x * c1], x * (c1 + 1), lambda m, s: m.c1.value > 0)
    s = PatternSimplifier(arith.Analyzer())
    assert arith.expr_key(rule(a + a * 3, s)) == arith.expr_key(a * 4)
    assert rule(a * -3 + a, s) is None
    assert rule(a + b, s) is None


def test_computed_pattern_cannot_be_matched():
    with pytest.raises(TypeError):
        P.zero_like(x).match(a)
