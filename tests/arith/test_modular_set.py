"""Tests of kiln/arith/modular_set.py."""

from kiln import arith, tir
from kiln.arith import ModularSet

x, y = tir.Var("x", "int32"), tir.Var("y", "int32")


def _mod(expr):
    m = arith.Analyzer().modular_set(expr)
    return m.coeff, m.base


def test_basic_rules():
    assert _mod(tir.const(7)) == (0, 7)
    assert _mod(x) == (1, 0)
    assert _mod(x * 8 + 3) == (8, 3)
    assert _mod(x * 8 - 3) == (8, 5)
    assert _mod(x * 8 + y * 12) == (4, 0)
    assert _mod((x * 4 + 2) * (y * 6)) == (12, 0)


def test_division_rules():
    assert _mod(tir.floordiv(x * 8 + 4, 4)) == (2, 1)
    assert _mod(tir.floormod(x * 8 + 3, 4)) == (0, 3)
    assert _mod(tir.floormod(x * 6 + 1, 4)) == (2, 1)
    assert _mod(tir.floormod(tir.const(9), 4)) == (0, 1)


def test_branches_and_updates():
    assert _mod(tir.min(x * 8 + 1, y * 4 + 5)) == (4, 1)
    assert _mod(tir.Select(x < y, x * 6, y * 4 + 2)) == (2, 0)
    ana = arith.Analyzer()
    ana.update(x, ModularSet(16, 4))
    assert ana.modular_set(x * 2 + 1) == ModularSet(32, 9)
