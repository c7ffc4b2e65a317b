"""kiln.topi.testing.grid (TVM's affine_grid_python, grid_sample_python) against properties and scalar loops."""

import itertools
import math

import numpy as np
import pytest

from kiln.error import OpAttributeInvalid
from kiln.topi import testing as ref

RNG = np.random.default_rng(9)


def test_affine_grid_applies_theta_to_the_normalized_pixel_grid():
    theta = RNG.standard_normal((2, 2, 3)).astype("float32")
    got = ref.affine_grid_python(theta, (4, 6))
    ys, xs = np.linspace(-1, 1, 4), np.linspace(-1, 1, 6)
    for b, r, i, j in itertools.product(range(2), range(2), range(4), range(6)):
        want = theta[b, r, 0] * xs[j] + theta[b, r, 1] * ys[i] + theta[b, r, 2]
        assert abs(got[b, r, i, j] - want) < 1e-5


def identity_grid(shape):
    """The grid (x first) that reads every pixel at its own place (align_corners)."""
    axes = [np.linspace(-1, 1, n) for n in shape]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack(mesh[::-1])[None].astype("float32")


@pytest.mark.parametrize("method", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_identity_grid_reproduces_the_data(method, padding_mode):
    data = RNG.standard_normal((1, 3, 5, 6)).astype("float32")
    got = ref.grid_sample_python(data, identity_grid((5, 6)), method, "NCHW", padding_mode, True)
    np.testing.assert_allclose(got, data, rtol=1e-5, atol=1e-5)
    if method != "bicubic":
        volume = RNG.standard_normal((1, 2, 3, 4, 5)).astype("float32")
        got = ref.grid_sample_python(volume, identity_grid((3, 4, 5)), method, "NCDHW", padding_mode, True)
        np.testing.assert_allclose(got, volume, rtol=1e-5, atol=1e-5)


def mirror(x, lo, hi):
    """``x`` folded into ``[lo, hi]`` by repeated reflection."""
    while x < lo or x > hi:
        x = 2 * lo - x if x < lo else 2 * hi - x
    return x


def source(g, size, align, padding_mode):
    x = (g + 1) * (size - 1) / 2 if align else ((g + 1) * size - 1) / 2
    if padding_mode == "reflection":
        x = mirror(x, 0, size - 1) if align else mirror(x, -0.5, size - 0.5)
    if padding_mode != "zeros":
        x = min(max(x, 0), size - 1)
    return x


def pixel(img, index):
    return img[(slice(None), *index)] if all(0 <= i < n for i, n in zip(index, img.shape[1:], strict=True)) else 0.0


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_bilinear_and_nearest_match_a_scalar_loop(align, padding_mode):
    data = RNG.standard_normal((2, 2, 4, 5))
    grid = RNG.uniform(-1.6, 1.6, (2, 2, 3, 3))
    bilinear = ref.grid_sample_python(data, grid, "bilinear", "NCHW", padding_mode, align)
    nearest = ref.grid_sample_python(data, grid, "nearest", "NCHW", padding_mode, align)
    for b, i, j in itertools.product(range(2), range(3), range(3)):
        y, x = source(grid[b, 1, i, j], 4, align, padding_mode), source(grid[b, 0, i, j], 5, align, padding_mode)
        y0, x0 = math.floor(y), math.floor(x)
        want = sum(pixel(data[b], (y0 + dy, x0 + dx)) * (y - y0 if dy else 1 - (y - y0)) * (x - x0 if dx else 1 - (x - x0))
                   for dy, dx in itertools.product((0, 1), repeat=2))
        np.testing.assert_allclose(bilinear[b, :, i, j], want, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(nearest[b, :, i, j], pixel(data[b], (round(y), round(x))))


def keys(t, a=-0.75):
    t = abs(t)
    return (a + 2) * t**3 - (a + 3) * t**2 + 1 if t <= 1 else a * t**3 - 5 * a * t**2 + 8 * a * t - 4 * a


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_bicubic_matches_a_scalar_loop(padding_mode):
    data = RNG.standard_normal((1, 1, 5, 6))
    grid = RNG.uniform(-1.4, 1.4, (1, 2, 4, 4))
    got = ref.grid_sample_python(data, grid, "bicubic", "NCHW", padding_mode, False)

    def tap(k, size):
        if padding_mode == "border":
            return min(max(k, 0), size - 1)
        if padding_mode == "reflection":
            return int(min(max(mirror(k, -0.5, size - 0.5), 0), size - 1))
        return k

    for i, j in itertools.product(range(4), range(4)):
        y, x = ((grid[0, 1, i, j] + 1) * 5 - 1) / 2, ((grid[0, 0, i, j] + 1) * 6 - 1) / 2
        y0, x0 = math.floor(y), math.floor(x)
        want = sum(keys(y - (y0 + r)) * keys(x - (x0 + q)) * pixel(data[0], (tap(y0 + r, 5), tap(x0 + q, 6)))
                   for r, q in itertools.product(range(-1, 3), repeat=2))
        np.testing.assert_allclose(got[0, :, i, j], want, rtol=1e-10, atol=1e-12)


def test_bad_arguments():
    data = np.zeros((1, 1, 2, 2, 2), "float32")
    with pytest.raises(OpAttributeInvalid, match="bicubic"):
        ref.grid_sample_python(data, np.zeros((1, 3, 1, 1, 1), "float32"), "bicubic", "NCDHW")
    with pytest.raises(OpAttributeInvalid, match="padding_mode"):
        ref.grid_sample_python(data[0], np.zeros((1, 2, 1, 1), "float32"), "bilinear", "NCHW", "wrap")
