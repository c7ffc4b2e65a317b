"""Tests of kiln/tir/evaluator.py: scalar and vector semantics, memory, errors."""

import numpy as np
import pytest

from kiln import tir
from kiln.error import RuntimeArgumentError, TIRError
from kiln.ir import PrimType
from kiln.tir.evaluator import evaluate, evaluate_expr


def test_integer_semantics():
    x = tir.Var("x", "int32")
    assert int(evaluate_expr(tir.truncdiv(x, 4), {x: -5})) == -1
    assert int(evaluate_expr(tir.truncmod(x, 4), {x: -5})) == -1
    assert int(evaluate_expr(tir.floordiv(x, 4), {x: -5})) == -2
    assert int(evaluate_expr(tir.floormod(x, 4), {x: -5})) == 3
    assert int(evaluate_expr(x * 2, {x: 2**30})) == -(2**31)  # int32 wraps
    z = tir.Var("z", "int32")
    with pytest.raises(TIRError, match="division by zero"):
        evaluate_expr(tir.FloorDiv(x, z), {x: 1, z: 0})


def test_vectors_and_intrinsics():
    x = tir.Var("x", "int32")
    ramp = evaluate_expr(tir.Ramp(x, 2, 4), {x: 1})
    assert ramp.tolist() == [1, 3, 5, 7]
    f = tir.Var("f", "float32")
    for builder, ref in ((tir.exp, np.exp), (tir.tanh, np.tanh), (tir.sqrt, np.sqrt), (tir.floor, np.floor)):
        assert np.isclose(evaluate_expr(builder(f), {f: 0.7}), ref(np.float32(0.7)))
    assert np.isclose(evaluate_expr(tir.sigmoid(f), {f: 0.3}), 1 / (1 + np.exp(-0.3)))
    assert np.isclose(evaluate_expr(tir.erf(f), {f: 0.3}), 0.328626759)
    assert np.isclose(evaluate_expr(tir.fma(f, f, f), {f: 2.0}), 6.0)
    assert evaluate_expr(tir.Cast("int32", f), {f: -2.7}) == -2
    sel = evaluate_expr(tir.Select(tir.Ramp(x, 1, 4) < 2, tir.Broadcast(f, 4), tir.Broadcast(tir.const(9.0), 4)),
                        {x: 0, f: 1.0})
    assert sel.tolist() == [1.0, 1.0, 9.0, 9.0]


def _copy_with_scratch():
    A = tir.decl_buffer((4, 4), "float32", "A")
    B = tir.decl_buffer((4, 4), "float32", "B")
    data = tir.Var("tmp", tir.PointerType(PrimType("float32"), "local"))
    tmp = tir.decl_buffer((4,), "float32", "tmp", data=data)
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    fill = tir.For(j, 0, 4, tir.ForKind.SERIAL, tir.BufferStore(tmp, A[i, j] * 2.0, [j]))
    out = tir.For(j, 0, 4, tir.ForKind.SERIAL, tir.BufferStore(B, tmp[3 - j], [i, j]))
    body = tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.Allocate(data, "float32", [4], True, tir.stmt_seq(fill, out)))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    return tir.PrimFunc([a, b], body, buffer_map={a: A, b: B}), tmp


def test_run_function_with_allocation():
    func, _ = _copy_with_scratch()
    a = np.arange(16, dtype="float32").reshape(4, 4)
    b = np.zeros((4, 4), dtype="float32")
    evaluate(func, a, b)
    np.testing.assert_allclose(b, a[:, ::-1] * 2)


def test_out_of_bounds_and_uninitialized_memory():
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i", "int32")
    a = tir.Var("a", "handle")
    bad = tir.PrimFunc([a], tir.For(i, 0, 5, tir.ForKind.SERIAL, tir.BufferStore(A, tir.const(1.0), [i])),
                       buffer_map={a: A})
    with pytest.raises(TIRError, match="out-of-bounds access to buffer A"):
        evaluate(bad, np.zeros(4, "float32"))
    data = tir.Var("t", tir.PointerType(PrimType("float32"), "local"))
    t = tir.decl_buffer((4,), "float32", "t", data=data)
    read = tir.Allocate(data, "float32", [4], True, tir.BufferStore(A, t[0], [0]))
    out = np.zeros(4, "float32")
    evaluate(tir.PrimFunc([a], read, buffer_map={a: A}), out)
    assert np.isnan(out[0])  # poisoned scratch memory shows reads of unwritten data


def test_assert_raises_runtime_argument_error():
    n = tir.Var("n", "int32")
    func = tir.PrimFunc([n], tir.AssertStmt(n > 0, "n must be positive", tir.Evaluate(0)))
    evaluate(func, 3)
    with pytest.raises(RuntimeArgumentError, match="n must be positive"):
        evaluate(func, 0)


def test_popcount_counts_at_the_lane_width():
    import numpy as np

    from kiln import tir
    from kiln.tir.evaluator import evaluate_expr

    for dtype, bits in (("int8", 8), ("int16", 16), ("int32", 32)):
        x = tir.Var("x", dtype)
        assert int(evaluate_expr(tir.popcount(x), {x: np.array(-1, dtype)})) == bits
