"""dyn.image.resize_nd (kiln/topi/image/dyn_resize.py, its reference kiln/relay/reference/resize_onnx.py): each
attribute set compiled once for the VM, then run on random data with several run-time scales and sizes, against
ONNX's own reference implementation of Resize (onnx.reference) and against kiln's reference interpreter."""

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.runtime.vm import VirtualMachine


def onnx_resize(x, attrs, axes, scales=None, sizes=None, roi=None):
    """ONNX's reference result of Resize (opset 19) of ``x``."""
    names = ["x", "roi" if roi is not None else "", "scales" if scales is not None else "",
             "sizes" if sizes is not None else ""]
    node = helper.make_node("Resize", names, ["y"], axes=list(axes), **attrs)
    feeds = {"x": x}
    inputs = [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)]
    for name, value in (("roi", roi), ("scales", scales), ("sizes", sizes)):
        if value is not None:
            feeds[name] = value
            inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype),
                                                        value.shape))
    graph = helper.make_graph([node], "resize", inputs, [helper.make_tensor_value_info("y", 0, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    return ReferenceEvaluator(model).run(None, feeds)[0]


def size_and_scale(shape, axes, scales=None, sizes=None):
    """ONNX's output lengths and coordinate scales of ``axes``: ``floor(in * scale)``, or ``size / in``."""
    lengths = np.array([shape[a] for a in axes], "float64")
    if sizes is not None:
        return sizes.astype("int64"), sizes / lengths
    return np.floor(scales.astype("float64") * lengths).astype("int64"), scales.astype("float64")


class Compiled:
    """``dyn.image.resize_nd`` of data of ``shape`` over ``axes`` with ``attrs``, compiled once for the VM."""

    def __init__(self, shape, dtype, axes, **attrs):
        self.axes = axes
        x = relay.var("x", shape=shape, dtype=dtype)
        size = relay.var("size", shape=(len(axes),), dtype="int64")
        scale = relay.var("scale", shape=(len(axes),), dtype="float64")
        roi = relay.var("roi", shape=(2 * len(axes),), dtype="float32")
        call = relay.op.dyn.image.resize_nd(x, size, scale, axes, roi, **attrs)
        self.mod = kiln.IRModule.from_expr(relay.Function([x, size, scale, roi], call))
        self.vm = VirtualMachine(relay.vm.compile(self.mod, target="llvm"), kiln.cpu(0))
        self.reference = relay.create_executor("debug", mod=self.mod).evaluate()

    def check(self, x, want, scales=None, sizes=None, roi=None, tol=1e-5):
        size, scale = size_and_scale(x.shape, self.axes, scales, sizes)
        roi = np.zeros(2 * len(self.axes), "float32") if roi is None else roi
        got = self.vm.invoke("main", x, size, scale, roi).numpy()
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        np.testing.assert_allclose(self.reference(x, size, scale, roi).numpy(), want, rtol=tol, atol=tol)


ONNX_ATTRS = {"nearest": "nearest_mode", "cubic": "cubic_coeff_a"}
MODES = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"]
# scales whose output lengths are not whole (floor(in * scale) != in * scale), shrinking and growing
SCALES = [np.array(s, "float32") for s in ([0.6, 1.7], [2.0, 0.5], [1.0, 0.35])]
SIZES = [np.array(s, "int64") for s in ([3, 11], [1, 1], [7, 2])]


METHODS = [("linear", {}), ("cubic", {"cubic_coeff_a": -0.5}), ("cubic", {"cubic_coeff_a": -0.75, "exclude_outside": 1})]
ROUNDINGS = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
CASES = ([(m, e, mode) for m, e in METHODS for mode in MODES]
         + [("nearest", {"nearest_mode": r}, mode) for r in ROUNDINGS for mode in MODES])


@pytest.mark.parametrize("method, extra, mode", CASES)
def test_every_method_and_coordinate_mode(method, extra, mode):
    """The coordinates follow the given scale, not the ratio of the lengths: random data, several scales and sizes
    of one executable."""
    attrs = {"mode": method, "coordinate_transformation_mode": mode, **extra}
    compiled = Compiled((2, 5, 6), "float32", (1, 2), method=method, coordinate_transformation_mode=mode,
                        rounding_method=extra.get("nearest_mode", "round_prefer_floor"),
                        cubic_alpha=extra.get("cubic_coeff_a", -0.75), cubic_exclude=extra.get("exclude_outside", 0))
    x = np.random.default_rng(0).standard_normal((2, 5, 6)).astype("float32")
    for scales in SCALES:
        compiled.check(x, onnx_resize(x, attrs, (1, 2), scales=scales), scales=scales)
    for sizes in SIZES:
        compiled.check(x, onnx_resize(x, attrs, (1, 2), sizes=sizes), sizes=sizes)


@pytest.mark.parametrize("method", ["linear", "cubic"])
def test_antialias_widens_the_kernel_when_shrinking(method):
    """The kernel's number of taps is read at run time from the scale (2 * ceil(support / scale))."""
    attrs = {"mode": method, "antialias": 1}
    compiled = Compiled((1, 9, 13), "float32", (1, 2), method=method, antialias=1)
    x = np.random.default_rng(1).standard_normal((1, 9, 13)).astype("float32")
    for scales in [np.array(s, "float32") for s in ([0.5, 0.3], [0.8, 1.5], [0.25, 0.1], [2.0, 1.0])]:
        compiled.check(x, onnx_resize(x, attrs, (1, 2), scales=scales), scales=scales)
    for sizes in [np.array(s, "int64") for s in ([4, 3], [1, 2])]:
        compiled.check(x, onnx_resize(x, attrs, (1, 2), sizes=sizes), sizes=sizes)


@pytest.mark.parametrize("method", ["nearest", "linear"])
def test_crop_and_resize_extrapolates_outside_the_region(method):
    attrs = {"mode": method, "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 7.5}
    compiled = Compiled((1, 2, 4, 5), "float32", (3, 2), method=method,
                        coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.5)
    x = np.random.default_rng(2).standard_normal((1, 2, 4, 5)).astype("float32")
    for roi in [np.array(r, "float32") for r in ([0.1, -0.2, 1.3, 0.9], [0.0, 0.0, 1.0, 1.0], [0.5, 0.4, 0.5, 0.6])]:
        for sizes in (np.array([6, 3], "int64"), np.array([1, 1], "int64")):
            compiled.check(x, onnx_resize(x, attrs, (3, 2), sizes=sizes, roi=roi), sizes=sizes, roi=roi)


def test_integer_data_rounds_half_to_even_and_saturates():
    attrs = {"mode": "cubic"}
    compiled = Compiled((3, 8), "uint8", (1,), method="cubic")
    x = np.random.default_rng(3).integers(0, 256, (3, 8)).astype("uint8")
    for scales in (np.array([1.7], "float32"), np.array([0.6], "float32")):
        compiled.check(x, onnx_resize(x, attrs, (1,), scales=scales), scales=scales, tol=1)


def test_data_with_a_dynamic_batch_and_resized_dynamic_axis():
    """Every length of the data may be known only at run time, a resized one included."""
    compiled = Compiled((relay.Any(), relay.Any()), "float32", (1,), method="linear")
    rng = np.random.default_rng(4)
    for shape, scales in (((2, 5), [1.5]), ((4, 3), [0.7])):
        x = rng.standard_normal(shape).astype("float32")
        scales = np.array(scales, "float32")
        compiled.check(x, onnx_resize(x, {"mode": "linear"}, (1,), scales=scales), scales=scales)


def test_refuses_a_negative_size_and_bad_axes():
    compiled = Compiled((2, 3), "float32", (1,), method="nearest")
    x = np.zeros((2, 3), "float32")
    with pytest.raises(KilnError, match="dyn.image.resize_nd"):
        compiled.vm.invoke("main", x, np.array([-1], "int64"), np.array([1.0]), np.zeros(2, "float32"))
    with pytest.raises(KilnError, match="dyn.image.resize_nd"):
        compiled.reference(x, np.array([-1], "int64"), np.array([1.0]), np.zeros(2, "float32"))
    data = relay.var("x", shape=(2, 3))
    size, scale = relay.var("s", shape=(1,), dtype="int64"), relay.var("c", shape=(1,), dtype="float32")
    for axes in ((2,), (0, 0)):
        call = relay.op.dyn.image.resize_nd(data, size, scale, axes)
        with pytest.raises(KilnError, match="axes"):
            relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([data, size, scale], call)))
