"""kiln.runtime.convert (TVM's tvm.runtime.convert)."""

import numpy as np

import kiln
from kiln import tir
from kiln.ir import structural_equal


def test_numbers_become_tir_constants():
    assert structural_equal(kiln.runtime.convert(1), tir.IntImm("int32", 1))
    assert kiln.runtime.convert(2.5).dtype == "float32" and kiln.runtime.convert(True).dtype == "bool"
    assert kiln.runtime.convert(np.uint8(7)).dtype == "uint8"
    assert kiln.runtime.convert(2**40).dtype == "int64"


def test_containers_and_objects():
    out = kiln.runtime.convert([1, "a", (2.0,), {"k": 3}])
    assert isinstance(out, tuple) and out[1] == "a" and out[2][0].dtype == "float32" and out[3]["k"].value == 3
    x = kiln.relay.var("x")
    arr = kiln.nd.array(np.ones(2, "float32"))
    assert kiln.runtime.convert(x) is x and kiln.runtime.convert(arr) is arr and kiln.runtime.convert(None) is None
