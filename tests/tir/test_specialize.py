"""PrimFunc.specialize binds scalar parameters and buffer signatures, folding the constants that appear."""

import numpy as np
import pytest

import kiln
from kiln import tir
from kiln.error import TIRError
from kiln.ir import assert_structural_equal
from kiln.script import tir as T  # noqa: N812
from kiln.tir.schedule.testing import assert_structural_equal_ignore_global_symbol


@T.prim_func
def scale(a: T.handle, b: T.handle, n: T.int32, k: T.float32):
    m = T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (m, n), "float32")
    for i, j in T.grid(m, n):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * k + T.Cast("float32", n * 2)


def test_specialize_scalar_and_buffer_then_run():
    a, b, n, k = scale.params
    func = scale.specialize({n: 4, a: tir.decl_buffer((3, 4), "float32")})
    assert len(func.params) == 3
    assert [int(d) for d in func.buffer_map[func.params[1]].shape] == [3, 4]  # B follows A's m = 3
    loop = func.body.block.body
    assert isinstance(loop.extent, tir.IntImm) and loop.extent.value == 3
    x = np.random.rand(3, 4).astype("float32")
    y = kiln.nd.empty((3, 4), "float32")
    kiln.build(func, target="llvm")(kiln.nd.array(x), y, 0.5)
    np.testing.assert_allclose(y.numpy(), x * 0.5 + 8, rtol=1e-6)


def test_specialize_symbolic_and_nothing():
    a, b, n, k = scale.params
    assert scale.specialize({}) is scale
    x = tir.Var("x", "int32")
    func = scale.specialize({n: x * 8})
    assert "x * 8" in func.script()

    @T.prim_func
    def expected(a: T.handle, b: T.handle, k: T.float32):
        m = T.int32()
        x = T.int32()
        A = T.match_buffer(a, (m, x * 8), "float32")
        B = T.match_buffer(b, (m, x * 8), "float32")
        for i, j in T.grid(m, x * 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * k + T.Cast("float32", x * 8 * 2)

    assert_structural_equal_ignore_global_symbol(func, expected)
    with pytest.raises(ValueError):
        assert_structural_equal(func, expected.with_attr("global_symbol", "other"))


def test_specialize_errors():
    a, b, n, k = scale.params
    with pytest.raises(TIRError, match="needs a Buffer"):
        scale.specialize({a: 3})
    with pytest.raises(TIRError, match="dimensions"):
        scale.specialize({a: tir.decl_buffer((3,), "float32")})
    with pytest.raises(TIRError, match="not a parameter"):
        scale.specialize({tir.Var("z", "int32"): 1})
