"""Tests of kiln/tir/transform/remove_no_op.py."""

from kiln import tir
from kiln.ir import PrimType, assert_structural_equal
from kiln.tir.transform import RemoveNoOp


def test_removes_empty_statements(helpers):
    A = tir.decl_buffer((8,), "int32", "A")
    i, j, v = tir.Var("i", "int32"), tir.Var("j", "int32"), tir.Var("v", "int32")
    a = tir.Var("a", "handle")
    store = tir.BufferStore(A, i, [i])
    data = tir.Var("t", tir.PointerType(PrimType("int32"), "local"))
    body = tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.stmt_seq(
        store,
        tir.Evaluate(0),
        tir.For(j, 0, 0, tir.ForKind.SERIAL, store),
        tir.For(j, 0, 4, tir.ForKind.SERIAL, tir.Evaluate(j)),
        tir.IfThenElse(i < 3, tir.Evaluate(0)),
        tir.LetStmt(v, i, tir.Evaluate(0)),
        tir.Allocate(data, "int32", [4], True, tir.Evaluate(0)),
        tir.BufferStore(A, A[i], [i]),
        tir.AttrStmt(i, "pragma_x", 1, tir.Evaluate(1)),
    ))
    before = helpers.make_func([a], body, {a: A})
    after = helpers.run_pass(RemoveNoOp(), before)
    assert_structural_equal(after.body, tir.For(i, 0, 8, tir.ForKind.SERIAL, store))
    helpers.assert_same_results(before, after)


def test_keeps_effects_and_flips_empty_then(helpers):
    A = tir.decl_buffer((8,), "int32", "A")
    i = tir.Var("i", "int32")
    a = tir.Var("a", "handle")
    store = tir.BufferStore(A, i, [i])
    body = tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.stmt_seq(
        tir.IfThenElse(i < 3, tir.Evaluate(0), store),
        tir.AssertStmt(i < 8, "i in range", tir.Evaluate(0)),
        tir.Evaluate(tir.call_extern("int32", "side_effect", i)),
    ))
    before = helpers.make_func([a], body, {a: A})
    after = helpers.run_pass(RemoveNoOp(), before)
    first, second, third = after.body.body.seq
    assert isinstance(first, tir.IfThenElse) and isinstance(first.condition, tir.Not) and first.then_case is store
    assert isinstance(second, tir.AssertStmt) and isinstance(third, tir.Evaluate)
    plain = helpers.make_func([a], tir.For(i, 0, 8, tir.ForKind.SERIAL, store), {a: A})
    assert helpers.run_pass(RemoveNoOp(), plain) is plain
