"""Arithmetic on te.Tensor builds topi's broadcasting computes, from either side and with TIR scalars, and the
built kernels match numpy."""

import numpy as np

import kiln
from kiln import te, tir, topi


def test_operand_kinds():
    n = te.var("n")
    A = te.placeholder((), name="A")
    B = te.placeholder((10, 5), name="B")
    for expr in (1 + B, B + 1, n + B, B - n, n * B, B / 2.0, A + B, B + A, B[0, 0] + B, B + B[0, 0]):
        assert isinstance(expr, te.Tensor)
    assert (2 + B).op.tag == topi.tag.ELEMWISE and (A + B).op.tag == topi.tag.BROADCAST
    assert isinstance(n + n, tir.PrimExpr) and isinstance(B[0, 0] + 1, tir.PrimExpr)


def test_combination_runs():
    x = te.var("x", "float32")
    A, B, C = (te.placeholder((5, 10), name=c) for c in "ABC")
    D = 3 + A - B * C + x
    E = D / 2.0 - 1.0 * (x - A)
    f = kiln.build(te.create_schedule(E.op), [x, A, B, C, E], "llvm")
    a, b, c = (np.random.uniform(size=(5, 10)).astype("float32") for _ in range(3))
    out = kiln.nd.empty((5, 10), "float32")
    f(2.0, kiln.nd.array(a), kiln.nd.array(b), kiln.nd.array(c), out)
    np.testing.assert_allclose(out.numpy(), (3 + a - b * c + 2.0) / 2.0 - (2.0 - a), rtol=1e-5)
