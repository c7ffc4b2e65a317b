"""Constant bounds from constraints on whole terms, through an exact float round trip, and with unbounded ends:
every value the expression takes (enumerated) lies in the bound, and the bound is attained."""

from kiln import arith, tir
from kiln.arith import ConstIntBound
from kiln.tir.evaluator import evaluate_expr

a = tir.Var("a", "int32")


def test_constraint_on_a_term_bounds_that_term_everywhere():
    ana = arith.Analyzer()
    ana.update(a, ConstIntBound(0, 128))
    expr = tir.floormod(a, 58) * 2 - 1
    cond = tir.all(1 <= tir.floormod(a, 58), tir.floormod(a, 58) < 57)
    with ana.constraint_scope(cond):
        b = ana.const_int_bound(expr)
    values = [int(evaluate_expr(expr, {a: v})) for v in range(129) if bool(evaluate_expr(cond, {a: v}))]
    assert (b.min_value, b.max_value) == (min(values), max(values))
    after = ana.const_int_bound(expr)  # the fact ends with its scope
    assert after.min_value == -1


def test_integer_through_an_exact_float_keeps_its_bound():
    x = tir.Var("x", "int8")
    expr = tir.truncmod(x, 3).astype("float32").astype("int32")
    b = arith.Analyzer().const_int_bound(expr)
    values = [int(evaluate_expr(expr, {x: v})) for v in range(-128, 128)]
    assert (b.min_value, b.max_value) == (min(values), max(values))


def test_unbounded_ends_stay_unbounded():
    ana = arith.Analyzer()
    y = tir.Var("y", "int32")
    ana.update(a, ConstIntBound(ConstIntBound.NEG_INF, 4))
    ana.update(y, ConstIntBound(-8, 2))
    b = ana.const_int_bound(a * y)
    assert (b.min_value, b.max_value) == (ConstIntBound.NEG_INF, ConstIntBound.POS_INF)
    n = tir.SizeVar("n", "int32")
    assert ana.const_int_bound(n).max_value == ConstIntBound.POS_INF
    assert ana.const_int_bound(n).min_value == 0
    assert ana.const_int_bound(tir.max(a, y)).max_value == 4
