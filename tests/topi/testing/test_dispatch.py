"""topi.testing.dispatch picks a target's schedule by its keys; the generic schedules it falls back to build
correct code (checked against numpy)."""

import numpy as np
import pytest

import kiln
from kiln import te, topi
from kiln.error import KilnError
from kiln.topi import testing


def test_dispatch_by_keys():
    table = {"generic": "g", "cpu": "c"}
    assert testing.dispatch("llvm", table) == "c"
    assert testing.dispatch(kiln.target.Target("c"), {"generic": "g"}) == "g"
    assert testing.get_elemwise_schedule("llvm") is topi.x86.schedule_injective
    assert testing.get_conv2d_nchw_implement("llvm") == (topi.x86.conv2d_nchw, topi.x86.schedule_conv2d_nchw)
    with pytest.raises(KilnError, match="no 'generic' entry"):
        testing.dispatch("llvm", {"gpu": 1})


@pytest.mark.parametrize("axis", [0, 1])
def test_generic_softmax_schedule(axis):
    x = np.random.uniform(size=(6, 9)).astype("float32")
    A = te.placeholder(x.shape, name="A")
    B = topi.nn.softmax(A, axis=axis)
    s = topi.generic.schedule_softmax(B)
    f = kiln.build(s, [A, B], "llvm")
    out = kiln.nd.empty(x.shape, "float32")
    f(kiln.nd.array(x), out)
    e = np.exp(x - x.max(axis, keepdims=True))
    np.testing.assert_allclose(out.numpy(), e / e.sum(axis, keepdims=True), rtol=1e-5)


def test_generic_conv2d_schedule():
    x = np.random.uniform(size=(1, 3, 8, 8)).astype("float32")
    w = np.random.uniform(size=(4, 3, 3, 3)).astype("float32")
    compute, schedule = topi.nn.conv2d_nchw, topi.generic.schedule_conv2d_nchw
    A, W = te.placeholder(x.shape, name="A"), te.placeholder(w.shape, name="W")
    C = compute(A, W, 1, 1, 1)
    f = kiln.build(schedule([C]), [A, W, C], "llvm")
    out = kiln.nd.empty((1, 4, 8, 8), "float32")
    f(kiln.nd.array(x), kiln.nd.array(w), out)
    np.testing.assert_allclose(out.numpy(), testing.conv2d_nchw_python(x, w, 1, 1), rtol=1e-4)
