"""The LLVM backend's output (kiln/target/codegen_llvm.py, codegen_llvm_calls.py, codegen_llvm_parallel.py,
llvm_types.py, llvm_compile.py): vector IR, intrinsics, outlined parallel loops, alignment, optimization."""

import pytest

import kiln
from kiln import tir
from kiln.arith import Analyzer
from kiln.target import Target
from kiln.target.codegen_common import alignment_of
from kiln.te.examples import matmul_schedule
from kiln.tir import expr as E
from kiln.tir import stmt as S

from .conftest import HAVE_CC, HAVE_LLVM

pytestmark = [pytest.mark.needs_llvmlite]
needs_llvm = pytest.mark.skipif(not HAVE_LLVM, reason="needs llvmlite and a C compiler")


def _generate(func, target="llvm"):
    from kiln.target.codegen_llvm import LLVMGenerator

    gen = LLVMGenerator(Target(target))
    gen.add_function("f", func)
    import llvmlite.binding as llvm

    return str(llvm.parse_assembly(str(gen.module)))  # LLVM's own spelling of the module


def _vector_func(kind=S.ForKind.SERIAL):
    A = tir.decl_buffer((64,), "float32", "A")
    B = tir.decl_buffer((64,), "float32", "B")
    i = tir.Var("i", "int32")
    idx = E.Ramp(E.Mul(i, E.IntImm("int32", 16)), E.IntImm("int32", 1), 16)
    load = E.BufferLoad(A, [idx])
    value = tir.call_intrin("float32x16", "tir.fma", load, load, tir.exp(load))
    body = S.For(i, 0, 4, kind, S.BufferStore(B, E.Add(value, E.Broadcast(E.FloatImm("float32", 1.0), 16)), [idx]))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    return tir.PrimFunc([a, b], body, buffer_map={a: A, b: B})


@pytest.mark.skipif(not HAVE_LLVM, reason="needs llvmlite")
def test_vector_ir_and_intrinsics():
    ir = _generate(_vector_func())
    assert "<16 x float>" in ir
    assert "@llvm.fma.v16f32" in ir and "@llvm.exp.v16f32" in ir
    assert "fadd contract <16 x float>" in ir
    assert "align 64" in ir  # i * 16 floats from a 64-byte aligned buffer


@pytest.mark.skipif(not HAVE_LLVM, reason="needs llvmlite")
def test_parallel_loop_is_outlined():
    ir = _generate(_vector_func(S.ForKind.PARALLEL))
    assert "define internal i32 @f_parallel_1(i32 %task_id, i32 %num_tasks, ptr noalias %closure)" in ir
    assert "call i32 @kiln_parallel_launch(" in ir
    assert "i32 0)" in ir.split("call i32 @kiln_parallel_launch(")[1].split("\n")[0]  # OpenMP's thread count
    ir3 = _generate(_vector_func(S.ForKind.PARALLEL), "llvm -num-cores=3")
    assert "i32 3)" in ir3.split("call i32 @kiln_parallel_launch(")[1].split("\n")[0]


def test_alignment_from_modular_sets():
    ana = Analyzer()
    i = tir.Var("i", "int32")
    assert alignment_of(ana, E.Mul(i, E.IntImm("int32", 16)), 16, "float32", 64) == 64
    assert alignment_of(ana, E.Mul(i, E.IntImm("int32", 8)), 16, "float32", 64) == 32
    assert alignment_of(ana, E.Add(E.Mul(i, E.IntImm("int32", 16)), E.IntImm("int32", 4)), 16, "float32", 64) == 16
    assert alignment_of(ana, E.Add(i, E.IntImm("int32", 1)), 16, "float32", 64) == 4
    assert alignment_of(ana, E.IntImm("int32", 0), 8, "float64", 64) == 64
    assert alignment_of(ana, E.Mul(i, E.IntImm("int32", 16)), 16, "float32", 16) == 16  # the buffer's alignment caps


@needs_llvm
@pytest.mark.needs_cc
@pytest.mark.parametrize("target, register", [("llvm -mcpu=skylake-avx512", "zmm"), ("llvm -mcpu=haswell", "ymm")])
def test_gemm_inner_loop_is_tight(target, register):
    s, args = matmul_schedule(256, 256, 256)
    m = kiln.build(s, args, target=target, name="mm")
    ir = m.get_source("ll")
    assert "@mm_parallel_" in ir and "<16 x float>" in ir
    fmas = [line for line in m.get_source("asm").splitlines() if "vfmadd231ps" in line]
    assert fmas and all(f"%{register}" in line for line in fmas)  # the 16-lane tile in one or two registers


@needs_llvm
@pytest.mark.needs_cc
def test_named_cpu_target_compiles():
    s, args = matmul_schedule(32, 32, 32)
    m = kiln.build(s, args, target="llvm -mcpu=x86-64 -opt-level=2", name="mm")
    assert "zmm" not in m.get_source("asm")  # baseline x86-64 has no AVX-512
    import numpy as np

    a, b = np.ones((32, 32), "float32"), np.ones((32, 32), "float32")
    c = np.zeros((32, 32), "float32")
    m(a, b, c)
    assert (c == 32).all()


def test_have_cc_flag_is_consistent():
    assert HAVE_LLVM <= HAVE_CC


@pytest.mark.skipif(not HAVE_LLVM, reason="needs llvmlite")
@pytest.mark.parametrize("cpu", ["haswell", "sapphirerapids"])
def test_float16_arithmetic_is_never_contracted(cpu):
    """float16 rounds after every operation: no ``contract`` flag on half arithmetic (an AVX512-FP16 CPU would fuse
    ``a * b + a`` into one half FMA), while float32 keeps it for the GEMM and convolution kernels."""
    for dtype, flag in (("float16", ""), ("float32", "contract ")):
        A = tir.decl_buffer((16,), dtype, "A")
        i = tir.Var("i", "int32")
        a = tir.Var("a", "handle")
        value = E.Add(E.Mul(A[i], A[i]), A[i])
        func = tir.PrimFunc([a], S.For(i, 0, 16, S.ForKind.SERIAL, S.BufferStore(A, value, [i])), buffer_map={a: A})
        ir = _generate(func, f"llvm -mcpu={cpu}")
        ty = "half" if dtype == "float16" else "float"
        assert f"fmul {flag}{ty} " in ir and f"fadd {flag}{ty} " in ir
