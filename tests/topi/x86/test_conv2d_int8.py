"""The int8 convolution through 8-bit dot products (kiln/topi/x86/conv2d_int8.py): values against numpy on random
inputs for every x86 instruction family, with channel counts that are not whole dot products or vectors, and the
instruction actually emitted."""

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.target.compiler import have_cc
from kiln.target.llvm_compile import have_llvmlite
from kiln.topi.x86.conv2d_int8 import conv2d_nchw_int8, int8_conv2d_supported, int8_dot_lanes, schedule_conv2d_nchw_int8

pytestmark = pytest.mark.skipif(not (have_cc() and have_llvmlite()), reason="needs llvmlite and a C compiler")

TARGETS = {  # the instruction each CPU's code must contain
    "llvm -mcpu=cascadelake": "vpdpbusd",
    "llvm -mcpu=skylake-avx512": "pmaddubsw",
    "llvm -mcpu=core-avx2": "pmaddubsw",
    "llvm -mcpu=nehalem": "pmaddubsw",
}


def conv_reference(data, kernel, padding, strides, saturating):
    """NCHW/OIHW int32 convolution in numpy; with ``saturating``, each pair of adjacent input channels' products
    (channels 4k+0,1 and 4k+2,3, zero-padded to a multiple of 4) is summed with 16-bit saturation first."""
    top, left, bottom, right = padding
    n, c, h, w = data.shape
    o, _, kh, kw = kernel.shape
    c4 = (c + 3) // 4 * 4
    d = np.pad(data.astype(np.int64), ((0, 0), (0, c4 - c), (top, bottom), (left, right)))
    k = np.pad(kernel.astype(np.int64), ((0, 0), (0, c4 - c), (0, 0), (0, 0)))
    oh = (d.shape[2] - kh) // strides + 1
    ow = (d.shape[3] - kw) // strides + 1
    out = np.zeros((n, o, oh, ow), np.int64)
    for y in range(oh):
        for x in range(ow):
            win = d[:, :, y * strides:y * strides + kh, x * strides:x * strides + kw]
            prod = np.einsum("nchw,ochw->nochw", win, k)
            if saturating:
                prod = prod.reshape(n, o, c4 // 4, 4, kh, kw)
                prod = np.clip(prod[:, :, :, 0::2] + prod[:, :, :, 1::2], -32768, 32767)
            out[:, :, y, x] = prod.reshape(n, o, -1).sum(axis=2)
    return out.astype(np.int32)


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("channels, out_channels, padding, strides", [
    (8, 16, (1, 1, 1, 1), 1), (6, 20, (0, 0, 0, 1), 1), (17, 29, (1, 0, 2, 1), 2), (1, 4, (0, 0, 0, 0), 1),
])
def test_conv2d_nchw_int8_matches_numpy(target, channels, out_channels, padding, strides):
    rng = np.random.default_rng(channels * 31 + out_channels)
    shape, kshape = (1, channels, 9, 11), (out_channels, channels, 3, 3)
    data_np = rng.integers(0, 256, shape).astype("uint8")
    kernel_np = rng.integers(-128, 128, kshape).astype("int8")
    data, kernel = te.placeholder(shape, "uint8", name="data"), te.placeholder(kshape, "int8", name="kernel")
    with kiln.target.Target(target):
        out = conv2d_nchw_int8(data, kernel, (strides, strides), padding, (1, 1), "int32", target)
        s = schedule_conv2d_nchw_int8([out], target)
        saturating = int8_dot_lanes(target)[1]
    lib = kiln.build(s, [data, kernel, out], target=target, name="f")
    assert TARGETS[target] in lib.get_source("asm")
    result = kiln.nd.empty(tuple(int(d) for d in out.shape), "int32")
    lib["f"](kiln.nd.array(data_np), kiln.nd.array(kernel_np), result)
    np.testing.assert_array_equal(result.numpy(), conv_reference(data_np, kernel_np, padding, strides, saturating))


def test_saturation_is_the_instruction_s():
    """Without VNNI, a pair of products beyond 16 bits saturates as pmaddubsw does; with VNNI nothing does."""
    data_np = np.full((1, 4, 1, 1), 255, "uint8")
    kernel_np = np.full((16, 4, 1, 1), 127, "int8")
    assert conv_reference(data_np, kernel_np, (0,) * 4, 1, True)[0, 0, 0, 0] == 2 * 32767
    for target, expected in (("llvm -mcpu=skylake-avx512", 2 * 32767), ("llvm -mcpu=cascadelake", 4 * 255 * 127)):
        data, kernel = te.placeholder((1, 4, 1, 1), "uint8"), te.placeholder((16, 4, 1, 1), "int8")
        with kiln.target.Target(target):
            out = conv2d_nchw_int8(data, kernel, (1, 1), 0, (1, 1), "int32", target)
            s = schedule_conv2d_nchw_int8([out], target)
        lib = kiln.build(s, [data, kernel, out], target=target, name="f")
        result = kiln.nd.empty((1, 16, 1, 1), "int32")
        lib["f"](kiln.nd.array(data_np), kiln.nd.array(kernel_np), result)
        assert (result.numpy() == expected).all()


def test_supported_dtypes_and_targets():
    assert int8_conv2d_supported("uint8", "int8", "int32", "llvm -mcpu=nehalem")
    assert not int8_conv2d_supported("uint8", "uint8", "int32", "llvm -mcpu=cascadelake")
    assert not int8_conv2d_supported("uint8", "int8", "int32", "llvm -mcpu=x86-64")  # no SSSE3
    assert not int8_conv2d_supported("uint8", "int8", "int32", "c")
    assert int8_dot_lanes("llvm -mcpu=core-avx2") == (8, True)
    assert int8_dot_lanes("llvm -mcpu=cascadelake") == (16, False)
