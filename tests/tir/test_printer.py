"""Tests of kiln/tir/printer.py: TVMScript-like text of functions, statements and expressions."""

from kiln import tir
from kiln.ir import PrimType
from kiln.runtime import get_global_func


def _func():
    A = tir.decl_buffer((128,), "float32", "A")
    B = tir.decl_buffer((128,), "float32", "B")
    i = tir.Var("i", "int32")
    body = tir.For(i, 0, 128, tir.ForKind.SERIAL, tir.BufferStore(B, A[i] + 1.0, [i]))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    return tir.PrimFunc([a, b], body, buffer_map={a: A, b: B}).with_attr("global_symbol", "main")


def test_function_text():
    text = str(_func())
    assert "@T.prim_func" in text
    assert 'def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):' in text
    assert "    for i in range(128):" in text  # TVM prints a plain serial loop as range
    assert "        B[i] = A[i] + T.float32(1.0)" in text
    assert get_global_func("tir.script")(_func()) == text


def test_expression_precedence():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    assert str((x + y) * 2) == "(x + y) * 2"
    assert str(x - (y - 1)) == "x - (y - 1)"
    assert str(x // 4 + x % 4) == "x // 4 + x % 4"
    assert str(tir.truncdiv(x, y)) == "T.truncdiv(x, y)"
    assert str(tir.all(x < 1, y < 2)) == "x < 1 and y < 2"
    assert str(tir.Not(x < 1)) == "not x < 1"
    assert str(tir.const(3, "int64")) == "T.int64(3)"
    assert str(tir.Cast("float32", x)) == 'T.Cast("float32", x)'


def test_distinct_vars_with_one_name_are_told_apart():
    a, b = tir.Var("i", "int32"), tir.Var("i", "int32")
    assert str(a + b) == "i + i_1"


def test_statements_text():
    i = tir.Var("i", "int32")
    n = tir.Var("n", "int32")
    data = tir.Var("T_local", tir.PointerType(PrimType("float32"), "local"))
    local = tir.decl_buffer((4,), "float32", "T_local", data=data)
    A = tir.decl_buffer((n,), "float32", "A")
    inner = tir.stmt_seq(
        tir.BufferStore(local, tir.const(0.0), [0]),
        tir.IfThenElse(i < 2, tir.BufferStore(A, local[0], [i]), tir.Evaluate(tir.call_extern("int32", "f", i))),
    )
    body = tir.For(i, 0, n, tir.ForKind.PARALLEL, tir.Allocate(data, "float32", [4], True, inner))
    body = tir.LetStmt(tir.Var("v", "int32"), n * 2, tir.AssertStmt(n > 0, "n must be positive", body))
    a = tir.Var("a", "handle")
    text = str(tir.PrimFunc([a, n], body, buffer_map={a: A}))
    assert "def main(A: T.Buffer((n,), \"float32\"), n: T.int32):" in text
    assert "v: T.int32 = n * 2" in text
    assert 'assert n > 0, "n must be positive"' in text
    assert "for i in T.parallel(n):" in text
    assert 'T_local = T.allocate([4], "float32", "local")' in text
    assert "if i < 2:" in text and "else:" in text
    assert 'T.evaluate(T.call_extern("int32", "f", i))' in text


def test_vector_and_loop_kinds_text():
    A = tir.decl_buffer((16,), "float32", "A")
    i = tir.Var("i", "int32")
    store = tir.BufferStore(A, tir.Broadcast(tir.const(0.0), 4), [tir.Ramp(i * 4, 1, 4)])
    text = str(tir.For(i, 2, 2, tir.ForKind.UNROLLED, store))
    assert "for i in T.unroll(2, 4):" in text
    assert "A[i * 4:i * 4 + 4] = T.Broadcast(T.float32(0.0), 4)" in text
