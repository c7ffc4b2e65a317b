"""The int8 dense through 8-bit dot products (kiln/topi/x86/dense_int8.py) against numpy on random full-range
inputs, with reduction lengths and column counts that are not whole dot products or panels."""

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.target.compiler import have_cc
from kiln.target.llvm_compile import have_llvmlite
from kiln.topi.x86.conv2d_int8 import int8_dot_lanes
from kiln.topi.x86.dense_int8 import dense_int8, int8_dense_supported, schedule_dense_int8

pytestmark = pytest.mark.skipif(not (have_cc() and have_llvmlite()), reason="needs llvmlite and a C compiler")


def dense_reference(data, weight, saturating):
    """``data @ weight.T`` in int64; with ``saturating``, products of reduction steps 4k+0,1 and 4k+2,3 (zero-padded
    to a multiple of 4) are summed with 16-bit saturation first, as pmaddubsw does."""
    k4 = (data.shape[1] + 3) // 4 * 4
    a = np.pad(data.astype(np.int64), ((0, 0), (0, k4 - data.shape[1])))
    b = np.pad(weight.astype(np.int64), ((0, 0), (0, k4 - data.shape[1])))
    prod = a[:, None, :] * b[None, :, :]
    if saturating:
        prod = np.clip(prod[:, :, 0::2] + prod[:, :, 1::2], -32768, 32767)
    return prod.sum(axis=2).astype(np.int32)


@pytest.mark.parametrize("target, instruction", [("llvm -mcpu=cascadelake", "vpdpbusd"),
                                                  ("llvm -mcpu=skylake-avx512", "pmaddubsw"),
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
    result = kiln.nd.empty((m, n), "int32")
    lib["f"](kiln.nd.array(data_np), kiln.nd.array(weight_np), result)
    np.testing.assert_array_equal(result.numpy(), dense_reference(data_np, weight_np, int8_dot_lanes(target)[1]))


def test_supported():
    assert int8_dense_supported("uint8", "int8", "int32", "llvm -mcpu=core-avx2")
    assert not int8_dense_supported("int8", "int8", "int32", "llvm -mcpu=core-avx2")  # legalized first
    assert not int8_dense_supported("uint8", "int8", "int32", "llvm -mcpu=x86-64")
