"""narrow_predicate_expression: the result is free of the parameters and implies the condition for every value of
them in their ranges (checked by evaluating both on random integers)."""

import itertools

import numpy as np
import pytest

from kiln import arith, tir
from kiln.error import TIRError
from kiln.tir.evaluator import evaluate_expr
from kiln.tir.stmt_functor import post_order_visit

i, j, n = tir.Var("i", "int32"), tir.Var("j", "int32"), tir.Var("n", "int32")
CONDITIONS = [
    i > n, i < n, i <= n, n >= i, i == n, n != i, i // 4 > n, (i + n) // 4 == 0, i + n < 10, i - n < 10,
    tir.Not(i < n), tir.all(i < n, j > n), tir.any(i + j < n, j == n), i % 8 == n,
]
# Not ``i // n == 0``: TVM narrows a divisor in the same direction as the quotient, which does not imply the
# original (i = 4 passes ``i // 7 <= 0 && 0 <= i`` but 4 // 1 != 0); kiln keeps TVM's result.


def _uses(expr, var):
    found = []
    post_order_visit(expr, lambda e: found.append(e) if e is var else None)
    return bool(found)


@pytest.mark.parametrize("cond", CONDITIONS, ids=str)
def test_narrowed_condition_implies_original(cond):
    narrowed = arith.narrow_predicate_expression(cond, {n: tir.Range(1, 8)})
    assert not _uses(narrowed, n)
    rng = np.random.default_rng(0)
    for iv, jv in rng.integers(-12, 20, size=(40, 2)):
        env = {i: int(iv), j: int(jv)}
        if evaluate_expr(narrowed, env):
            for nv in range(1, 8):
                assert evaluate_expr(cond, {**env, n: nv}), (iv, jv, nv)


def test_exact_forms():
    assert str(arith.narrow_predicate_expression(i < n, {n: tir.Range(0, 8)})) == "i < 0"
    assert str(arith.narrow_predicate_expression(i > n, {n: tir.Range(0, 8)})) == "i > 7"
    buf = tir.decl_buffer((16,), "int32", "buf")
    assert arith.narrow_predicate_expression(buf.vload(i) > 0, {n: tir.Range(0, 8)}).value == 0
    for a, b in itertools.product([i], [n]):
        assert arith._ffi_api.NarrowPredicateExpression(a <= b, {b: tir.Range(2, 3)}).b.value == 2


def test_non_boolean_is_refused():
    with pytest.raises(TIRError, match="boolean"):
        arith.narrow_predicate_expression(i + n, {n: tir.Range(0, 8)})
