"""The exhaustive checks themselves: a true condition passes, a false one names a point where it fails, and a
transformation that is not a bijection is refused."""

import pytest

from kiln import arith, ir, tir
from kiln.testing import check_bool_expr_is_true, check_int_constraints_trans_consistency

x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
R = {x: ir.Range(-5, 6), y: ir.Range(0, 4)}


def test_bool_expr_checked_on_every_point():
    check_bool_expr_is_true(tir.floordiv(x, 2) * 2 + tir.floormod(x, 2) == x, R)
    check_bool_expr_is_true(x < 3, R, cond=x * 2 < 5)
    with pytest.raises(AssertionError, match="x"):
        check_bool_expr_is_true(tir.truncdiv(x, 2) * 2 == x - tir.floormod(x, 2), R)


def test_a_wrong_transform_is_refused():
    n = tir.Var("n", "int32")
    src = arith.IntConstraints([x], {x: ir.Range(0, 6)}, [])
    dst = arith.IntConstraints([n], {n: ir.Range(0, 3)}, [])
    halving = arith.IntConstraintsTransform(src, dst, {x: n * 2}, {n: tir.floordiv(x, 2)})
    with pytest.raises(AssertionError):
        check_int_constraints_trans_consistency(halving)
    good = arith.IntConstraintsTransform(src, arith.IntConstraints([n], {n: ir.Range(-5, 1)}, []), {x: 0 - n},
                                         {n: 0 - x})
    check_int_constraints_trans_consistency(good)
