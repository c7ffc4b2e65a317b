"""Resize and Upsample whose scales, sizes or region of interest are graph inputs (kiln/relay/frontend/onnx/image.py,
``Resize._dynamic``): each model compiled once and run at several values against onnxruntime, covering scales whose
output lengths are not whole, every coordinate mode, ``antialias``, ``keep_aspect_ratio_policy``, ``axes`` and
``tf_crop_and_resize``."""

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from kiln.backend.onnx import prepare

X = np.random.default_rng(0).standard_normal((1, 2, 5, 7)).astype("float32")


def resize_model(ox, attrs, given, length, opset=19, data=X, roi_input=False):
    """A Resize of ``data`` whose ``given`` input ("scales" or "sizes", ``length`` entries) is a graph input."""
    names = ["x", "roi" if roi_input else "", "scales" if given == "scales" else "", "sizes" if given == "sizes"
             else ""]
    inputs = {"x": (data.shape, str(data.dtype)), given: ((length,), "float32" if given == "scales" else "int64")}
    if roi_input:
        inputs["roi"] = ((2 * length,), "float32")
    return ox.make_model([helper.make_node("Resize", names, ["y"], **attrs)], inputs, [("y", str(data.dtype))],
                         opset=opset)


def check_against_onnx_reference(model, feeds_list):
    """Compiled once, kiln matches ONNX's reference implementation (which made the backend suite's data)."""
    rep, reference = prepare(model), ReferenceEvaluator(model)
    for feeds in feeds_list:
        want = reference.run(None, feeds)[0]
        got = rep.run(feeds)[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# floor(in * scale) differs from in * scale here, so the coordinates must come from the scale itself (and no output
# position falls on a rounding tie, where onnxruntime's float32 and ONNX's float64 coordinates may round apart)
SCALES = [np.array(s, "float32") for s in ([1, 1, 0.6, 0.8], [1, 1, 1.7, 2.2], [1, 1, 2, 0.5])]


@pytest.mark.parametrize("mode, coord", [("nearest", "half_pixel"), ("nearest", "asymmetric"),
                                         ("linear", "half_pixel"), ("linear", "half_pixel_symmetric"),
                                         ("cubic", "pytorch_half_pixel"), ("cubic", "asymmetric")])
def test_run_time_scales_use_the_given_scale(ox, mode, coord):
    model = resize_model(ox, {"mode": mode, "coordinate_transformation_mode": coord}, "scales", 4)
    rep = ox.check_compiled_once(model, [{"x": X, "scales": s} for s in SCALES], rtol=1e-4, atol=1e-4)
    assert rep.uses_vm


def test_run_time_scales_align_corners_follow_the_onnx_definition(ox):
    """``align_corners`` divides by ``in * scale - 1`` in ONNX's definition and reference (and the backend suite);
    onnxruntime divides by the whole output length minus one, so the two differ when ``in * scale`` is not whole."""
    model = resize_model(ox, {"mode": "linear", "coordinate_transformation_mode": "align_corners"}, "scales", 4)
    check_against_onnx_reference(model, [{"x": X, "scales": s} for s in SCALES])


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_run_time_sizes_with_axes(ox, mode):
    model = resize_model(ox, {"mode": mode, "axes": [3, 2]}, "sizes", 2)
    feeds = [{"x": X, "sizes": np.array(s, "int64")} for s in ([3, 8], [14, 2], [7, 5])]
    ox.check_compiled_once(model, feeds, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
def test_run_time_sizes_keep_the_aspect_ratio(ox, policy):
    model = resize_model(ox, {"mode": "linear", "axes": [2, 3], "keep_aspect_ratio_policy": policy}, "sizes", 2)
    feeds = [{"x": X, "sizes": np.array(s, "int64")} for s in ([3, 8], [10, 10], [4, 4])]
    ox.check_compiled_once(model, feeds, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_run_time_scales_with_antialias(ox, mode):
    model = resize_model(ox, {"mode": mode, "antialias": 1}, "scales", 4)
    feeds = [{"x": X, "scales": np.array(s, "float32")} for s in ([1, 1, 0.5, 0.3], [1, 1, 0.8, 1.4])]
    ox.check_compiled_once(model, feeds, rtol=1e-4, atol=1e-4)


def test_run_time_region_of_interest(ox):
    attrs = {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": -3.0}
    model = resize_model(ox, attrs, "sizes", 4, roi_input=True)
    feeds = [{"x": X, "sizes": np.array([1, 2, 4, 4], "int64"), "roi": np.array(r, "float32")}
             for r in ([0, 0, 0.2, -0.3, 1, 1, 0.8, 1.2], [0, 0, 0, 0, 1, 1, 1, 1])]
    ox.check_compiled_once(model, feeds, rtol=1e-4, atol=1e-4)


def test_opset_10_resize_and_upsample_with_run_time_scales(ox):
    for op, opset in (("Resize", 10), ("Upsample", 9)):
        node = helper.make_node(op, ["x", "scales"], ["y"], mode="linear")
        model = ox.make_model([node], {"x": (X.shape, "float32"), "scales": ((4,), "float32")}, ["y"], opset=opset)
        feeds = [{"x": X, "scales": np.array(s, "float32")} for s in ([1, 1, 2, 3], [1, 1, 1.5, 1.2])]
        ox.check_compiled_once(model, feeds, rtol=1e-4, atol=1e-4)


def test_a_symbolic_dimension_resized_by_a_constant_scale(ox):
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear")
    model = ox.make_model([node], {"x": ([1, 2, "h", "w"], "float32")}, ["y"],
                          {"scales": np.array([1, 1, 1.5, 0.5], "float32")}, opset=13)
    rng = np.random.default_rng(1)
    ox.check_compiled_once(model, [{"x": rng.standard_normal((1, 2, h, w)).astype("float32")}
                                   for h, w in ((4, 6), (3, 9))], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("size", [[2, 1, 3, 5], [2, 1, 4, 2, 3]])
@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid_of_a_constant_and_a_run_time_size(ox, size, align):
    """AffineGrid's coordinates as a constant when ``size`` is one, else computed from it at run time (it decides
    the output shape); a single position per axis included."""
    spatial = len(size) - 2
    theta = np.random.default_rng(2).standard_normal((2, spatial, spatial + 1)).astype("float32")
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align)
    constant = ox.make_model([node], {"theta": (theta.shape, "float32")}, ["grid"],
                             {"size": np.array(size, "int64")}, opset=20)
    ox.check_compiled_once(constant, [{"theta": theta}], rtol=1e-5, atol=1e-5)
    run_time = ox.make_model([node], {"theta": (theta.shape, "float32"), "size": ((len(size),), "int64")},
                             ["grid"], opset=20)
    # one position per axis: -1 with align_corners in ONNX's reference, which onnxruntime does not follow
    other = [2, 1] + [2 if align else 1] * spatial
    rep = ox.check_compiled_once(run_time, [{"theta": theta, "size": np.array(s, "int64")} for s in (size, other)],
                                 rtol=1e-5, atol=1e-5)
    assert rep.uses_vm
