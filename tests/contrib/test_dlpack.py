"""DLPack exchange: NDArray.to_dlpack / nd.from_dlpack share memory with numpy, and convert_func passes another
framework's tensors (here numpy arrays through their capsules) to a built function."""

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.contrib.dlpack import convert_func
from kiln.error import KilnError


def test_round_trip_shares_memory():
    a = kiln.nd.array(np.arange(6, dtype="float32").reshape(2, 3))
    b = kiln.nd.from_dlpack(a.to_dlpack())
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    a.copyfrom(np.full((2, 3), 42.0, "float32"))
    assert b.numpy()[1, 2] == 42.0
    c = kiln.nd.from_dlpack(np.ones(3, "int64"))
    assert c.dtype == "int64" and c.numpy().sum() == 3


def test_convert_func_writes_into_the_callers_tensor():
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] * 2.0, name="B")
    f = kiln.build(te.create_schedule(B.op), [A, B], "llvm")
    g = convert_func(f, np.ndarray, lambda t: t.__dlpack__())
    # 64-byte aligned host arrays (what kiln's kernels require), exchanged as bare capsules
    x = kiln.nd.array(np.random.uniform(size=16).astype("float32")).handle
    y = kiln.nd.empty((16,), "float32").handle
    g(x, y)
    np.testing.assert_allclose(y, x * 2.0)


def test_bad_input():
    with pytest.raises(KilnError, match="DLPack capsule"):
        kiln.nd.from_dlpack([1, 2])
    with pytest.raises(KilnError, match="not callable"):
        convert_func(3, np.ndarray, None)
