"""The TIR passes in the order a build runs them, on a scheduled-looking function, checked by the evaluator."""

import math

import numpy as np

from kiln import tir, transform
from kiln.ir import IRModule
from kiln.tir import transform as T
from kiln.tir.analysis import stmt_contains
from kiln.tir.evaluator import call_packed


def test_lowering_pipeline_end_to_end():
    A = tir.decl_buffer((4, 16), "float32", "A")
    B = tir.decl_buffer((4, 16), "float32", "B")
    i, jo, ji = tir.Var("i", "int32"), tir.Var("jo", "int32"), tir.Var("ji", "int32")
    j = jo * 4 + ji
    value = tir.sigmoid(A[i, j]) + tir.tanh(A[i, j]) * tir.erf(A[i, j])
    body = tir.For(i, 0, 4, tir.ForKind.PARALLEL, tir.For(jo, 0, 4, tir.ForKind.UNROLLED, tir.For(
        ji, 0, 4, tir.ForKind.VECTORIZED, tir.BufferStore(B, value, [i, j]))))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    func = tir.PrimFunc([a, b], body, buffer_map={a: A, b: B}).with_attr("global_symbol", "main")
    pipeline = transform.Sequential([
        T.FlattenBuffer(), T.Simplify(), T.VectorizeLoop(), T.UnrollLoop(), T.LowerIntrin(), T.Simplify(),
        T.RemoveNoOp(), T.StorageRewrite(), T.MakePackedAPI(),
    ])
    out = pipeline(IRModule({"main": func}))["main"]
    assert not stmt_contains(out.body, lambda n: isinstance(n, tir.Call) and n.op.name in ("tir.tanh", "tir.erf"))
    assert stmt_contains(out.body, lambda n: isinstance(n, tir.BufferStore) and n.value.dtype == "float32x4")
    x = np.random.default_rng(1).standard_normal((4, 16)).astype("float32")
    y = np.zeros_like(x)
    assert call_packed(out, x, y) == 0
    ref = 1 / (1 + np.exp(-x)) + np.tanh(x) * np.vectorize(math.erf)(x)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)


def test_passes_are_registered_by_name():
    names = transform.list_passes()
    for name in ("tir.Simplify", "tir.FlattenBuffer", "tir.UnrollLoop", "tir.VectorizeLoop", "tir.RemoveNoOp",
                 "tir.LowerIntrin", "tir.StorageRewrite", "tir.MakePackedAPI"):
        assert name in names
        assert transform.get_pass(name).info.name == name
    assert "tir.UnrollLoop" in transform.PassContext.list_configs()


def test_lowered_function_round_trips_through_json():
    from kiln.ir import assert_structural_equal, load_json, save_json

    A = tir.decl_buffer((8,), "float32", "A")
    i = tir.Var("i", "int32")
    a = tir.Var("a", "handle")
    func = tir.PrimFunc([a], tir.For(i, 0, 8, tir.ForKind.VECTORIZED, tir.BufferStore(A, tir.tanh(A[i]), [i])),
                        buffer_map={a: A}).with_attr("global_symbol", "f")
    mod = transform.Sequential([T.VectorizeLoop(), T.LowerIntrin(), T.MakePackedAPI()])(IRModule({"f": func}))
    back = load_json(save_json(mod))
    assert_structural_equal(back["f"], mod["f"])
    assert str(back["f"]) == str(mod["f"])
