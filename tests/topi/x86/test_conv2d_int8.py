"""The int8 convolution through 8-bit dot products (kiln/topi/x86/conv2d_int8.py): the instruction each x86 family's
code contains, and its values against numpy on random full-range inputs (on the families this host runs), with
channel counts that are not whole dot products or vectors."""

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.target.compiler import have_cc
from kiln.target.llvm_compile import have_llvmlite
from kiln.testing import host_runs
from kiln.topi.x86.conv2d_int8 import conv2d_nchw_int8, int8_conv2d_supported, int8_dot_lanes, schedule_conv2d_nchw_int8

pytestmark = pytest.mark.skipif(not (have_cc() and have_llvmlite()), reason="needs llvmlite and a C compiler")

TARGETS = {  # the instruction each CPU's code must contain
    "llvm -mcpu=cascadelake": "vpdpbusd",
    "llvm -mcpu=skylake-avx512": "pmaddubsw",
    "llvm -mcpu=core-avx2": "pmaddubsw",
    "llvm -mcpu=nehalem": "pmaddubsw",
}


def conv_reference(data, kernel, padding, strides):
    """NCHW/OIHW int32 convolution in numpy (int64 sums)."""
    top, left, bottom, right = padding
    n, c, h, w = data.shape
    o, _, kh, kw = kernel.shape
    d = np.pad(data.astype(np.int64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    k = kernel.astype(np.int64)
    oh = (d.shape[2] - kh) // strides + 1
    ow = (d.shape[3] - kw) // strides + 1
    out = np.zeros((n, o, oh, ow), np.int64)
    for y in range(oh):
        for x in range(ow):
            win = d[:, :, y * strides:y * strides + kh, x * strides:x * strides + kw]
            out[:, :, y, x] = np.einsum("nchw,ochw->no", win, k)
    return out.astype(np.int32)


def _build_and_run(target, data_np, kernel_np, padding, strides):
    """The convolution built for ``target`` (its code must hold the family's instruction), run when the host can;
    None when it cannot."""
    data = te.placeholder(data_np.shape, "uint8", name="data")
    kernel = te.placeholder(kernel_np.shape, "int8", name="kernel")
    with kiln.target.Target(target):
        out = conv2d_nchw_int8(data, kernel, (strides, strides), padding, (1, 1), "int32", target)
        s = schedule_conv2d_nchw_int8([out], target)
    lib = kiln.build(s, [data, kernel, out], target=target, name="f")
    assert TARGETS[target] in lib.get_source("asm")
    if not host_runs(target):
        return None
    result = kiln.nd.empty(tuple(int(d) for d in out.shape), "int32")
    lib["f"](kiln.nd.array(data_np), kiln.nd.array(kernel_np), result)
    return result.numpy()


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("channels, out_channels, padding, strides", [
    (8, 16, (1, 1, 1, 1), 1), (6, 20, (0, 0, 0, 1), 1), (17, 29, (1, 0, 2, 1), 2), (1, 4, (0, 0, 0, 0), 1),
])
def test_conv2d_nchw_int8_matches_numpy(target, channels, out_channels, padding, strides):
    rng = np.random.default_rng(channels * 31 + out_channels)
    data_np = rng.integers(0, 256, (1, channels, 9, 11)).astype("uint8")
    kernel_np = rng.integers(-128, 128, (out_channels, channels, 3, 3)).astype("int8")
    result = _build_and_run(target, data_np, kernel_np, padding, strides)
    if result is not None:
        np.testing.assert_array_equal(result, conv_reference(data_np, kernel_np, padding, strides))


@pytest.mark.parametrize("target", list(TARGETS))
def test_the_largest_products_do_not_saturate(target):
    """255 * 127 twice is beyond 16 bits, where TVM's single pmaddubsw saturates: exact on every CPU."""
    data_np = np.full((1, 4, 1, 1), 255, "uint8")
    kernel_np = np.concatenate([np.full((8, 4, 1, 1), 127, "int8"), np.full((8, 4, 1, 1), -128, "int8")])
    result = _build_and_run(target, data_np, kernel_np, (0,) * 4, 1)
    if result is not None:
        assert (result[0, :8] == 4 * 255 * 127).all() and (result[0, 8:] == 4 * 255 * -128).all()


def test_supported_dtypes_and_targets():
    assert int8_conv2d_supported("uint8", "int8", "int32", "llvm -mcpu=nehalem")
    assert not int8_conv2d_supported("uint8", "uint8", "int32", "llvm -mcpu=cascadelake")
    assert not int8_conv2d_supported("uint8", "int8", "int32", "llvm -mcpu=x86-64")  # no SSSE3
    assert not int8_conv2d_supported("uint8", "int8", "int32", "c")
    assert int8_dot_lanes("llvm -mcpu=core-avx2") == 8
    assert int8_dot_lanes("llvm -mcpu=cascadelake") == 16
