"""tir.ir_builder: scopes nest into the statements TVM's builder makes, and what it builds runs (checked with the
TIR evaluator against numpy)."""

import numpy as np
import pytest

from kiln import tir
from kiln.error import TIRError
from kiln.tir import ir_builder
from kiln.tir.evaluator import evaluate


def _func(params, body, buffers):
    return tir.PrimFunc(params, body, buffer_map=buffers).with_attr("global_symbol", "main")


def test_scopes_nest_like_tvm():
    ib = ir_builder.create()
    n = tir.SizeVar("n", "int32")
    A = ib.allocate("float32", n, name="A", scope="global")
    with ib.for_range(0, n, name="i") as i:
        A[i] = A[i] + 1.0
        with ib.for_range(0, 10, name="j") as j:
            A[j] = A[j] + 2.0
    body = ib.get()
    assert isinstance(body, tir.Allocate) and isinstance(body.body, tir.For)
    loop = body.body.body
    assert isinstance(loop, tir.SeqStmt) and isinstance(loop[1], tir.For)
    assert loop[1].loop_var.name == "j"


def test_if_else_and_default_names():
    ib = ir_builder.create()
    ptr = ib.pointer("float32", name="A")
    with ib.for_range(0, 8) as i:
        with ib.if_scope(tir.truncmod(i, 2) == 0):
            ptr[i] = ptr[i] + 1.0
        with ib.else_scope():
            ptr[0] = ptr[i] + 2.0
    with ib.for_range(0, 2) as j:
        ptr[j] = 0.0
    body = ib.get()
    first = body[0]
    assert first.loop_var.name == "i" and body[1].loop_var.name == "j"
    branch = first.body
    assert isinstance(branch, tir.IfThenElse) and isinstance(branch.condition, tir.EQ)
    assert branch.else_case.indices[0].value == 0


def test_misuse_is_refused():
    ib = ir_builder.create()
    with pytest.raises(TIRError, match="else_scope can only follow"):
        ib.else_scope()
    with pytest.raises(ValueError, match="unknown loop kind"):
        ib.for_range(0, 4, kind="spiral")
    buf = ib.allocate("int32", (2,), name="b")
    with pytest.raises(TIRError, match="cannot store float32"):
        buf[0] = tir.const(1.5, "float32")
    with pytest.raises(TIRError, match="integer"):
        ib.for_range(0, tir.const(2.0, "float32"))
    ib.for_range(0, 4)  # opened and never closed
    with pytest.raises(TIRError, match="inside a construction scope"):
        ib.get()


def test_prefix_sum_with_let_and_while_runs():
    n = 16
    A = tir.decl_buffer((n,), "int32", "A")
    B = tir.decl_buffer((n,), "int32", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    acc = ib.allocate("int32", (1,), name="acc", scope="local")
    k = ib.allocate("int32", (1,), name="k", scope="local")
    acc[0] = 0
    k[0] = 0
    with ib.while_loop(k[0] < n):
        doubled = ib.let("doubled", a[k[0]] * 2)
        acc[0] = acc[0] + doubled
        b[k[0]] = acc[0]
        k[0] = k[0] + 1
    pa, pb = tir.Var("a", "handle"), tir.Var("b", "handle")
    func = _func([pa, pb], ib.get(), {pa: A, pb: B})
    x = np.random.default_rng(0).integers(-9, 9, n).astype("int32")
    y = np.zeros(n, "int32")
    evaluate(func, x, y)
    np.testing.assert_array_equal(y, np.cumsum(2 * x))


def test_one_index_unravels_into_a_matrix():
    M = tir.decl_buffer((3, 4), "float32", "M")
    ib = ir_builder.create()
    m = ib.buffer_ptr(M)
    with ib.for_range(0, 12, name="t") as t:
        m[t] = tir.Cast("float32", t)
    pm = tir.Var("m", "handle")
    out = np.zeros((3, 4), "float32")
    evaluate(_func([pm], ib.get(), {pm: M}), out)
    np.testing.assert_array_equal(out, np.arange(12, dtype="float32").reshape(3, 4))


def test_scope_attr_let_and_likely():
    ib = ir_builder.create()
    tx = tir.IterVar(None, "threadIdx.x", tir.IterVarType.ThreadIndex, "threadIdx.x")
    ib.scope_attr(tx, "thread_extent", 0)
    x = ib.let("x", tir.const(3, "int32"))
    ptr = ib.pointer("int32")
    with ib.if_scope(ib.likely(x < 4)):
        ptr[0] = x
    body = ib.get()
    assert isinstance(body, tir.AttrStmt) and body.value.value == 1  # a thread extent is at least 1
    assert isinstance(body.body, tir.LetStmt)
    assert body.body.body.condition.op.name == "tir.likely"
