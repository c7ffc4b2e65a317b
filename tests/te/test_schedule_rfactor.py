"""Schedule.rfactor: the factored stage's shape and axes, and the factored schedule (parallel, vectorized partial
sums, with and without a split tail) computing the same sums as numpy."""

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.error import TIRError


def _sum_rows(n=10, m=37):
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), name="k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    return A, B, k


def _run(s, A, B, shape):
    a = np.random.uniform(size=shape).astype("float32")
    out = kiln.nd.empty((shape[0],), "float32")
    kiln.build(s, [A, B], "llvm")(kiln.nd.array(a), out)
    np.testing.assert_allclose(out.numpy(), a.sum(1), rtol=1e-5)


@pytest.mark.parametrize("which", ["inner", "outer", "whole"])
@pytest.mark.parametrize("factor_axis", [0, 1])
def test_rfactor_computes_the_sum(which, factor_axis):
    A, B, k = _sum_rows()
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(k, factor=8)  # 37 = 4 * 8 + 5: a tail
    axis = {"inner": ki, "outer": ko, "whole": k}[which]
    if which == "whole":
        s = te.create_schedule(B.op)
    BF = s.rfactor(B, axis, factor_axis)
    extent = {"inner": 8, "outer": 5, "whole": 37}[which]
    assert int(BF.shape[factor_axis]) == extent and int(BF.shape[1 - factor_axis]) == 10
    assert int(s[B].op.reduce_axis[0].dom.extent) == extent
    if which == "inner" and factor_axis == 0:
        s[BF].parallel(s[BF].op.axis[0])
    _run(s, A, B, (10, 37))


def test_rfactor_errors():
    A, B, k = _sum_rows()
    s = te.create_schedule(B.op)
    with pytest.raises(TIRError, match="not a reduction loop"):
        s.rfactor(B, B.op.axis[0])
    with pytest.raises(TIRError, match="out of range"):
        s.rfactor(B, k, 3)
