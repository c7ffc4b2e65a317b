"""Tests of kiln/arith/analyzer.py and int_set.py: bind, constraint scopes, can_prove, interval sets."""

import pytest

from kiln import arith, tir
from kiln.error import TIRError

x, y, n = tir.Var("x", "int32"), tir.Var("y", "int32"), tir.Var("n", "int32")


def test_bind_range_and_value():
    ana = arith.Analyzer()
    ana.bind(x, tir.Range(0, 16))
    assert ana.can_prove(x < 16) and ana.can_prove(x >= 0) and not ana.can_prove(x < 15)
    ana.bind(y, x * 2)
    assert str(ana.simplify(y + 1)) == "x * 2 + 1"
    one = tir.Var("one", "int32")
    ana.bind(one, tir.Range(3, 4))
    assert ana.simplify(one).value == 3  # extent 1: the variable is its minimum
    with pytest.raises(TIRError):
        ana.bind(x + 1, tir.Range(0, 1))


def test_constraint_scope_narrows_and_restores():
    ana = arith.Analyzer()
    ana.bind(x, tir.Range(0, 100))
    with ana.constraint_scope(tir.all(x < 10, y < n)):
        assert ana.can_prove(x < 10) and ana.can_prove(x <= 9)
        assert ana.can_prove(y < n)
        assert ana.simplify(tir.Select(y < n, 1, 2)).value == 1
        assert ana.simplify(tir.floordiv(x, 16)).value == 0
    assert not ana.can_prove(x < 10) and not ana.can_prove(y < n)
    with ana.constraint_scope(x + 1 < n):
        assert ana.can_prove(x + 1 < n)
    with ana.constraint_scope(x.equal(5)):
        assert ana.simplify(x * 2).value == 10


def test_can_prove_equal():
    ana = arith.Analyzer()
    assert ana.can_prove_equal(tir.floordiv(x, 4) * 4 + tir.floormod(x, 4), x)
    assert not ana.can_prove_equal(x, y)
    f = tir.Var("f", "float32")
    assert ana.can_prove_equal(f * 1.0, f)


def test_eval_set():
    s = arith.eval_set(x * 4 + 1, {x: tir.Range(0, 8)})
    assert (s.min_value.value, s.max_value.value) == (1, 29)
    s = arith.eval_set(tir.floordiv(x, 4) + y, {x: tir.Range(0, 8)})
    assert str(s.min_value) == "y" and str(s.max_value) == "y + 1"
    s = arith.eval_set(tir.floormod(x, 4), {x: tir.Range(0, 8)})
    assert (s.min_value.value, s.max_value.value) == (0, 3)
    s = arith.eval_set(x * -2, {x: tir.Range(0, 8)})
    assert (s.min_value.value, s.max_value.value) == (-14, 0)
    s = arith.eval_set(x * y, {x: tir.Range(0, 8)})
    assert s.is_everything()
    assert arith.eval_set(y, {x: tir.Range(0, 8)}).is_single_point()
    i = tir.Var("i", "int32")
    regions = arith.estimate_region([i * 2, i + n], {i: tir.Range(0, n)})
    assert str(regions[0].extent) == "n * 2 - 1" and str(regions[1].min) == "n"


def test_can_prove_by_symbolic_bound():
    from kiln.arith import ProofStrength

    ana = arith.Analyzer()
    i0, i1 = tir.Var("i0", "int64"), tir.Var("i1", "int64")
    n = tir.SizeVar("n", "int64")
    outer = tir.floordiv(n + 31, 32)
    ana.bind(i0, tir.Range(tir.const(0, "int64"), outer))
    ana.bind(i1, tir.Range(tir.const(0, "int64"), tir.const(32, "int64")))
    cond = i0 * 32 + i1 < outer * 32
    assert not ana.can_prove(cond)
    assert ana.can_prove(cond, ProofStrength.SYMBOLIC_BOUND)
    assert ana.can_prove(outer * 32 >= i0 * 32 + i1 + 1, ProofStrength.SYMBOLIC_BOUND)
    assert not ana.can_prove(i0 * 32 + i1 < outer * 32 - 1, ProofStrength.SYMBOLIC_BOUND)
    assert set(ana.bound_ranges()) == {i0, i1}
