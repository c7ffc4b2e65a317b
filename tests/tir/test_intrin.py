"""TIR intrinsics with TVM's typing: ldexp keeps an integer exponent, clz counts into an int32, rounding is the
identity on integers; built with LLVM and compared with numpy."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import TIRError


def _build(out, args):
    return kiln.build(te.create_schedule(out.op), args, "llvm")


def test_ldexp_keeps_an_integer_exponent_and_runs():
    x, e = tir.Var("x", "float32"), tir.Var("e", "int32")
    call = tir.ldexp(x, e)
    assert call.dtype == "float32" and call.args[1].dtype == "int32"
    assert tir.ldexp(tir.const(1.5, "float32"), 3).value == 12.0
    with pytest.raises(TIRError, match="exponent must be an integer"):
        tir.ldexp(x, tir.const(2.0, "float32"))
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B", dtype="int32")
    C = te.compute((n,), lambda i: tir.ldexp(A[i], B[i]), name="C")
    f = _build(C, [A, B, C])
    rng = np.random.default_rng(0)
    a = rng.uniform(-2, 2, 37).astype("float32")
    b = rng.integers(-6, 6, 37).astype("int32")
    c = kiln.nd.array(np.zeros(37, "float32"))
    f(kiln.nd.array(a), kiln.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), np.ldexp(a, b), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_clz_counts_into_int32(dtype):
    assert tir.clz(tir.Var("v", dtype)).dtype == "int32"
    with pytest.raises(TIRError, match="integer"):
        tir.clz(tir.Var("f", "float32"))
    n = te.var("n")
    A = te.placeholder((n,), name="A", dtype=dtype)
    B = te.compute((n,), lambda i: tir.clz(A[i]), name="B")
    f = _build(B, [A, B])
    bits = int(dtype[3:])
    a = np.random.default_rng(1).integers(1, 2 ** (bits - 2), 50, dtype=dtype)
    b = kiln.nd.array(np.zeros(50, "int32"))
    f(kiln.nd.array(a), b)
    expected = [bits - int(v).bit_length() for v in a]
    np.testing.assert_array_equal(b.numpy(), expected)


def test_rounding_is_the_identity_on_integers():
    i = tir.Var("i", "int32")
    for op in (tir.round, tir.trunc, tir.ceil, tir.floor, tir.nearbyint):
        assert op(i) is i
        assert op(tir.const(10, "int32")).value == 10
        assert op(tir.const(True, "bool")).value
    assert isinstance(tir.floor(tir.Var("f", "float32")), tir.Call)


def test_if_then_else_needs_a_bool_condition():
    a, b = tir.Var("a", "uint32"), tir.Var("b", "int32")
    picked = tir.if_then_else(tir.Var("c", "bool"), a, b)
    assert picked.dtype == "uint32" and picked.args[2].dtype == "uint32"
    assert tir.if_then_else(True, b, tir.Var("f", "float32")).dtype == "float32"
    with pytest.raises(TIRError, match="condition must be a bool"):
        tir.if_then_else(tir.Var("i", "int32"), a, b)
