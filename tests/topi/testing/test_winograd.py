"""kiln/topi/testing/winograd.py: the numpy Winograd and GEMM convolutions against the direct convolution, on
random inputs, for every tile size, kernels 3..7, asymmetric padding, 2-D and 3-D (depth transformed or not)."""

import numpy as np
import pytest

from kiln.topi.testing import conv2d_nchw_python, conv3d_ncdhw_python
from kiln.topi.testing import winograd as W
from kiln.topi.testing.conv import conv_ncx_python

RNG = np.random.default_rng(41)


@pytest.mark.parametrize("tile", range(2, 9))
@pytest.mark.parametrize("k", [3, 5, 7])
def test_conv2d_winograd_is_the_convolution(tile, k):
    x, w = RNG.standard_normal((2, 3, 12, 9)), RNG.standard_normal((4, 3, k, k))
    packed = W.conv2d_winograd_weight_transform_python(w, tile)
    assert packed.shape == (tile + k - 1, tile + k - 1, 4, 3)
    pads = (k // 2, 1, 0, k // 2)
    got = W.conv2d_winograd_nchw_python(x, packed, tile, pads)
    # large tiles lose precision (the points spread out): what TVM's tests allow is 1e-3 relative at tile 4
    np.testing.assert_allclose(got, conv2d_nchw_python(x, w, 1, pads), rtol=1e-7 * 10 ** tile, atol=1e-7 * 10 ** tile)


@pytest.mark.parametrize("ksize", [(3, 3, 3), (5, 5, 5), (1, 3, 3), (8, 3, 3), (2, 5, 5)])
def test_conv3d_winograd_is_the_convolution(ksize):
    x, w = RNG.standard_normal((2, 2, 9, 7, 6)), RNG.standard_normal((3, 2, *ksize))
    packed = W.conv3d_winograd_weight_transform_python(w, 3)
    alpha = 3 + ksize[1] - 1
    assert packed.shape == (alpha, alpha, alpha if 2 < ksize[0] < 8 else ksize[0], 3, 2)
    pads = (1, 0, 2, 0, 2, 1)
    got = W.winograd_conv_python(x, packed, 3, ksize, (2 < ksize[0] < 8, True, True), pads)
    np.testing.assert_allclose(got, conv3d_ncdhw_python(x, w, 1, pads), rtol=1e-8, atol=1e-8)


def test_float16_computes_in_float32():
    x, w = RNG.standard_normal((1, 2, 6, 6)).astype("float16"), RNG.standard_normal((2, 2, 3, 3)).astype("float16")
    packed = W.conv2d_winograd_weight_transform_python(w, 2)
    got = W.conv2d_winograd_nchw_python(x, packed, 2, (1, 1))
    assert got.dtype == np.float16 and packed.dtype == np.float16
    want = conv2d_nchw_python(x.astype("float32"), w.astype("float32"), 1, 1)
    np.testing.assert_allclose(got.astype("float32"), want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8"])
def test_gemm_tiles_hold_the_flattened_kernel(dtype):
    w = RNG.integers(0, 100, (3, 2, 5, 7)).astype(dtype)
    tiled = W.conv2d_gemm_weight_transform_python(w, 4, 8)
    flat = w.reshape(30, 7)  # (kh, kw, ic) rows, oc columns
    # K = 30 pads to 32 (four tiles of 8), N = 7 to 8
    if dtype == "float32":
        assert tiled.shape == (2, 4, 8, 4)
        assert tiled[1, 2, 5, 2] == flat[2 * 8 + 5, 1 * 4 + 2]
    else:  # 8-bit tiles are transposed
        assert tiled.shape == (2, 4, 4, 8)
        assert tiled[1, 2, 2, 5] == flat[2 * 8 + 5, 1 * 4 + 2]
    assert (tiled[1, :, :, :] != 0).sum() <= 30 * 3  # only the real weights of the last column tile are non-zero


@pytest.mark.parametrize("dtype, out_dtype", [("float32", None), ("int8", "int32")])
def test_gemm_convolution_is_the_convolution(dtype, out_dtype):
    x, w = RNG.integers(-9, 9, (2, 8, 7, 3)).astype(dtype), RNG.integers(-9, 9, (2, 3, 3, 5)).astype(dtype)
    tiled = W.conv2d_gemm_weight_transform_python(w, 4, 4)
    got = W.conv2d_gemm_nhwc_python(x, tiled, (2, 3), 5, (1, 2), (1, 0, 0, 2), (2, 1), out_dtype)
    want = conv_ncx_python(x.transpose(0, 3, 1, 2).astype("float64"), w.transpose(3, 2, 0, 1).astype("float64"),
                           (1, 2), (1, 0, 0, 2), (2, 1)).transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(got, want.astype(out_dtype or dtype))
