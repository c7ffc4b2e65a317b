"""Tests of kiln/tir/transform/vectorize_loop.py."""

from kiln import tir
from kiln.ir import assert_structural_equal
from kiln.tir.evaluator import evaluate_expr
from kiln.tir.transform import VectorizeLoop


def _elementwise(helpers, extent=4, kind=tir.ForKind.VECTORIZED, index=None):
    A = tir.decl_buffer((32,), "float32", "A")
    B = tir.decl_buffer((32,), "float32", "B")
    C = tir.decl_buffer((1,), "float32", "C")
    i, v = tir.Var("i", "int32"), tir.Var("v", "int32")
    a, b, c = tir.Var("a", "handle"), tir.Var("b", "handle"), tir.Var("c", "handle")
    idx = i * 4 + v if index is None else index(i, v)
    value = tir.exp(A[idx]) * C[0] + tir.Cast("float32", v)
    body = tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.For(v, 0, extent, kind, tir.BufferStore(B, value, [idx])))
    return helpers.make_func([a, b, c], body, {a: A, b: B, c: C}), (A, B, C, i, v)


def test_vector_code(helpers):
    before, (A, B, C, i, _v) = _elementwise(helpers)
    after = helpers.run_pass(VectorizeLoop(), before)
    ramp = tir.Ramp(i * 4, 1, 4)
    value = tir.Call("float32x4", "tir.exp", [A[ramp]]) * tir.Broadcast(C[0], 4) + \
        tir.Cast("float32x4", tir.Ramp(tir.const(0), 1, 4))
    expected = tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.BufferStore(B, value, [ramp]))
    assert_structural_equal(after.body, expected)
    helpers.assert_same_results(before, after)


def test_scalar_fallbacks(helpers):
    n = tir.Var("n", "int32")
    dynamic, _ = _elementwise(helpers, extent=n)
    after = helpers.run_pass(VectorizeLoop(), dynamic)
    assert after.body.body.kind == tir.ForKind.SERIAL  # extent unknown: a serial loop
    strided, _ = _elementwise(helpers, index=lambda i, v: v * 8 + i)
    after = helpers.run_pass(VectorizeLoop(), strided)
    assert after.body.body.kind == tir.ForKind.SERIAL  # stride-8 access has no contiguous vector form
    helpers.assert_same_results(strided, after)
    odd, _ = _elementwise(helpers, extent=3)
    assert helpers.run_pass(VectorizeLoop(), odd).body.body.kind == tir.ForKind.SERIAL


def test_reduction_store_falls_back_and_disabled_pass(helpers):
    A = tir.decl_buffer((8,), "float32", "A")
    S = tir.decl_buffer((1,), "float32", "S")
    v = tir.Var("v", "int32")
    a, s = tir.Var("a", "handle"), tir.Var("s", "handle")
    body = tir.For(v, 0, 8, tir.ForKind.VECTORIZED, tir.BufferStore(S, S[0] + A[v], [0]))
    before = helpers.make_func([a, s], body, {a: A, s: S})
    after = helpers.run_pass(VectorizeLoop(), before)
    assert after.body.kind == tir.ForKind.SERIAL
    helpers.assert_same_results(before, after)
    vec, _ = _elementwise(helpers)
    off = helpers.run_pass(VectorizeLoop(enable_vectorize=False), vec)
    assert off.body.body.kind == tir.ForKind.SERIAL
    assert str(VectorizeLoop(enable_vectorize=False)) == "tir.VectorizeLoop(enable_vectorize=False)"


def _guarded_copy(helpers, cond):
    """``B[i*8 + v] = if_then_else(cond(i, v), A[i*8 + v - 8], -1)``: a padding-style guarded load."""
    A = tir.decl_buffer((32,), "float32", "A")
    B = tir.decl_buffer((32,), "float32", "B")
    i, v = tir.Var("i", "int32"), tir.Var("v", "int32")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    value = tir.if_then_else(cond(i, v), A[i * 8 + v - 8], tir.const(-1.0, "float32"))
    body = tir.For(i, 0, 4, tir.ForKind.SERIAL,
                   tir.For(v, 0, 8, tir.ForKind.VECTORIZED, tir.BufferStore(B, value, [i * 8 + v])))
    return helpers.make_func([a, b], body, {a: A, b: B}), (A, B, i)


def test_if_then_else_with_a_scalar_condition_vectorizes(helpers):
    before, (A, B, i) = _guarded_copy(helpers, lambda i, v: tir.LE(tir.const(1), i))
    after = helpers.run_pass(VectorizeLoop(), before)
    ramp = tir.Ramp(i * 8, 1, 8)
    value = tir.Call("float32x8", "tir.if_then_else", [tir.LE(tir.const(1), i), A[tir.Ramp(i * 8 - 8, 1, 8)],
                                                        tir.Broadcast(tir.const(-1.0, "float32"), 8)])
    assert_structural_equal(after.body, tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.BufferStore(B, value, [ramp])))
    helpers.assert_same_results(before, after)


def test_if_then_else_with_a_lane_condition_stays_serial(helpers):
    before, _ = _guarded_copy(helpers, lambda i, v: tir.LE(tir.const(8), i * 8 + v))
    after = helpers.run_pass(VectorizeLoop(), before)
    assert after.body.body.kind == tir.ForKind.SERIAL
    helpers.assert_same_results(before, after)


def _tail_guarded_copy(helpers, cond):
    """``for i: for v (vectorized 8): if likely(cond(i, v)): B[i*8 + v] = A[i*8 + v] * 2``: the write-out of a
    split whose last tile is partial (30 elements in tiles of 8)."""
    A = tir.decl_buffer((32,), "float32", "A")
    B = tir.decl_buffer((32,), "float32", "B")
    i, v = tir.Var("i", "int32"), tir.Var("v", "int32")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    store = tir.BufferStore(B, A[i * 8 + v] * tir.const(2.0, "float32"), [i * 8 + v])
    body = tir.For(i, 0, 4, tir.ForKind.SERIAL,
                   tir.For(v, 0, 8, tir.ForKind.VECTORIZED, tir.IfThenElse(cond(i, v), store)))
    return helpers.make_func([a, b], body, {a: A, b: B}), (A, B, i, v)


def test_tail_guard_versions_the_loop(helpers):
    before, (A, B, i, v) = _tail_guarded_copy(helpers, lambda i, v: tir.likely(tir.LT(i * 8 + v, tir.const(30))))
    after = helpers.run_pass(VectorizeLoop(), before)
    versioned = after.body.body
    assert isinstance(versioned, tir.IfThenElse)
    ramp = tir.Ramp(i * 8, 1, 8)
    # full tiles: one vector store, no lane check; the partial tile: the original guarded serial loop
    assert_structural_equal(versioned.then_case, tir.BufferStore(B, A[ramp] * tir.Broadcast(tir.const(2.0, "float32"),
                                                                                                  8), [ramp]))
    assert versioned.else_case.kind == tir.ForKind.SERIAL
    assert isinstance(versioned.else_case.body, tir.IfThenElse)
    # the partial tile iterates over its valid lanes only (6 of 8 in the last tile)
    extent = versioned.else_case.extent
    assert [evaluate_expr(extent, {i: k}) for k in range(4)] == [8, 8, 8, 6]
    helpers.assert_same_results(before, after)


def test_non_affine_lane_guard_stays_serial(helpers):
    before, _ = _tail_guarded_copy(helpers, lambda i, v: tir.LT(tir.floormod(v * v, 5), tir.const(3)))
    after = helpers.run_pass(VectorizeLoop(), before)
    assert after.body.body.kind == tir.ForKind.SERIAL
    helpers.assert_same_results(before, after)
