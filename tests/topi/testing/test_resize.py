"""kiln.topi.testing.resize (TVM's resize*_python, crop_and_resize_python) against a per-output-pixel formula: the
tensor product of one-axis tap weights, in float64 with Python's math."""

import itertools
import math

import numpy as np
import pytest

from kiln.error import OpAttributeInvalid
from kiln.topi import testing as ref

RNG = np.random.default_rng(11)
MODES = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"]


def coord(i, n_in, n_out, mode, start=0.0, end=1.0):
    if mode in ("half_pixel", "pytorch_half_pixel"):
        return 0.0 if mode == "pytorch_half_pixel" and n_out == 1 else (i + 0.5) * n_in / n_out - 0.5
    if mode == "align_corners":
        return i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if mode == "asymmetric":
        return i * n_in / n_out
    if mode == "tf_half_pixel_for_nn":
        return (i + 0.5) * n_in / n_out
    return start * (n_in - 1) + i * (end - start) * (n_in - 1) / (n_out - 1) if n_out > 1 else \
        0.5 * (start + end) * (n_in - 1)


def taps(c, n_in, method, rounding, alpha, exclude):
    """[(index, weight)] of one output position along one axis."""
    if method == "nearest_neighbor":
        r = {"round": lambda v: math.copysign(math.floor(abs(v) + 0.5), v), "floor": lambda v: math.floor(v + 1e-5),
             "ceil": lambda v: math.ceil(v - 1e-5), "round_prefer_floor": lambda v: math.ceil(v - 0.5),
             "round_prefer_ceil": lambda v: math.floor(v + 0.5)}[rounding](c)
        return [(int(r), 1.0)]
    b, t = math.floor(c), c - math.floor(c)
    if method == "linear":
        return [(b, 1 - t), (b + 1, t)]
    a = alpha
    w = [a * (t**3 - 2 * t**2 + t), (a + 2) * t**3 - (3 + a) * t**2 + 1, -(a + 2) * t**3 + (3 + 2 * a) * t**2 - a * t,
         -a * t**3 + a * t**2]
    if exclude:
        w = [0.0 if not 0 <= b - 1 + k < n_in else v for k, v in enumerate(w)]
        w = [v / sum(w) for v in w]
    return [(b - 1 + k, v) for k, v in enumerate(w)]


def per_pixel(x, size, method, mode, rounding="", alpha=-0.5, exclude=0, roi=None, extrapolation=0.0):
    """``x`` channel-first (N, C, spatial...) resized pixel by pixel."""
    spatial = x.shape[2:]
    rounding = rounding or ("round" if mode == "align_corners" else "floor")
    roi = roi or (0.0,) * len(size) + (1.0,) * len(size)
    out = np.zeros(x.shape[:2] + tuple(size))
    for o in itertools.product(*(range(s) for s in size)):
        axes = []
        inside = True
        for k, (i, n_in, n_out) in enumerate(zip(o, spatial, size, strict=True)):
            c = coord(i, n_in, n_out, mode, roi[k], roi[len(size) + k])
            inside = inside and 0 <= c <= n_in - 1
            axis = taps(c, n_in, method, rounding, alpha, exclude)
            if method == "nearest_neighbor" and mode == "asymmetric" and n_out % n_in == 0:
                axis = [(i // (n_out // n_in), 1.0)]  # TVM divides integers for an integer upscale
            axes.append(axis)
        value = sum(math.prod(w for _, w in combo) *
                    x[(Ellipsis, *(min(max(j, 0), n - 1) for (j, _), n in zip(combo, spatial, strict=True)))]
                    for combo in itertools.product(*axes))
        out[(Ellipsis, *o)] = extrapolation if mode == "tf_crop_and_resize" and not inside else value
    return out


@pytest.mark.parametrize("method", ["nearest_neighbor", "linear", "cubic"])
@pytest.mark.parametrize("mode", MODES)
def test_resize2d_python_every_mode(method, mode):
    x = RNG.standard_normal((2, 3, 4, 5)).astype("float32")
    got = ref.resize2d_python(x, (2, 1.4), "NCHW", method, mode)
    assert got.dtype == np.float32 and got.shape == (2, 3, 8, 7)
    np.testing.assert_allclose(got, per_pixel(x, (8, 7), method, mode), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rounding", ["round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
def test_resize_rounding_methods(rounding):
    x = RNG.standard_normal((1, 2, 5, 3)).astype("float32")
    got = ref.resize2d_python(x, (1.4, 2.4), "NCHW", "nearest_neighbor", "half_pixel", rounding_method=rounding)
    np.testing.assert_array_equal(got, per_pixel(x, (7, 7), "nearest_neighbor", "half_pixel", rounding))


@pytest.mark.parametrize("alpha,exclude", [(-0.75, 0), (-0.5, 1), (-0.75, 1)])
def test_resize_cubic_alpha_and_exclude(alpha, exclude):
    x = RNG.standard_normal((1, 1, 4, 6)).astype("float32")
    got = ref.resize2d_python(x, (2, 0.5), "NCHW", "cubic", "half_pixel", cubic_alpha=alpha, cubic_exclude=exclude)
    np.testing.assert_allclose(got, per_pixel(x, (8, 3), "cubic", "half_pixel", alpha=alpha, exclude=exclude),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("method", ["nearest_neighbor", "linear", "cubic"])
def test_resize1d_and_3d_python_layouts(method):
    x = RNG.standard_normal((2, 3, 5)).astype("float32")
    want = per_pixel(x, (11,), method, "align_corners")
    np.testing.assert_allclose(ref.resize1d_python(x, (2.2,), "NCW", method), want, rtol=1e-4, atol=1e-5)
    nwc = ref.resize1d_python(x.transpose(0, 2, 1), (2.2,), "NWC", method)
    np.testing.assert_allclose(nwc, want.transpose(0, 2, 1), rtol=1e-4, atol=1e-5)
    v = RNG.standard_normal((1, 2, 3, 4, 2)).astype("float32")
    want = per_pixel(v, (6, 3, 5), method, "half_pixel")
    got = ref.resize3d_python(v, (2, 0.75, 2.5), "NCDHW", method, "half_pixel")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    ndhwc = ref.resize3d_python(v.transpose(0, 2, 3, 4, 1), (2, 0.75, 2.5), "NDHWC", method, "half_pixel")
    np.testing.assert_allclose(ndhwc, want.transpose(0, 2, 3, 4, 1), rtol=1e-4, atol=1e-5)


def test_resize2d_python_packed_layout_and_integer_output():
    x = RNG.standard_normal((2, 8, 3, 4)).astype("float32")
    want = ref.resize2d_python(x, (2, 2), "NCHW", "linear", "half_pixel")
    packed = x.reshape(2, 2, 4, 3, 4).transpose(0, 1, 3, 4, 2)  # NCHW4c
    got = ref.resize2d_python(packed, (2, 2), "NCHW4c", "linear", "half_pixel")
    np.testing.assert_array_equal(got, want.reshape(2, 2, 4, 6, 8).transpose(0, 1, 3, 4, 2))
    xi = RNG.integers(0, 255, (1, 1, 3, 3)).astype("uint8")
    got = ref.resize2d_python(xi, (5 / 3, 5 / 3), "NCHW", "linear", "half_pixel")
    assert got.dtype == np.uint8  # truncated, as TVM's cast is
    exact = per_pixel(xi, (5, 5), "linear", "half_pixel")
    clear = np.abs(exact - np.round(exact)) > 1e-3  # float32 may land either side of a whole number
    assert clear.sum() > 10
    np.testing.assert_array_equal(got[clear], np.trunc(exact[clear]))


def test_tf_crop_and_resize_mode_extrapolates():
    x = RNG.standard_normal((1, 2, 5, 6)).astype("float32")
    roi = (-0.2, 0.1, 0.9, 1.3)
    got = ref.resize2d_python(x, (1.4, 1), "NCHW", "linear", "tf_crop_and_resize", roi=roi, extrapolation_value=-7.0)
    want = per_pixel(x, (7, 6), "linear", "tf_crop_and_resize", roi=roi, extrapolation=-7.0)
    assert (want == -7.0).any() and (want != -7.0).any()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("method", ["bilinear", "nearest_neighbor"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_crop_and_resize_python(method, layout):
    image = RNG.standard_normal((3, 2, 6, 7)).astype("float32")
    boxes = np.array([[0.1, 0.2, 0.87, 0.72], [-0.3, 0.05, 0.6, 1.2], [0.4, 0.4, 0.4, 0.9]], "float32")
    indices = np.array([2, 0, 2], "int32")
    want = np.concatenate([per_pixel(image[i][None].astype("float64"), (4, 5),
                                     "linear" if method == "bilinear" else "nearest_neighbor", "tf_crop_and_resize",
                                     "round", roi=tuple(float(v) for v in box), extrapolation=0.5)
                           for box, i in zip(boxes, indices, strict=True)])
    data = image if layout == "NCHW" else image.transpose(0, 2, 3, 1)
    got = ref.crop_and_resize_python(data, boxes, indices, (4, 5), layout, method, 0.5)
    got = got if layout == "NCHW" else got.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_bad_arguments_raise_kiln_errors():
    x = np.zeros((1, 1, 2, 2), "float32")
    with pytest.raises(OpAttributeInvalid, match="method"):
        ref.resize2d_python(x, (2, 2), "NCHW", "area")
    with pytest.raises(OpAttributeInvalid, match="coordinate_transformation_mode"):
        ref.resize2d_python(x, (2, 2), "NCHW", "linear", "corners")
    with pytest.raises(OpAttributeInvalid, match="layout"):
        ref.resize2d_python(x, (2, 2), "NCW")
    with pytest.raises(OpAttributeInvalid, match="rounding_method"):
        ref.resize2d_python(x, (2, 2), "NCHW", "nearest_neighbor", "half_pixel", rounding_method="up")
