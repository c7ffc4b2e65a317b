"""kiln/topi/nn/conv_winograd.py and conv_gemm.py: the computes compiled for c and llvm against topi's numpy
references (kiln/topi/testing/winograd.py) and the direct convolution."""

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.error import OpAttributeInvalid
from kiln.topi.nn import conv_gemm, conv_winograd
from kiln.topi.testing import conv2d_nchw_python, conv2d_nhwc_python, conv3d_ncdhw_python
from kiln.topi.testing import winograd as ref
from kiln.topi.testing.conv import conv_ncx_python

from ...target.conftest import TARGETS

RNG = np.random.default_rng(31)


def run(tensors, out, arrays, target):
    func = kiln.build(te.create_schedule(out.op), [*tensors, out], target)
    result = kiln.nd.empty(tuple(int(d) for d in out.shape), out.dtype)
    func(*[kiln.nd.array(a) for a in arrays], result)
    return result.numpy()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("tile, k, pads", [(2, 3, (1, 1, 1, 1)), (4, 3, (0, 1, 2, 0)), (3, 5, (2, 2, 2, 2))])
def test_conv2d_nchw_and_its_weight_transform(target, tile, k, pads):
    x, w = RNG.standard_normal((2, 3, 10, 9)).astype("float32"), RNG.standard_normal((4, 3, k, k)).astype("float32")
    xt, wt = te.placeholder(x.shape, "float32", "x"), te.placeholder(w.shape, "float32", "w")
    packed = run([wt], conv_winograd.conv2d_winograd_weight_transform(wt, tile), [w], target)
    np.testing.assert_allclose(packed, ref.conv2d_winograd_weight_transform_python(w, tile), rtol=1e-5, atol=1e-5)
    want = conv2d_nchw_python(x, w, 1, pads)
    # the whole convolution, and the one of a transformed weight
    got = run([xt, wt], conv_winograd.conv2d_winograd_nchw(xt, wt, 1, pads, 1, "float32", tile_size=tile), [x, w],
              target)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    pt = te.placeholder(packed.shape, "float32", "u")
    out = conv_winograd.conv2d_winograd_nchw_without_weight_transform(xt, pt, 1, pads, 1, "float32", tile)
    got = run([xt, pt], out, [x, packed], target)
    np.testing.assert_allclose(got, ref.conv2d_winograd_nchw_python(x, packed, tile, pads), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_conv2d_nhwc_default_tile(target):
    x, w = RNG.standard_normal((1, 9, 7, 5)).astype("float32"), RNG.standard_normal((3, 3, 5, 6)).astype("float32")
    xt, wt = te.placeholder(x.shape, "float32", "x"), te.placeholder(w.shape, "float32", "w")
    out = conv_winograd.conv2d_winograd_nhwc(xt, wt, 1, "SAME", 1, "float32")
    np.testing.assert_allclose(run([xt, wt], out, [x, w], target), conv2d_nhwc_python(x, w, 1, "SAME"), rtol=1e-3,
                               atol=1e-3)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ksize", [(3, 3, 3), (1, 3, 3)])
def test_conv3d(target, ksize):
    x, w = RNG.standard_normal((1, 2, 5, 6, 7)).astype("float32"), RNG.standard_normal((3, 2, *ksize)).astype("float32")
    wt = te.placeholder(w.shape, "float32", "w")
    packed = run([wt], conv_winograd.conv3d_winograd_weight_transform(wt, 2), [w], target)
    np.testing.assert_allclose(packed, ref.conv3d_winograd_weight_transform_python(w, 2), rtol=1e-5, atol=1e-5)
    xt, pt = te.placeholder(x.shape, "float32", "x"), te.placeholder(packed.shape, "float32", "u")
    out = conv_winograd.conv3d_winograd_without_weight_transform(xt, pt, 1, (1, 1, 1), 1, "float32", 2, ksize)
    np.testing.assert_allclose(run([xt, pt], out, [x, packed], target), conv3d_ncdhw_python(x, w, 1, (1, 1, 1)),
                               rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype, out_dtype", [("float32", "float32"), ("int8", "int32"), ("uint8", "int32")])
def test_conv2d_gemm(target, dtype, out_dtype):
    x = RNG.integers(0, 9, (2, 7, 6, 5)).astype(dtype)
    w = RNG.integers(0, 9, (3, 2, 5, 7)).astype(dtype)
    wt = te.placeholder(w.shape, dtype, "w")
    tiled = run([wt], conv_gemm.conv2d_gemm_weight_transform(wt, 4, 8), [w], target)
    np.testing.assert_array_equal(tiled, ref.conv2d_gemm_weight_transform_python(w, 4, 8))
    xt, tt = te.placeholder(x.shape, dtype, "x"), te.placeholder(tiled.shape, dtype, "t")
    out = conv_gemm.conv2d_gemm_without_weight_transform(xt, tt, (2, 1), (1, 0, 2, 1), (1, 2), out_dtype, (3, 2), 7)
    want = conv_ncx_python(x.transpose(0, 3, 1, 2).astype("float64"), w.transpose(3, 2, 0, 1).astype("float64"),
                           (2, 1), (1, 0, 2, 1), (1, 2)).transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(run([xt, tt], out, [x, tiled], target), want.astype(out_dtype))


def test_unsupported_convolutions_are_refused():
    x, w = te.placeholder((1, 2, 8, 8), "float32"), te.placeholder((3, 2, 3, 3), "float32")
    with pytest.raises(OpAttributeInvalid, match="conv2d_winograd_nchw: Winograd supports only strides 1"):
        conv_winograd.conv2d_winograd_nchw(x, w, 2, 1, 1, "float32")
    with pytest.raises(OpAttributeInvalid, match="must be equal"):
        conv_winograd.conv2d_winograd_weight_transform(te.placeholder((3, 2, 3, 5), "float32"), 2)
    with pytest.raises(OpAttributeInvalid, match="needs a float dtype"):
        conv_winograd.conv2d_winograd_weight_transform(te.placeholder((3, 2, 3, 3), "int8"), 2)
    with pytest.raises(OpAttributeInvalid, match="does not fit tile_size=2"):
        conv_winograd.conv2d_winograd_nchw_without_weight_transform(x, te.placeholder((4, 5, 3, 2), "float32"), 1, 1,
                                                                    1, "float32", 2)
    with pytest.raises(OpAttributeInvalid, match="holds fewer than"):
        conv_gemm.conv2d_gemm_without_weight_transform(te.placeholder((1, 5, 5, 4), "float32"),
                                                       te.placeholder((1, 1, 4, 4), "float32"), 1, 0, 1, "float32",
                                                       (3, 3), 4)


@pytest.mark.parametrize("target", TARGETS)
def test_generic_schedules_of_the_weight_transforms(target):
    from kiln.topi import generic

    w = RNG.standard_normal((3, 2, 3, 3)).astype("float32")
    wt = te.placeholder(w.shape, "float32", "w")
    out = conv_winograd.conv2d_winograd_weight_transform(wt, 3)
    func = kiln.build(generic.schedule_conv2d_winograd_weight_transform([out]), [wt, out], target)
    got = kiln.nd.empty((5, 5, 3, 2), "float32")
    func(kiln.nd.array(w), got)
    np.testing.assert_allclose(got.numpy(), ref.conv2d_winograd_weight_transform_python(w, 3), rtol=1e-5, atol=1e-5)
    hwio = w.transpose(2, 3, 1, 0).copy()
    ht = te.placeholder(hwio.shape, "float32", "h")
    tiled = conv_gemm.conv2d_gemm_weight_transform(ht, 2, 4)
    func = kiln.build(generic.schedule_conv2d_gemm_weight_transform([tiled]), [ht, tiled], target)
    got = kiln.nd.empty(tuple(int(d) for d in tiled.shape), "float32")
    func(kiln.nd.array(hwio), got)
    np.testing.assert_array_equal(got.numpy(), ref.conv2d_gemm_weight_transform_python(hwio, 2, 4))
