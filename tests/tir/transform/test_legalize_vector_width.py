"""Splitting over-wide vectors for the C backend (kiln/target/vector_legalize.py): the form of the split code and
its equivalence under the TIR evaluator."""

import numpy as np

from kiln import tir
from kiln.tir import expr as E
from kiln.tir import stmt as S
from kiln.tir.evaluator import evaluate
from kiln.tir.stmt_functor import pre_order_visit
from kiln.tir.transform.legalize_vector_width import legalize_vector_width


def _func(body_fn, lanes=32):
    A = tir.decl_buffer((128,), "float32", "A")
    B = tir.decl_buffer((128,), "float32", "B")
    i = tir.Var("i", "int32")
    index = E.Ramp(E.Mul(i, E.IntImm("int32", lanes)), E.IntImm("int32", 1), lanes)
    body = S.For(i, 0, 128 // lanes, S.ForKind.SERIAL, body_fn(A, B, index))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    return tir.PrimFunc([a, b], body, buffer_map={a: A, b: B}, attrs={"global_symbol": "f"})


def _stores(func):
    found = []
    pre_order_visit(func.body, lambda n: found.append(n) if isinstance(n, S.BufferStore) else None)
    return found


def _same_results(before, after):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(128).astype("float32")
    b1, b2 = np.zeros(128, "float32"), np.zeros(128, "float32")
    evaluate(before, a.copy(), b1)
    evaluate(after, a.copy(), b2)
    np.testing.assert_array_equal(b1, b2)


def test_wide_store_splits_into_register_wide_stores():
    def body(A, B, index):
        value = E.Add(E.Mul(E.BufferLoad(A, [index]), E.Broadcast(E.FloatImm("float32", 2.0), 32)),
                      tir.call_intrin("float32x32", "tir.exp", E.Cast("float32x32", index)))
        return S.BufferStore(B, E.Select(E.LT(value, E.Broadcast(E.FloatImm("float32", 50.0), 32)), value,
                                         E.Broadcast(E.FloatImm("float32", 0.0), 32)), [index])

    func = _func(body)
    split = legalize_vector_width(func, 512)
    stores = _stores(split)
    assert [s.value.dtype for s in stores] == ["float32x16", "float32x16"]
    assert [str(s.indices[0]) for s in stores] == ["T.Ramp(i * 32, 1, 16)", "T.Ramp(i * 32 + 16, 1, 16)"]
    _same_results(func, split)
    assert [s.value.dtype for s in _stores(legalize_vector_width(func, 256))] == ["float32x8"] * 4
    assert legalize_vector_width(func, 1024) is func  # already fits


def test_vector_let_is_split_and_its_slices_used():
    def body(A, B, index):
        v = tir.Var("v", "float32x32")
        return S.LetStmt(v, E.BufferLoad(A, [index]), S.BufferStore(B, E.Mul(v, v), [index]))

    func = _func(body)
    split = legalize_vector_width(func, 512)
    lets = []
    pre_order_visit(split.body, lambda n: lets.append(n.var.name_hint) if isinstance(n, S.LetStmt) else None)
    assert lets[:2] == ["v_0", "v_1"]
    assert [s.value.dtype for s in _stores(split)] == ["float32x16", "float32x16"]
    _same_results(func, split)


def test_gathers_stay_whole():
    def body(A, B, index):
        gather = E.BufferLoad(A, [E.Ramp(E.IntImm("int32", 0), E.IntImm("int32", 2), 32)])
        return S.BufferStore(B, E.Add(gather, E.BufferLoad(A, [index])), [index])

    func = _func(body)
    split = legalize_vector_width(func, 512)
    # the stride-2 Ramp still slices (it is an index), so this one splits too; a computed index vector does not
    assert [s.value.dtype for s in _stores(split)] == ["float32x16", "float32x16"]
    _same_results(func, split)

    def gather_body(A, B, index):
        idx = E.FloorMod(E.Mul(index, E.Broadcast(E.IntImm("int32", 3), 32)), E.Broadcast(E.IntImm("int32", 128), 32))
        v = tir.Var("idx", "int32x32")
        return S.LetStmt(v, idx, S.BufferStore(B, E.BufferLoad(A, [v]), [index]))

    func = _func(gather_body)
    split = legalize_vector_width(func, 512)
    _same_results(func, split)
