"""``PrimFunc.script()`` prints TVMScript that ``kiln.script.from_source`` parses back to an equal function."""

import numpy as np

import kiln
from kiln import te, tir
from kiln.ir import assert_structural_equal, structural_hash
from kiln.script import from_source
from kiln.script import tir as T  # noqa: N812


def _roundtrip(func):
    text = func.script()
    again = from_source(text)
    assert_structural_equal(again, func)
    assert structural_hash(again) == structural_hash(func)
    return text


def test_roundtrip_blocks_and_loops():
    @T.prim_func
    def func(a: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n, 8), "float32")
        C = T.match_buffer(c, (n,), "float32")
        T.func_attr({"tir.noalias": True})
        B = T.alloc_buffer((n, 8), "float32")
        for i, j in T.grid(n, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.exp(A[vi, vj]) if vj > 0 else A[vi, vj]
        for i in T.parallel(n):
            for k in T.unroll(8):
                with T.block("C"):
                    vi = T.axis.spatial(n, i)
                    vk = T.axis.reduce(8, k)
                    with T.init():
                        C[vi] = T.float32(0)
                    C[vi] = C[vi] + T.Cast("float32", T.Cast("int32", B[vi, vk]))

    text = _roundtrip(func)
    assert 'with T.block("root")' in text and "T.init()" in text


def test_roundtrip_statements():
    @T.prim_func(private=True)
    def func(A: T.Buffer((16,), "int32"), m: T.int32):
        buf = T.allocate([4], "int32", "global")
        tmp = T.Buffer((4,), "int32", data=buf)
        for i in range(4):
            tmp[i] = T.floordiv(m, i + 1) + T.floormod(m, 3) + T.truncdiv(m, 2)
        x: T.int32 = m * 2
        assert x >= 0, "negative"
        while tmp[0] < x:
            tmp[0] = tmp[0] + 1
        with T.attr(0, "pragma_x", 1):
            A[0:4] = tmp[0:4]
        T.evaluate(T.call_extern("int32", "abs", x))

    text = _roundtrip(func)
    assert "@T.prim_func(private=True)" in text


def test_roundtrip_te_lowered_function_and_run_it():
    A = te.placeholder((10, 4), name="A")
    B = te.compute((10, 4), lambda i, j: A[i, j] * 2 + 1, name="B")
    mod = kiln.lower(te.create_schedule(B.op), [A, B])
    (func,) = mod.functions.values()
    again = from_source(func.script())
    assert_structural_equal(again, func)
    f = kiln.build(again, target="llvm")
    x = np.random.rand(10, 4).astype("float32")
    y = kiln.nd.empty((10, 4), "float32")
    f(kiln.nd.array(x), y)
    np.testing.assert_allclose(y.numpy(), x * 2 + 1, rtol=1e-6)


def test_printed_text_reads_like_tvm():
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        for i in T.serial(4, annotations={"pragma_unroll": 1}):
            A[i] = T.float32(0)

    text = main.script()
    assert text.startswith("# from tvm.script import tir as T")
    assert '"global_symbol"' not in text  # implied by the function name
    assert "annotations=" in text
    assert isinstance(from_source(text).body, tir.For)


def test_llvm_intrinsic_calls_round_trip():
    @T.prim_func
    def f(a: T.handle):
        A = T.match_buffer(a, (4,), "int32x4")
        A[0] = T.call_llvm_pure_intrin("int32x4", "llvm.abs.v4i32", A[1], T.bool(False))
        T.evaluate(T.call_llvm_intrin("int32", "llvm.donothing"))

    text = f.script()
    assert 'T.call_llvm_pure_intrin("int32x4", "llvm.abs.v4i32"' in text and 'T.call_llvm_intrin("int32"' in text
    assert_structural_equal(from_source(text), f)
