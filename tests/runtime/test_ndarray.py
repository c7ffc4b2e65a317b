import numpy as np
import pytest

import kiln
from kiln.error import KilnError
from kiln.runtime.ndarray import ALIGNMENT


def test_array_roundtrip_and_alignment():
    src = np.arange(12, dtype="float32").reshape(3, 4)
    a = kiln.nd.array(src)
    assert a.shape == (3, 4) and a.dtype == "float32" and a.ndim == 2
    assert a.handle.ctypes.data % ALIGNMENT == 0
    out = a.numpy()
    np.testing.assert_array_equal(out, src)
    out[0, 0] = 99  # numpy() is a copy
    assert a.numpy()[0, 0] == 0


def test_empty_and_copy():
    e = kiln.nd.empty((2, 5), "int64")
    assert e.shape == (2, 5) and e.dtype == "int64"
    assert e.handle.ctypes.data % ALIGNMENT == 0
    e.copyfrom(np.ones((2, 5)))
    np.testing.assert_array_equal(e.numpy(), np.ones((2, 5), "int64"))
    with pytest.raises(KilnError, match="shape mismatch"):
        e.copyfrom(np.ones((5, 2)))
    f = e.copyto(kiln.cpu(0))
    np.testing.assert_array_equal(f.numpy(), e.numpy())


def test_scalar_and_bool_arrays():
    s = kiln.nd.array(np.float32(2.5))
    assert s.shape == () and s.numpy() == np.float32(2.5)
    b = kiln.nd.array(np.array([True, False]))
    assert b.dtype == "bool"


def test_dlpack_both_ways():
    a = kiln.nd.array(np.arange(6, dtype="float32"))
    viewed = np.from_dlpack(a)
    np.testing.assert_array_equal(viewed, np.arange(6, dtype="float32"))
    b = kiln.nd.from_dlpack(np.arange(4, dtype="int32"))
    assert isinstance(b, kiln.nd.NDArray) and b.dtype == "int32"
    assert a.__dlpack_device__()[0] == 1


def test_unknown_dtype():
    with pytest.raises(KilnError, match="dtype"):
        kiln.nd.empty((2,), "notatype")


def test_devices():
    assert str(kiln.cpu(0)) == "cpu(0)"
    assert kiln.device("llvm", 0) == kiln.cpu(0)
    assert kiln.device("cpu", 0) == kiln.cpu(0)
    assert kiln.cpu(0).exist
    with pytest.raises(KilnError, match="unknown device"):
        kiln.device("tpu")
