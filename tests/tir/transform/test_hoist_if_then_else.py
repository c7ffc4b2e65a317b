"""Tests of kiln/tir/transform/hoist_if_then_else.py."""

from kiln import tir
from kiln.tir.transform import HoistIfThenElse


def _tile(helpers, cond_of):
    """``for t in 4: for r in 6: if cond(t, r): B[t*2] += A[r]; B[t*2+1] += A[r] * 2 else: B[t*2] -= A[r]`` as two
    branches in a sequence, the shape loop versioning leaves in an unrolled tile."""
    A, B = tir.decl_buffer((6,), "float32", "A"), tir.decl_buffer((8,), "float32", "B")
    t, r = tir.Var("t", "int32"), tir.Var("r", "int32")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    first = tir.IfThenElse(cond_of(t, r, B), tir.BufferStore(B, B[t * 2] + A[r], [t * 2]),
                           tir.BufferStore(B, B[t * 2] - A[r], [t * 2]))
    second = tir.IfThenElse(cond_of(t, r, B), tir.BufferStore(B, B[t * 2 + 1] + A[r] * 2.0, [t * 2 + 1]))
    body = tir.For(t, 0, 4, tir.ForKind.SERIAL, tir.For(r, 0, 6, tir.ForKind.SERIAL, tir.SeqStmt([first, second])))
    return helpers.make_func([a, b], body, {a: A, b: B})


def test_invariant_branches_leave_the_loop_as_one(helpers):
    before = _tile(helpers, lambda t, r, B: tir.likely(tir.LT(t, tir.const(3))))
    after = helpers.run_pass(HoistIfThenElse(), before)
    hoisted = after.body.body
    assert isinstance(hoisted, tir.IfThenElse)  # one branch per tile, the reduction loop inside each arm
    assert isinstance(hoisted.then_case, tir.For) and isinstance(hoisted.then_case.body, tir.SeqStmt)
    assert len(hoisted.then_case.body.seq) == 2
    assert isinstance(hoisted.else_case, tir.For) and isinstance(hoisted.else_case.body, tir.BufferStore)
    helpers.assert_same_results(before, after)


def test_branches_that_vary_or_read_memory_stay(helpers):
    varying = _tile(helpers, lambda t, r, B: tir.LT(r, tir.const(3)))
    after = helpers.run_pass(HoistIfThenElse(), varying)
    inner = after.body.body
    assert isinstance(inner, tir.For) and isinstance(inner.body, tir.IfThenElse)  # merged, but inside its loop
    helpers.assert_same_results(varying, after)
    reading = _tile(helpers, lambda t, r, B: tir.LT(B[0], tir.const(0.5, "float32")))  # a store may change it
    after = helpers.run_pass(HoistIfThenElse(), reading)
    assert isinstance(after.body.body, tir.For) and isinstance(after.body.body.body, tir.SeqStmt)
    helpers.assert_same_results(reading, after)


def test_adjacent_branches_on_one_condition_merge(helpers):
    A, B = tir.decl_buffer((4,), "float32", "A"), tir.decl_buffer((4,), "float32", "B")
    t = tir.Var("t", "int32")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    cond = tir.GE(t, tir.const(2))
    seq = tir.SeqStmt([tir.IfThenElse(cond, tir.BufferStore(B, A[t], [t])),
                       tir.IfThenElse(cond, tir.BufferStore(B, B[t] * 3.0, [t]),
                                      tir.BufferStore(B, A[t] + 1.0, [t])),
                       tir.BufferStore(B, B[t] + 0.5, [t])])
    before = helpers.make_func([a, b], tir.For(t, 0, 4, tir.ForKind.SERIAL, seq), {a: A, b: B})
    after = helpers.run_pass(HoistIfThenElse(), before)
    body = after.body.body
    assert isinstance(body, tir.SeqStmt) and len(body.seq) == 2 and isinstance(body.seq[0], tir.IfThenElse)
    helpers.assert_same_results(before, after)
