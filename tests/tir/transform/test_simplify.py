"""Tests of kiln/tir/transform/simplify.py."""

from kiln import tir
from kiln.ir import assert_structural_equal
from kiln.tir.transform import Simplify


def test_loop_range_simplifies_indices(helpers):
    A = tir.decl_buffer((16,), "float32", "A")
    B = tir.decl_buffer((16,), "float32", "B")
    i = tir.Var("i", "int32")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    index = tir.floordiv(i, 16) * 16 + tir.floormod(i, 16)

    def build(idx, guarded):
        store = tir.BufferStore(B, A[idx] * 2.0, [idx])
        body = tir.IfThenElse(i < 16, store) if guarded else store
        return helpers.make_func([a, b], tir.For(i, 0, 16, tir.ForKind.SERIAL, body), {a: A, b: B})

    before = build(index, True)
    after = helpers.run_pass(Simplify(), before)
    assert_structural_equal(after, build(i, False))
    helpers.assert_same_results(before, after)


def test_branch_conditions_and_lets(helpers):
    A = tir.decl_buffer((8,), "int32", "A")
    i, v = tir.Var("i", "int32"), tir.Var("v", "int32")
    a = tir.Var("a", "handle")
    inner = tir.IfThenElse(i < 4, tir.BufferStore(A, tir.Select(i < 4, v + 1, v), [i]),
                           tir.BufferStore(A, tir.Select(i >= 4, v * 2, v), [i]))
    body = tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.LetStmt(v, tir.const(3), inner))
    before = helpers.make_func([a], body, {a: A})
    after = helpers.run_pass(Simplify(), before)
    expected_inner = tir.IfThenElse(i < 4, tir.BufferStore(A, tir.const(4), [i]), tir.BufferStore(A, tir.const(6), [i]))
    # v = 3 is substituted, then the unused binding is dropped
    expected = helpers.make_func([a], tir.For(i, 0, 8, tir.ForKind.SERIAL, expected_inner), {a: A})
    assert_structural_equal(after, expected)
    helpers.assert_same_results(before, after)


def test_decided_branch_is_dropped_and_unchanged_is_identity(helpers):
    A = tir.decl_buffer((8,), "int32", "A")
    i = tir.Var("i", "int32")
    a = tir.Var("a", "handle")
    store = tir.BufferStore(A, i, [i])
    before = helpers.make_func([a], tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.IfThenElse(i >= 8, store, store)),
                               {a: A})
    after = helpers.run_pass(Simplify(), before)
    assert_structural_equal(after.body, tir.For(i, 0, 8, tir.ForKind.SERIAL, store))
    plain = helpers.make_func([a], tir.For(i, 0, 8, tir.ForKind.SERIAL, store), {a: A})
    assert helpers.run_pass(Simplify(), plain) is plain
