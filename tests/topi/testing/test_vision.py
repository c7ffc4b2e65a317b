"""kiln.topi.testing.vision (TVM's roi_align/roi_pool/reorg/deformable_conv2d *_python) against scalar loops of
the formulas and against the plain convolution reference."""

import itertools
import math

import numpy as np
import pytest

from kiln.error import OpAttributeInvalid
from kiln.topi import testing as ref
from kiln.topi.testing.vision import bilinear_python

RNG = np.random.default_rng(5)


def scalar_bilinear(img, y, x):
    """Four neighbours weighted by distance, those outside the image contributing nothing."""
    h, w = img.shape[1:]
    y0, x0 = math.floor(y), math.floor(x)
    total = np.zeros(img.shape[0])
    for r, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for c, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if 0 <= r < h and 0 <= c < w:
                total += wy * wx * img[:, r, c]
    return total


def test_bilinear_python():
    img = RNG.standard_normal((2, 4, 5))
    ys, xs = RNG.uniform(-1.5, 5.5, (3, 4)), RNG.uniform(-1.5, 6.5, (3, 4))
    got = bilinear_python(img, ys, xs)
    for i, j in itertools.product(range(3), range(4)):
        np.testing.assert_allclose(got[:, i, j], scalar_bilinear(img, ys[i, j], xs[i, j]), rtol=1e-12)


def roi_align_loop(data, rois, pooled, scale, ratio, mode):
    out = np.zeros((len(rois), data.shape[1], pooled, pooled))
    h, w = data.shape[2:]
    for i, roi in enumerate(rois.astype("float64")):
        x1, y1, x2, y2 = roi[1:] * scale
        rh, rw = max(y2 - y1, 1.0), max(x2 - x1, 1.0)
        gh = gw = ratio if ratio > 0 else None
        gh, gw = gh or math.ceil(rh / pooled), gw or math.ceil(rw / pooled)
        for ph, pw in itertools.product(range(pooled), range(pooled)):
            values = []
            for r, q in itertools.product(range(gh), range(gw)):
                y = y1 + ph * rh / pooled + (r + 0.5) * rh / pooled / gh
                x = x1 + pw * rw / pooled + (q + 0.5) * rw / pooled / gw
                if y < -1 or y > h or x < -1 or x > w:
                    values.append(np.zeros(data.shape[1]))
                else:
                    values.append(scalar_bilinear(data[int(roi[0])], min(max(y, 0), h - 1), min(max(x, 0), w - 1)))
            out[i, :, ph, pw] = np.mean(values, axis=0) if mode == "avg" else np.max(values, axis=0)
    return out


@pytest.mark.parametrize("scale,ratio,mode", [(1.0, -1, "avg"), (0.5, 2, "avg"), (1.0, -1, "max"), (0.5, 2, b"max")])
def test_roi_align(scale, ratio, mode):
    data = RNG.uniform(size=(2, 3, 9, 9)).astype("float32")
    rois = RNG.uniform(size=(6, 5)).astype("float32") * 12 - 1
    rois[:, 0] = RNG.integers(0, 2, 6)
    want = roi_align_loop(data, rois, 3, scale, ratio, mode if isinstance(mode, str) else mode.decode())
    got = ref.roi_align_nchw_python(data, rois, 3, scale, ratio, mode)
    assert got.dtype == np.float32 and got.shape == (6, 3, 3, 3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    nhwc = ref.roi_align_nhwc_python(data.transpose(0, 2, 3, 1), rois, (3, 3), scale, ratio, mode)
    np.testing.assert_allclose(nhwc, want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-5)
    with pytest.raises(OpAttributeInvalid, match="mode"):
        ref.roi_align_nchw_python(data, rois, 3, scale, ratio, "mean")


def test_roi_pool():
    data = RNG.uniform(size=(2, 3, 10, 10)).astype("float32")
    rois = RNG.uniform(size=(8, 5)).astype("float32") * 12 - 1
    rois[:, 0] = RNG.integers(0, 2, 8)
    got = ref.roi_pool_nchw_python(data, rois, 3, 0.5)
    for i, roi in enumerate(rois.astype("float64")):
        x1, y1, x2, y2 = (int(math.copysign(math.floor(abs(v * 0.5) + 0.5), v)) for v in roi[1:])
        bh, bw = max(y2 - y1 + 1, 1) / 3, max(x2 - x1 + 1, 1) / 3
        for ph, pw in itertools.product(range(3), range(3)):
            ys = [y for y in range(y1 + math.floor(ph * bh), y1 + math.ceil((ph + 1) * bh)) if 0 <= y < 10]
            xs = [x for x in range(x1 + math.floor(pw * bw), x1 + math.ceil((pw + 1) * bw)) if 0 <= x < 10]
            want = data[int(roi[0])][:, ys][:, :, xs].max(axis=(1, 2)) if ys and xs else np.zeros(3)
            np.testing.assert_array_equal(got[i, :, ph, pw], want)


def test_reorg():
    data = RNG.standard_normal((2, 8, 4, 6)).astype("float32")
    got = ref.reorg_python(data, 2)
    flat, want = data.reshape(-1), []
    for b, k, j, i in itertools.product(range(2), range(8), range(4), range(6)):
        c2, off = k % 2, k // 2
        want.append(flat[(i * 2 + off % 2) + 6 * 2 * ((j * 2 + off // 2) + 4 * 2 * (c2 + 2 * b))])
    np.testing.assert_array_equal(got, np.array(want, "float32").reshape(2, 32, 2, 3))


@pytest.mark.parametrize("groups,dgroups", [(1, 1), (2, 2), (4, 1)])
def test_deformable_conv2d_with_whole_offsets_is_a_convolution(groups, dgroups):
    """Offsets of whole pixels move every tap to another pixel: a plain convolution of the shifted input."""
    data = RNG.standard_normal((2, 4, 6, 7)).astype("float32")
    weight = RNG.standard_normal((8, 4 // groups, 3, 3)).astype("float32")
    zero = np.zeros((2, dgroups * 9 * 2, 6, 7), "float32")
    got = ref.deformable_conv2d_nchw_python(data, zero, weight, 1, 1, 1, dgroups, groups)
    np.testing.assert_allclose(got, ref.conv2d_nchw_python(data, weight, 1, 1, groups), rtol=1e-4, atol=1e-4)
    down = np.zeros((2, dgroups * 9 * 2, 4, 5), "float32")
    down[:, 0::2] = 1.0  # every dy = 1: read one row lower (unpadded, so only the last row reads outside)
    shifted = np.concatenate([data[:, :, 1:], np.zeros_like(data[:, :, :1])], axis=2)
    got = ref.deformable_conv2d_nchw_python(data, down, weight, 1, 0, 1, dgroups, groups)
    np.testing.assert_allclose(got, ref.conv2d_nchw_python(shifted, weight, 1, 0, groups), rtol=1e-4, atol=1e-4)


def test_deformable_conv2d_fractional_offsets_and_nhwc():
    data = RNG.standard_normal((1, 2, 5, 5))
    weight = RNG.standard_normal((3, 2, 2, 2))
    offset = RNG.uniform(-1.5, 1.5, (1, 2 * 4 * 2, 2, 2))
    got = ref.deformable_conv2d_nchw_python(data, offset, weight, (2, 2), (0, 0), (2, 1), 2, 1)
    want = np.zeros((1, 3, 2, 2))
    for f, y, x, c, ky, kx in itertools.product(range(3), range(2), range(2), range(2), range(2), range(2)):
        base = c * 8 + (ky * 2 + kx) * 2
        py, px = y * 2 + ky * 2 + offset[0, base, y, x], x * 2 + kx + offset[0, base + 1, y, x]
        if 0 <= py < 5 and 0 <= px < 5:
            want[0, f, y, x] += scalar_bilinear(data[0, c:c + 1], py, px)[0] * weight[f, c, ky, kx]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    nhwc = ref.deformable_conv2d_nhwc_python(data.transpose(0, 2, 3, 1), offset.transpose(0, 2, 3, 1),
                                             weight.transpose(2, 3, 1, 0), (2, 2), (0, 0), (2, 1), 2, 1)
    np.testing.assert_allclose(nhwc, want.transpose(0, 2, 3, 1), rtol=1e-10)
    with pytest.raises(OpAttributeInvalid, match="groups"):
        ref.deformable_conv2d_nchw_python(data, offset, weight, 1, 0, 1, 3, 1)


def test_same_padding_puts_the_larger_half_first():
    """TVM's get_pad_tuple: a 4-wide kernel pads 2 before and 1 after."""
    x, w = RNG.standard_normal((1, 1, 5, 5)), RNG.standard_normal((1, 1, 4, 4))
    np.testing.assert_allclose(ref.conv2d_nchw_python(x, w, 1, "SAME"), ref.conv2d_nchw_python(x, w, 1, (2, 2, 1, 1)))
