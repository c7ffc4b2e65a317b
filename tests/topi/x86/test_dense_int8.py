"""The int8 dense through 8-bit dot products (kiln/topi/x86/dense_int8.py) against numpy on random full-range
inputs, with reduction lengths and column counts that are not whole dot products or panels."""

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.target.compiler import have_cc
from kiln.target.llvm_compile import have_llvmlite
from kiln.testing import host_runs
from kiln.topi.x86.dense_int8 import dense_int8, int8_dense_supported, schedule_dense_int8

pytestmark = pytest.mark.skipif(not (have_cc() and have_llvmlite()), reason="needs llvmlite and a C compiler")


def dense_reference(data, weight):
    """``data @ weight.T`` in int64 sums."""
    return (data.astype(np.int64) @ weight.astype(np.int64).T).astype(np.int32)


@pytest.mark.parametrize("target, instruction", [("llvm -mcpu=cascadelake", "vpdpbusd"),
                                                  ("llvm -mcpu=skylake-avx512", "pmaddubsw"),
                                                  ("llvm -mcpu=core-avx2", "pmaddubsw"),
                                                  ("llvm -mcpu=nehalem", "pmaddubsw")])
@pytest.mark.parametrize("m, k, n", [(32, 96, 128), (5, 97, 20), (2, 3, 17)])
def test_dense_int8_matches_numpy(target, instruction, m, k, n):
    rng = np.random.default_rng(m * 7 + k)
    data_np = rng.integers(0, 256, (m, k)).astype("uint8")
    weight_np = rng.integers(-128, 128, (n, k)).astype("int8")
    data, weight = te.placeholder((m, k), "uint8", name="data"), te.placeholder((n, k), "int8", name="weight")
    with kiln.target.Target(target):
        out = dense_int8(data, weight, "int32", target)
        s = schedule_dense_int8([out], target)
    lib = kiln.build(s, [data, weight, out], target=target, name="f")
    assert instruction in lib.get_source("asm")
    if not host_runs(target):
        return  # code for a CPU this host lacks is only compiled and inspected
    result = kiln.nd.empty((m, n), "int32")
    lib["f"](kiln.nd.array(data_np), kiln.nd.array(weight_np), result)
    np.testing.assert_array_equal(result.numpy(), dense_reference(data_np, weight_np))


def test_supported():
    assert int8_dense_supported("uint8", "int8", "int32", "llvm -mcpu=core-avx2")
    assert not int8_dense_supported("int8", "int8", "int32", "llvm -mcpu=core-avx2")  # legalized first
    assert not int8_dense_supported("uint8", "int8", "int32", "llvm -mcpu=x86-64")
