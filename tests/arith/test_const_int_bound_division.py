"""Bounds of divisions whose divisor range crosses or touches zero, of floormod by a divisor of either sign, and of
shift_right / bitwise_and: every value computed on random integers in the variables' bounds lies in the bound."""

import random

import pytest

from kiln import arith, tir
from kiln.arith import ConstIntBound
from kiln.tir.evaluator import evaluate_expr

x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
EXPRS = [tir.truncdiv(x, y), tir.floordiv(x, y), tir.floormod(x, y), tir.truncmod(x, y), tir.shift_right(x, y),
         tir.bitwise_and(x, y)]


@pytest.mark.parametrize("expr", EXPRS, ids=lambda e: type(e).__name__ if not isinstance(e, tir.Call) else e.op.name)
def test_values_lie_in_bound(expr):
    rng = random.Random(7)
    for _ in range(60):
        xl = rng.randint(-40, 40)
        xr = (xl, xl + rng.randint(0, 50))
        if isinstance(expr, tir.Call) and expr.op.name == "tir.shift_right":
            yr = (rng.randint(0, 4), rng.randint(4, 8))
        else:
            yl = rng.randint(-12, 12)
            yr = (yl, yl + rng.randint(0, 20))
        if yr == (0, 0):
            continue
        ana = arith.Analyzer()
        ana.update(x, ConstIntBound(*xr))
        ana.update(y, ConstIntBound(*yr))
        bound = ana.const_int_bound(expr)
        for _ in range(30):
            env = {x: rng.randint(*xr), y: rng.randint(*yr)}
            if env[y] == 0 and not isinstance(expr, tir.Call):
                continue  # a valid program never divides by zero
            value = int(evaluate_expr(expr, env))
            assert bound.min_value <= value <= bound.max_value, (expr, xr, yr, env, bound)


def test_tvm_bounds():
    ana = arith.Analyzer()
    ana.update(x, ConstIntBound(-9, 4))
    ana.update(y, ConstIntBound(-2, 0))
    b = ana.const_int_bound(tir.truncdiv(x, y))
    assert (b.min_value, b.max_value) == (-4, 9)
    a, d = tir.Var("a", "int32"), tir.Var("d", "int32")
    ana.update(a, ConstIntBound(0, 6))
    ana.update(d, ConstIntBound(0, ConstIntBound.POS_INF))
    b = ana.const_int_bound(tir.floordiv(a, d))
    assert (b.min_value, b.max_value) == (0, 6)
