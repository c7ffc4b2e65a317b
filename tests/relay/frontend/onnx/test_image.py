"""Resize and Upsample converters (kiln/relay/frontend/onnx/image.py) against onnxruntime, and which Relay form
each case takes."""

import numpy as np
import pytest

from kiln import relay

RNG = np.random.default_rng(7)
EMPTY = np.zeros(0, "float32")


def f32(*shape):
    return RNG.uniform(0, 10, shape).astype("float32")


def ops_of(model):
    mod, _ = relay.frontend.from_onnx(model)
    names = []
    relay.analysis.post_order_visit(mod["main"], lambda e: names.append(e.op.name) if isinstance(e, relay.Call) else 0)
    return names


def resize_model(ox, x, attrs, scales=None, sizes=None, roi=None, opset=13):
    inits = {"roi": EMPTY if roi is None else np.array(roi, "float32"),
             "scales": EMPTY if scales is None else np.array(scales, "float32")}
    names = ["x", "roi", "scales"]
    if sizes is not None:
        inits["sizes"] = np.array(sizes, "int64")
        names.append("sizes")
    return ox.node_model("Resize", {"x": x}, attrs, initializers=inits, input_names=names, opset=opset)


@pytest.mark.parametrize("coord", ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"])
@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("scales", [(1, 1, 2, 3), (1, 1, 0.5, 0.75)])
def test_resize_linear_cubic_by_scales(ox, coord, mode, scales):
    x = f32(1, 2, 4, 8)
    model = resize_model(ox, x, {"mode": mode, "coordinate_transformation_mode": coord}, scales=scales)
    ox.check(model, {"x": x}, rtol=1e-4, atol=1e-4)
    assert "image.resize2d" in ops_of(model)  # whole output sizes: resize2d samples exactly ONNX's positions


def test_resize_with_a_scale_that_is_not_out_over_in(ox):
    # 5 * 0.6 = 3: ONNX samples at 1 / 0.6, not 5 / 3, so the interpolation matrices are used
    x = f32(1, 1, 5, 5)
    model = resize_model(ox, x, {"mode": "linear"}, scales=(1, 1, 0.6, 0.7))
    ox.check(model, {"x": x}, rtol=1e-5, atol=1e-5)
    assert "image.resize2d" not in ops_of(model) and "nn.dense" in ops_of(model)


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric", "align_corners", "tf_half_pixel_for_nn"])
def test_resize_nearest_is_a_take(ox, nearest_mode, coord):
    x = f32(1, 2, 3, 4)
    model = resize_model(ox, x, {"mode": "nearest", "nearest_mode": nearest_mode,
                                 "coordinate_transformation_mode": coord}, sizes=(1, 2, 7, 5))
    ox.check(model, {"x": x})
    assert set(ops_of(model)) == {"take"}


def test_resize_cubic_exclude_outside_and_coefficient(ox):
    x = f32(1, 1, 4, 4)
    model = resize_model(ox, x, {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}, scales=(1, 1, 0.8, 1.6))
    ox.check(model, {"x": x}, rtol=1e-4, atol=1e-4)


def test_resize_tf_crop_and_resize_with_extrapolation(ox):
    x = f32(1, 1, 4, 4)
    attrs = {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 10.0}
    model = resize_model(ox, x, attrs, sizes=(1, 1, 3, 3), roi=(0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7))
    ox.check(model, {"x": x}, rtol=1e-5, atol=1e-5)


def test_resize_antialias_and_axes(ox):
    x = f32(1, 1, 8, 8)
    model = resize_model(ox, x, {"mode": "linear", "antialias": 1}, scales=(1, 1, 0.5, 0.5), opset=18)
    ox.check(model, {"x": x}, rtol=1e-4, atol=1e-4)
    inits = {"roi": EMPTY, "scales": EMPTY, "sizes": np.array([6, 3], "int64")}
    model = ox.node_model("Resize", {"x": x}, {"mode": "nearest", "axes": [3, 2]}, initializers=inits, opset=18)
    ox.check(model, {"x": x})


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
def test_resize_keep_aspect_ratio(ox, policy):
    x = f32(1, 1, 4, 6)
    inits = {"roi": EMPTY, "scales": EMPTY, "sizes": np.array([8, 8], "int64")}
    model = ox.node_model("Resize", {"x": x}, {"mode": "linear", "axes": [2, 3], "keep_aspect_ratio_policy": policy},
                          initializers=inits, opset=18)
    ox.check(model, {"x": x}, rtol=1e-5, atol=1e-5)


def test_resize_3d_and_5d(ox):
    x3 = f32(2, 3, 5)
    ox.check(resize_model(ox, x3, {"mode": "linear"}, scales=(1, 1, 2.0)), {"x": x3}, rtol=1e-5, atol=1e-5)
    x5 = f32(1, 1, 2, 3, 4)
    ox.check(resize_model(ox, x5, {"mode": "nearest"}, scales=(1, 1, 2, 2, 0.5)), {"x": x5})


def test_resize_opset10(ox):
    x = f32(1, 1, 2, 3)
    model = ox.node_model("Resize", {"x": x}, {"mode": "nearest"},
                          initializers={"s": np.array([1, 1, 2, 2], "float32")}, opset=10)
    ox.check(model, {"x": x})


def test_upsample(ox):
    x = f32(1, 2, 2, 3)
    nearest = ox.node_model("Upsample", {"x": x}, {"mode": "nearest"},
                            initializers={"s": np.array([1, 1, 2, 3], "float32")}, opset=9)
    ox.check(nearest, {"x": x})
    assert set(ops_of(nearest)) == {"repeat"}
    linear = ox.node_model("Upsample", {"x": x}, {"mode": "linear"},
                           initializers={"s": np.array([1, 1, 2, 2], "float32")}, opset=9)
    ox.check(linear, {"x": x}, rtol=1e-5, atol=1e-5)
    old = ox.node_model("Upsample", {"x": x}, {"mode": "nearest", "scales": [1.0, 1.0, 2.0, 2.0]}, opset=7)
    np.testing.assert_array_equal(ox.run_kiln(old, {"x": x})[0], x.repeat(2, axis=2).repeat(2, axis=3))


def test_scales_or_sizes_of_the_wrong_length_are_named(ox):
    from kiln.error import KilnError

    x = np.zeros((1, 1, 2, 2), "float32")
    with pytest.raises(KilnError, match=r"\(Resize\): scales has 3 values for 4 axes"):
        ox.run_kiln(resize_model(ox, x, {"mode": "nearest"}, scales=[1, 2, 2]), {"x": x})
    with pytest.raises(KilnError, match=r"\(Resize\): sizes has 2 values for 4 axes"):
        ox.run_kiln(resize_model(ox, x, {"mode": "nearest"}, sizes=[4, 4]), {"x": x})
