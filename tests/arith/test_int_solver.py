"""solve_linear_equations: on random systems the transformation is a bijection between the solutions of the two
systems (checked exhaustively over the variables' ranges), and full-rank systems have the unique solution."""

import itertools
import random

import pytest

from kiln import arith, ir, tir
from kiln.arith.int_solver import smith_normal_form_diag
from kiln.testing import check_int_constraints_trans_consistency


def _system(rng, nvars, nrel):
    xs = [tir.Var(f"x{i}", "int32") for i in range(nvars)]
    rels = []
    for _ in range(nrel):
        lhs = sum((v * rng.randint(-3, 3) for v in xs), tir.const(rng.randint(-4, 4)))
        rhs = sum((v * rng.randint(-3, 3) for v in xs), tir.const(rng.randint(-4, 4)))
        rels.append(tir.EQ(lhs, rhs) if rng.random() < 0.75 else tir.LE(lhs, rhs))
    return xs, rels, {v: ir.Range(-6, 7) for v in xs}


@pytest.mark.parametrize("seed", range(12))
def test_random_systems_transform_bijectively(seed):
    rng = random.Random(seed)
    xs, rels, ranges = _system(rng, rng.randint(1, 3), rng.randint(1, 3))
    check_int_constraints_trans_consistency(arith.solve_linear_equations(rels, xs, ranges))
    params = {xs[-1]: ranges[xs[-1]]}
    check_int_constraints_trans_consistency(arith.solve_linear_equations(rels, xs[:-1], ranges), params)


def test_full_rank_and_unsatisfiable_systems():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    sol = arith.solve_linear_equations([tir.EQ(x + y, 20), tir.EQ(x - y, 10)], [x, y])
    assert sol.dst.variables == () and (int(sol.src_to_dst[x]), int(sol.src_to_dst[y])) == (15, 5)
    bad = arith.solve_linear_equations([tir.EQ(x * 2, 7)], [x])
    assert [int(r) for r in bad.dst.relations] == [0] and bad.src_to_dst == {}


def test_smith_normal_form_keeps_s_equal_u_a_v():
    rng = random.Random(5)
    for _ in range(20):
        m, n = rng.randint(1, 3), rng.randint(1, 3)
        A = [[rng.randint(-4, 4) for _ in range(n)] for _ in range(m)]
        S = [row[:] for row in A]
        V = [[int(i == j) for j in range(n)] for i in range(n)]
        xs = [tir.Var(f"z{i}", "int32") for i in range(n)]
        smith_normal_form_diag(S, V, list(xs), [tir.const(0)] * m)
        assert all(S[i][j] == 0 for i in range(m) for j in range(n) if i != j)
        # A V has the same column lattice as S up to row operations: rank agrees
        AV = [[sum(A[i][k] * V[k][j] for k in range(n)) for j in range(n)] for i in range(m)]
        rank_s = sum(1 for i in range(min(m, n)) if S[i][i])
        rank_av = max((r for r in range(min(m, n) + 1) if any(
            _det([[AV[i][j] for j in cols] for i in rows]) for rows in itertools.combinations(range(m), r)
            for cols in itertools.combinations(range(n), r))), default=0)
        assert rank_s == rank_av


def _det(mat):
    if not mat:
        return 1
    return sum((-1) ** j * mat[0][j] * _det([row[:j] + row[j + 1:] for row in mat[1:]]) for j in range(len(mat)))
