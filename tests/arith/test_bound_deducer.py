"""deduce_bound: every value in the deduced set satisfies the condition for every value of the relaxed variables,
and the first value beyond each finite end does not (for some value of them)."""

import itertools

import pytest

from kiln import arith, tir
from kiln.arith.int_set import IntervalSet
from kiln.tir.evaluator import evaluate_expr

a, b, c = (tir.Var(n, "int32") for n in "abc")
B = IntervalSet(2, 5)
CONDS = [
    a * 4 + b < 17, b + a * -3 >= 2, (b * 3 + a * 4) * 2 <= 63, 17 < a * 4 - b, a // 8 > 3, a // 8 <= -2,
    b * 3 + a // 8 < 63, a // -8 >= 3, 10 - a > b, a * 3 == 12,
]


def _holds(cond, va, vb):
    return bool(evaluate_expr(cond, {a: va, b: vb}))


def _end(value):
    return None if str(value) in ("pos_inf", "neg_inf") else int(arith.Analyzer().simplify(value))


@pytest.mark.parametrize("cond", CONDS, ids=str)
def test_deduced_set_is_exactly_where_the_condition_holds(cond):
    s = arith.deduce_bound(a, cond, {b: B}, {b: B})
    assert not s.is_nothing()
    lo, hi = _end(s.min_value), _end(s.max_value)
    bs = range(2, 6)
    inside = range(lo if lo is not None else (hi or 0) - 50, (hi if hi is not None else (lo or 0) + 50) + 1)
    for va, vb in itertools.product(inside, bs):
        assert _holds(cond, va, vb), (va, vb)
    if lo is not None:
        assert not all(_holds(cond, lo - 1, vb) for vb in bs)
    if hi is not None:
        assert not all(_holds(cond, hi + 1, vb) for vb in bs)


@pytest.mark.parametrize("cond", [tir.max(a, 3) < 10, a * a < 10, a + b, a * c < 10, a // 8 == 3, 4 * a == 10],
                         ids=str)
def test_unsupported_conditions_give_the_empty_set(cond):
    assert arith.deduce_bound(a, cond, {b: B}, {}).is_nothing()


def test_symbolic_equality_uses_the_hint_for_the_sign():
    s = arith.deduce_bound(a, b * a == b, {b: B}, {})
    assert int(s.min_value) == int(s.max_value) == 1
