"""The C backend's output (kiln/target/codegen_c.py, codegen_c_calls.py, codegen_c_helpers.py): literals, vector
types and helpers, OpenMP pragmas, the packed prologue, and the generated inner loop of the GEMM schedule."""

import math

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.target import Target
from kiln.target.codegen_c import CSourceGenerator
from kiln.target.codegen_c_calls import float_literal, int_literal
from kiln.te.examples import matmul_schedule
from kiln.tir import expr as E
from kiln.tir import stmt as S

from .conftest import HAVE_CC


@pytest.mark.parametrize("value, dtype, text", [
    (3, "int32", "3"), (-3, "int32", "(-3)"), (5, "int64", "INT64_C(5)"),
    (-2**31, "int32", "((int32_t)(INT64_C(-2147483647) - 1))"),
    (-2**63, "int64", "(INT64_C(-9223372036854775807) - 1)"), (7, "uint32", "7U"), (7, "uint64", "7ULL"),
    (200, "uint8", "((uint8_t)200U)"), (1, "bool", "true"), (-4, "int8", "((int8_t)(-4))"),
])
def test_int_literals(value, dtype, text):
    assert int_literal(value, dtype) == text


def test_float_literals_are_exact():
    assert float_literal(1.5, "float32") == "1.5f"
    assert float_literal(2.0, "float32") == "2.0f"
    assert float_literal(-0.1, "float64") == "(-0.1)"
    assert float_literal(math.inf, "float32") == "((float)INFINITY)"
    assert float_literal(-math.inf, "float64") == "((double)-INFINITY)"
    assert float_literal(math.nan, "float32") == "((float)NAN)"
    for value in np.random.default_rng(0).standard_normal(100).astype("float32"):
        text = float_literal(float(value), "float32").strip("()")
        assert np.float32(float(text[:-1])) == value  # 9 significant digits round-trip every float32


def _print(func, symbol="f"):
    gen = CSourceGenerator(Target("c"))
    gen.add_function(symbol, func)
    return gen.finish()


def test_vectors_use_gcc_vector_types_and_helpers():
    A = tir.decl_buffer((64,), "float32", "A")
    B = tir.decl_buffer((64,), "float32", "B")
    i = tir.Var("i", "int32")
    idx = E.Ramp(E.Mul(i, E.IntImm("int32", 16)), E.IntImm("int32", 1), 16)
    value = E.Max(E.BufferLoad(A, [idx]), E.Broadcast(E.FloatImm("float32", 0.0), 16))
    body = S.For(i, 0, 4, S.ForKind.PARALLEL, S.BufferStore(B, tir.exp(value), [idx]))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    src = _print(tir.PrimFunc([a, b], body, buffer_map={a: A, b: B}))
    assert "typedef float float32x16_t __attribute__((vector_size(64)));" in src
    assert "may_alias" in src and "float32x16_a" in src  # aligned: A and B are 64-byte aligned, base is i * 16
    assert "static int32_t f_parallel_1(int32_t kiln_task" in src  # the parallel loop, outlined for the pool
    assert "kiln_parallel_launch(f_parallel_1, &kiln_closure_1, 0)" in src
    assert "static inline float32x16_t kiln_max_float32x16_t(" in src
    assert "expf(a0[i])" in src  # the lane-wise libm helper
    assert "float* A = (float*)a;" in src  # plain convention: typed data pointers


def test_parallel_loop_with_an_assert_returns_from_its_task():
    """The outlined body's failed assertion returns -1 from the task, which the launcher hands back (it runs:
    tests/target/test_codegen.py::test_assert_inside_parallel_loop)."""
    A = tir.decl_buffer((8,), "float32", "A")
    i = tir.Var("i", "int32")
    body = S.For(i, 0, 8, S.ForKind.PARALLEL, S.AssertStmt(E.GE(E.BufferLoad(A, [i]), E.FloatImm("float32", 0)),
                                                           "negative", S.Evaluate(E.IntImm("int32", 0))))
    a = tir.Var("a", "handle")
    src = _print(tir.PrimFunc([a], body, buffer_map={a: A}))
    task = src[src.index("static int32_t f_parallel_1("):src.index("int32_t f(void* a) {")]
    assert 'KilnAPISetLastError("negative");' in task and "return -1;" in task
    assert "if (kiln_status != 0) return kiln_status;" in src


def test_num_cores_caps_the_threads():
    A = tir.decl_buffer((8,), "float32", "A")
    i = tir.Var("i", "int32")
    body = S.For(i, 0, 8, S.ForKind.PARALLEL, S.BufferStore(A, E.FloatImm("float32", 1.0), [i]))
    a = tir.Var("a", "handle")
    gen = CSourceGenerator(Target("c -num-cores=3"))
    gen.add_function("f", tir.PrimFunc([a], body, buffer_map={a: A}))
    assert "kiln_parallel_launch(f_parallel_1, &kiln_closure_1, 3)" in gen.finish()


@pytest.mark.needs_cc
@pytest.mark.skipif(not HAVE_CC, reason="no system C compiler")
@pytest.mark.parametrize("target, lanes, register", [("c -mcpu=skylake-avx512", 16, "zmm"), ("c -mcpu=haswell", 8, "ymm")])
def test_packed_prologue_and_gemm_inner_loop(target, lanes, register):
    """Compiled for a named CPU (not run, so any host can check it): the 16-column tile is one AVX-512 register or
    two AVX2 ones per row."""
    s, args = matmul_schedule(64, 64, 64)
    m = kiln.build(s, args, target=target, name="mm")
    src = m.get_source()
    assert "int32_t mm(void* args, void* arg_type_ids, int32_t num_args" in src
    assert 'KilnAPISetLastError("mm: argument B must have dtype float32");' in src
    loop = src[src.index("for (int32_t k = 0"):]
    loop = loop[:loop.index("}")]
    # four accumulator rows of 16 floats, A broadcast per row and vector, aligned loads of packedB
    assert loop.count(f"kiln_bcast_float32x{lanes}_t(A") == 4 * 16 // lanes
    assert loop.count(f"*(float32x{lanes}_a*)(packedB") == 4 * 16 // lanes
    asm = m.get_source("asm")
    fmas = [line for line in asm.splitlines() if "vfmadd" in line]
    assert fmas and all(f"%{register}" in line for line in fmas)


@pytest.mark.needs_cc
@pytest.mark.skipif(not HAVE_CC, reason="no system C compiler")
def test_function_named_like_a_c_keyword():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
    m = kiln.build(te.create_schedule(B.op), [A, B], target="c", name="double")
    assert 'int32_t kiln_fn_double(' in m.get_source() and '__asm__("double")' in m.get_source()
    b = np.zeros(4, "float32")
    m["double"](np.ones(4, "float32"), b)
    assert (b == 2).all()


def _elementwise(dtype, build, lanes=1, out_dtype=None):
    A = tir.decl_buffer((16,), dtype, "A")
    B = tir.decl_buffer((16,), out_dtype or dtype, "B")
    i = tir.Var("i", "int32")
    idx = E.Ramp(E.Mul(i, E.IntImm("int32", lanes)), E.IntImm("int32", 1), lanes) if lanes > 1 else i
    body = S.For(i, 0, 16 // lanes, S.ForKind.SERIAL, S.BufferStore(B, build(E.BufferLoad(A, [idx])), [idx]))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    return tir.PrimFunc([a, b], body, buffer_map={a: A, b: B})


def test_narrow_integer_results_are_converted_back():
    """C computes int8/uint16/bool operands in int: each result is converted back, so it wraps (issue #10.6)."""
    src = _print(_elementwise("uint8", lambda v: tir.bitwise_xor(tir.bitwise_not(v), tir.const(3, "uint8"))))
    assert "B[i] = ((uint8_t)(((uint8_t)(~A[i])) ^ ((uint8_t)3U)));" in src
    src = _print(_elementwise("int8", lambda v: E.Div(E.Add(v, v), E.IntImm("int8", 2))))
    assert "B[i] = ((int8_t)(((int8_t)(A[i] + A[i])) / ((int8_t)2)));" in src
    src = _print(_elementwise("int32", lambda v: E.Add(v, v)))
    assert "(int32_t)(" not in src.split("{", 1)[1]  # int is not promoted: no conversions


def test_bool_vector_order_comparisons_account_for_masks():
    """A bool vector is a -1/0 mask, so ``a < b`` compares the masks the other way round (issue #10.5)."""
    src = _print(_elementwise("bool", lambda v: E.LT(v, E.Broadcast(E.IntImm("bool", 1), 8)), lanes=8))
    assert "kiln_bcast_boolx8(true) < (-__builtin_convertvector(" in src
    assert "kiln_bcast_boolx8" in src and "kiln_bcast_int32x8_t" not in src  # named by dtype, not by C type


@pytest.mark.skipif(not HAVE_CC, reason="no C compiler")
def test_float16_computes_in_float_and_rounds_each_operation():
    A = te.placeholder((16,), "float16", name="A")
    B = te.compute((16,), lambda i: tir.exp(A[i] * A[i] + A[i]), name="B")
    m = kiln.build(te.create_schedule(B.op), [A, B], target="c")
    src = m.get_source()
    product = "((_Float16)((((float)(A_1[i])) * ((float)(A_1[i])))))"  # rounded before the addition: no FMA
    assert f"((_Float16)((((float)({product})) + ((float)(A_1[i])))))" in src
    assert "((_Float16)(expf(" in src
    assert '__attribute__((optimize("fp-contract=off"))) int32_t default_function(' in src  # GCC would refuse
    assert "fp-contract" not in _print(_elementwise("float32", lambda v: v * v + v))  # float32 keeps its FMAs
    a = np.random.default_rng(0).uniform(-1, 1, 16).astype("float16")
    b = kiln.nd.empty((16,), "float16")
    m(kiln.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), np.exp(a * a + a))


@pytest.mark.skipif(not HAVE_CC, reason="no C compiler")
def test_selects_of_loads_in_unrolled_loops_stay_right():
    """GCC 12 at -O3 miscompiled ``c ? x[i] : k[i]`` over a 9 x 3 loop nest (the mask of the first vector reused
    for the next ones: element 16 came out 0); kiln compiles C without loop if-conversion."""
    shape = (9, 3)
    C, X, K = (te.placeholder(shape, "int32", name=n) for n in "CXK")
    out = te.compute(shape, lambda i, j: tir.Select(C[i, j] != 0, X[i, j], K[i, j]), name="out")
    pad = te.compute(shape, lambda i, j: te.if_then_else(C[i, j] != 0, X[i, j], 5), name="pad")
    m = kiln.build(te.create_schedule([out.op, pad.op]), [C, X, K, out, pad], target="c", name="select")
    c = np.ones(shape, "int32")
    c.flat[[2, 16]] = 0
    x, k = np.full(shape, 7, "int32"), np.arange(27, dtype="int32").reshape(shape)
    results = [kiln.nd.empty(shape, "int32"), kiln.nd.empty(shape, "int32")]
    m["select"](*[kiln.nd.array(a) for a in (c, x, k)], *results)
    np.testing.assert_array_equal(results[0].numpy(), np.where(c != 0, x, k))
    np.testing.assert_array_equal(results[1].numpy(), np.where(c != 0, x, 5))


@pytest.mark.skipif(not HAVE_CC, reason="no C compiler")
def test_vector_min_max_are_mask_blends():
    """Vector min/max are blends by the comparison's mask, not per-lane loops: GCC 12 at -O3 with
    -fno-tree-loop-if-convert dropped the lower bound of a clip of a converted int8 product from the loop form
    (fuzz seed 5903: -112 came out of clip(-112, -64, 64))."""
    A = te.placeholder((8,), "uint32", name="A")
    B = te.compute((8,), lambda i: tir.max(tir.min(tir.Cast("float64", tir.Cast("int8", A[i]) * tir.Cast("int8", A[i])),
                                                    tir.const(64.0, "float64")), tir.const(-64.0, "float64")),
                   name="B")
    s = te.create_schedule(B.op)
    s[B].vectorize(s[B].split(B.op.axis[0], factor=4)[1])
    m = kiln.build(s, [A, B], target="c")
    assert "for (int i = 0; i < 4; ++i) r[i] = kiln_max" not in m.get_source()
    a = np.array([1, 12, 200, 3, 255, 16, 11, 130], "uint32")
    b = kiln.nd.empty((8,), "float64")
    m(kiln.nd.array(a), b)
    square = a.astype("int8") * a.astype("int8")
    np.testing.assert_array_equal(b.numpy(), np.clip(square.astype("float64"), -64, 64))
