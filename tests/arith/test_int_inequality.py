"""solve_linear_inequalities checked exhaustively on random systems: the conditions it returns hold exactly where
the original relations do, every solution lies in the ranges it reports, and the deskewed system is a bijective
transformation of the original."""

import itertools
import random

import pytest

from kiln import arith, ir, tir
from kiln.arith import _ffi_api
from kiln.testing import check_bool_expr_is_true, check_int_constraints_trans_consistency
from kiln.tir.evaluator import evaluate_expr

OPS = [tir.EQ, tir.LE, tir.LT, tir.GE, tir.GT]


def _system(seed, nvars, nrel, coef=2):
    rng = random.Random(seed)
    xs = [tir.Var(f"x{i}", "int32") for i in range(nvars)]
    rels = []
    for _ in range(nrel):
        lhs = sum((v * rng.randint(-coef, coef) for v in xs), tir.const(rng.randint(-coef, coef)))
        rhs = sum((v * rng.randint(-coef, coef) for v in xs), tir.const(rng.randint(-coef, coef)))
        rels.append(rng.choice(OPS)(lhs, rhs))
    return xs, rels, {v: ir.Range(-6, 7) for v in xs}


@pytest.mark.parametrize("seed", range(10))
def test_solutions_are_preserved(seed):
    xs, rels, ranges = _system(seed, 1 + seed % 3, 1 + seed % 2 + seed % 3 // 2)
    before = tir.all(*rels)
    after = tir.all(*_ffi_api.SolveInequalitiesAsCondition(xs, ranges, rels))
    check_bool_expr_is_true(tir.EQ(before, after), ranges)
    check_int_constraints_trans_consistency(arith.solve_linear_inequalities(rels, xs, ranges, deskew_range=True))
    solved = arith.solve_linear_inequalities(rels, xs, ranges)
    for point in itertools.product(range(-6, 7), repeat=len(xs)):
        env = dict(zip(xs, point, strict=True))
        if not all(bool(evaluate_expr(r, env)) for r in rels):
            continue
        for v, r in solved.ranges.items():
            lo = int(evaluate_expr(r.min, env))
            assert lo <= env[v] < lo + int(evaluate_expr(r.extent, env)), (v, point)


def test_equalities_become_single_values_and_contradictions_false():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    sol = arith.solve_linear_inequalities([x + y >= 10, x - y >= 2, x <= 6], [x, y])
    assert (int(sol.ranges[x].min), int(sol.ranges[x].extent)) == (6, 1)
    assert (int(sol.ranges[y].min), int(sol.ranges[y].extent)) == (4, 1)
    none = arith.solve_linear_inequalities([x * 4 + 5 <= x * 5, x <= 3], [x], {x: ir.Range(-20, 21)})
    assert [bool(r) for r in none.relations] == [False]


def test_group_bounds_best_range():
    x = tir.Var("x", "int32")
    b = arith.IntGroupBounds(tir.const(2), [tir.const(3)], [], [tir.const(11)])  # 3 <= 2x <= 11: x in [2, 5]
    r = b.find_best_range()
    assert (int(r.min), int(r.extent)) == (2, 4)
    r = arith.IntGroupBounds.from_range(ir.Range(1, 4)).find_best_range()
    assert (int(r.min), int(r.extent)) == (1, 3)
    assert arith.IntGroupBounds(tir.const(1), [x], [], []).find_best_range() is None
