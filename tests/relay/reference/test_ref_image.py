"""image.resize2d of the reference interpreter against a per-pixel reference of TVM's formulas (float32
coordinates, clamped reads)."""

import itertools
import math

import numpy as np
import pytest

from kiln import relay

RNG = np.random.default_rng(6)
F = np.float32


def run(expr, **inputs):
    params = relay.analysis.free_vars(expr)
    return relay.create_executor().evaluate(relay.Function(params, expr))(**inputs).numpy()


def source(pos, in_size, out_size, mode):
    scale = F(in_size) / F(out_size)
    if mode == "half_pixel":
        return (F(pos) + F(0.5)) * scale - F(0.5)
    if mode == "align_corners":
        return F(in_size - 1) / F(out_size - 1) * F(pos) if out_size > 1 else F(0)
    if mode == "asymmetric":
        return scale * F(pos)
    if mode == "pytorch_half_pixel":
        return (F(pos) + F(0.5)) * scale - F(0.5) if out_size > 1 else F(0)
    return (F(pos) + F(0.5)) * scale  # tf_half_pixel_for_nn


def nearest(coord, rounding):
    if rounding == "round":
        return int(math.copysign(math.floor(abs(coord) + 0.5), coord))  # ties away from zero
    if rounding == "round_prefer_floor":
        return math.ceil(coord - 0.5)
    if rounding == "round_prefer_ceil":
        return math.floor(coord + 0.5)
    if rounding == "floor":
        return math.floor(coord + 1e-5)
    return math.ceil(coord - 1e-5)


def cubic_weights(t, a):
    return [a * (t**3 - 2 * t**2 + t), (a + 2) * t**3 - (3 + a) * t**2 + 1,
            -(a + 2) * t**3 + (3 + 2 * a) * t**2 - a * t, -a * t**3 + a * t**2]


def resize_ref(x, size, method, mode, rounding="", alpha=-0.5, exclude=0):
    n_, c_, h_, w_ = x.shape
    oh, ow = size
    out = np.zeros((n_, c_, oh, ow), "float64")

    def pixel(n, c, r, q):
        return float(x[n, c, min(max(r, 0), h_ - 1), min(max(q, 0), w_ - 1)])

    for n, c, i, j in itertools.product(range(n_), range(c_), range(oh), range(ow)):
        cy, cx = float(source(i, h_, oh, mode)), float(source(j, w_, ow, mode))
        if method == "nearest_neighbor":
            how = rounding or ("round" if mode == "align_corners" else "floor")
            r, q = nearest(cy, how), nearest(cx, how)
            # TVM: asymmetric with an integer upscale factor divides integers, whatever the rounding method
            if mode == "asymmetric" and oh % h_ == 0:
                r = i // (oh // h_)
            if mode == "asymmetric" and ow % w_ == 0:
                q = j // (ow // w_)
            out[n, c, i, j] = pixel(n, c, r, q)
        elif method == "linear":
            y0, x0 = math.floor(cy), math.floor(cx)
            ty, tx = cy - y0, cx - x0
            top = pixel(n, c, y0, x0) * (1 - tx) + pixel(n, c, y0, x0 + 1) * tx
            bottom = pixel(n, c, y0 + 1, x0) * (1 - tx) + pixel(n, c, y0 + 1, x0 + 1) * tx
            out[n, c, i, j] = top * (1 - ty) + bottom * ty
        else:
            y0, x0 = math.floor(cy), math.floor(cx)
            wy, wx = cubic_weights(cy - y0, alpha), cubic_weights(cx - x0, alpha)
            if exclude:
                wy = [0 if not 0 <= y0 - 1 + k < h_ else w for k, w in enumerate(wy)]
                wx = [0 if not 0 <= x0 - 1 + k < w_ else w for k, w in enumerate(wx)]
                wy, wx = [w / sum(wy) for w in wy], [w / sum(wx) for w in wx]
            out[n, c, i, j] = sum(wy[a] * wx[b] * pixel(n, c, y0 - 1 + a, x0 - 1 + b)
                                  for a, b in itertools.product(range(4), range(4)))
    return out


MODES = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size", [(7, 9), (3, 2), (8, 10), (1, 5)])
@pytest.mark.parametrize("method", ["linear", "cubic"])
def test_resize2d_interpolating(method, mode, size):
    x = RNG.standard_normal((1, 2, 4, 5)).astype("f4")
    out = run(relay.image.resize2d(relay.var("x", shape=x.shape), size, method=method,
                                   coordinate_transformation_mode=mode), x=x)
    assert out.dtype == np.float32 and out.shape == (1, 2) + size
    np.testing.assert_allclose(out, resize_ref(x, size, method, mode), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rounding", ["", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size", [(7, 9), (2, 3), (8, 15)])
def test_resize2d_nearest(rounding, mode, size):
    x = RNG.standard_normal((1, 2, 4, 5)).astype("f4")
    out = run(relay.image.resize2d(relay.var("x", shape=x.shape), size, method="nearest_neighbor",
                                   coordinate_transformation_mode=mode, rounding_method=rounding), x=x)
    np.testing.assert_array_equal(out, resize_ref(x, size, "nearest_neighbor", mode, rounding).astype("f4"))


def test_resize2d_integer_upscale_uses_integer_division():
    x = RNG.standard_normal((1, 1, 3, 4)).astype("f4")
    out = run(relay.image.resize2d(relay.var("x", shape=x.shape), (9, 8), method="nearest_neighbor",
                                   coordinate_transformation_mode="asymmetric", rounding_method="round"), x=x)
    np.testing.assert_array_equal(out, x[:, :, [i // 3 for i in range(9)]][:, :, :, [j // 2 for j in range(8)]])


@pytest.mark.parametrize("alpha,exclude", [(-0.75, 0), (-0.5, 1)])
def test_resize2d_cubic_alpha_and_exclude(alpha, exclude):
    x = RNG.standard_normal((1, 1, 5, 4)).astype("f4")
    out = run(relay.image.resize2d(relay.var("x", shape=x.shape), (8, 7), method="cubic", cubic_alpha=alpha,
                                   cubic_exclude=exclude), x=x)
    np.testing.assert_allclose(out, resize_ref(x, (8, 7), "cubic", "half_pixel", alpha=alpha, exclude=exclude),
                               rtol=1e-4, atol=1e-5)


def test_resize2d_nhwc_and_integer_output():
    x = RNG.standard_normal((1, 3, 4, 2)).astype("f4")
    nhwc = x.transpose(0, 2, 3, 1)
    out = run(relay.image.resize2d(relay.var("x", shape=nhwc.shape), (5, 6), layout="NHWC"), x=nhwc)
    np.testing.assert_allclose(out, resize_ref(x, (5, 6), "linear", "half_pixel").transpose(0, 2, 3, 1), rtol=1e-4,
                               atol=1e-5)
    xi = RNG.integers(0, 255, (1, 1, 3, 3)).astype("uint8")
    out = run(relay.image.resize2d(relay.var("x", shape=xi.shape, dtype="uint8"), (5, 5)), x=xi)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, np.trunc(resize_ref(xi, (5, 5), "linear", "half_pixel") + 1e-4).astype("uint8"))
