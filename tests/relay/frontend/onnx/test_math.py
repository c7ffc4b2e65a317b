"""Element-wise ONNX converters (kiln/relay/frontend/onnx/math.py) against onnxruntime."""

import numpy as np
import pytest

RNG = np.random.default_rng(1)


def f32(*shape, low=-3.0, high=3.0):
    return RNG.uniform(low, high, shape).astype("float32")


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean"])
def test_broadcasting_arithmetic(ox, op):
    ox.check_node(op, {"a": f32(2, 3, 4), "b": f32(3, 1)})


@pytest.mark.parametrize("op,dtype", [("Add", "int32"), ("Mul", "int64"), ("Sub", "uint8"), ("Div", "int32"),
                                      ("Max", "int64"), ("Div", "float64")])
def test_integer_and_double_arithmetic(ox, op, dtype):
    a = RNG.integers(1, 50, (3, 4)).astype(dtype)
    b = RNG.integers(1, 7, (4,)).astype(dtype)
    ox.check_node(op, {"a": a, "b": b}, out_dtype=dtype)


def test_variadic_sum_of_three(ox):
    ox.check_node("Sum", {"a": f32(2, 3), "b": f32(3), "c": f32(2, 1)})


def test_legacy_broadcast_attribute(ox):
    # opset 6: the right operand aligns at ``axis``
    a, b = f32(2, 3, 4, 5), f32(3, 4)
    model = ox.node_model("Add", {"a": a, "b": b}, {"broadcast": 1, "axis": 1}, opset=6)
    out = ox.run_kiln(model, {"a": a, "b": b})[0]
    np.testing.assert_allclose(out, a + b[None, :, :, None], rtol=1e-6)


@pytest.mark.parametrize("op,low,high", [
    ("Abs", -3, 3), ("Neg", -3, 3), ("Exp", -3, 3), ("Log", 0.1, 4), ("Sqrt", 0.1, 4), ("Reciprocal", 0.5, 4),
    ("Floor", -3, 3), ("Ceil", -3, 3), ("Sign", -3, 3), ("Sin", -3, 3), ("Cos", -3, 3), ("Tan", -1, 1),
    ("Asin", -1, 1), ("Acos", -1, 1), ("Atan", -3, 3), ("Sinh", -2, 2), ("Cosh", -2, 2), ("Asinh", -3, 3),
    ("Acosh", 1, 4), ("Atanh", -0.9, 0.9), ("Erf", -3, 3), ("Relu", -3, 3), ("Sigmoid", -3, 3), ("Tanh", -3, 3),
    ("Softplus", -30, 30), ("Softsign", -3, 3), ("Identity", -3, 3),
])
def test_unary(ox, op, low, high):
    ox.check_node(op, {"x": f32(3, 4, low=low, high=high)}, rtol=1e-5, atol=1e-6)


def test_round_halves_to_even(ox):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.2, -0.7, 3.50001], "float32")
    out = ox.check_node("Round", {"x": x})[0]
    assert out.tolist()[:6] == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0]


@pytest.mark.parametrize("op,attrs", [
    ("LeakyRelu", {"alpha": 0.2}), ("Elu", {"alpha": 0.7}), ("Selu", {}), ("Celu", {"alpha": 1.5}),
    ("ThresholdedRelu", {"alpha": 0.5}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("HardSwish", {}),
    ("Mish", {}), ("Shrink", {"bias": 0.5, "lambd": 1.0}), ("Gelu", {}), ("Gelu", {"approximate": "tanh"}),
])
def test_activations(ox, op, attrs):
    opset = {"Mish": 18, "Gelu": 20}.get(op, 17)
    model = ox.node_model(op, {"x": f32(2, 5)}, attrs, opset=opset)
    x = f32(2, 5)
    if op == "Gelu":  # onnxruntime 1.x may not run opset 20 Gelu: compare with the formula
        from math import erf, pi, sqrt, tanh

        if attrs:
            want = [0.5 * v * (1 + tanh(sqrt(2 / pi) * (v + 0.044715 * v ** 3))) for v in x.reshape(-1)]
        else:
            want = [0.5 * v * (1 + erf(v / sqrt(2))) for v in x.reshape(-1)]
        np.testing.assert_allclose(ox.run_kiln(model, {"x": x})[0].reshape(-1), want, rtol=1e-5, atol=1e-6)
    else:
        ox.check(model, {"x": x})


def test_prelu_channel_slope(ox):
    ox.check_node("PRelu", {"x": f32(2, 3, 4, 4)}, initializers={"slope": f32(3, 1, 1)})
    # opset 6 style: a 1-D slope of C values applies along axis 1
    x = f32(2, 3, 4, 4)
    slope = np.array([0.1, 0.2, 0.3], "float32")
    model = ox.node_model("PRelu", {"x": x}, initializers={"slope": slope}, opset=6)
    want = np.where(x < 0, x * slope[None, :, None, None], x)
    np.testing.assert_allclose(ox.run_kiln(model, {"x": x})[0], want, rtol=1e-6)


@pytest.mark.parametrize("attrs,opset", [({"min": -1.0, "max": 0.5}, 6), ({}, 6)])
def test_clip_attributes(ox, attrs, opset):
    ox.check_node("Clip", {"x": f32(3, 4)}, attrs, opset=opset)


def test_clip_inputs(ox):
    x = f32(3, 4)
    ox.check_node("Clip", {"x": x}, initializers={"lo": np.array(-0.5, "float32"), "hi": np.array(1.0, "float32")})
    ox.check_node("Clip", {"x": x}, initializers={"hi": np.array(1.0, "float32")}, input_names=["x", "", "hi"])
    # bounds that are graph inputs become maximum/minimum
    ox.check_node("Clip", {"x": x, "lo": np.array(-1.0, "float32"), "hi": np.array(2.0, "float32")})
    # a minimum above the maximum gives the maximum everywhere
    out = ox.check_node("Clip", {"x": x}, initializers={"lo": np.array(2.0, "float32"),
                                                        "hi": np.array(1.0, "float32")})[0]
    assert (out == 1.0).all()
    ints = RNG.integers(-10, 10, (5,)).astype("int32")
    ox.check_node("Clip", {"x": ints}, initializers={"lo": np.array(-3, "int32")}, out_dtype="int32")


@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
def test_comparisons(ox, op):
    a = RNG.integers(0, 3, (2, 3)).astype("float32")
    b = RNG.integers(0, 3, (3,)).astype("float32")
    ox.check_node(op, {"a": a, "b": b}, out_dtype="bool")


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
def test_logic(ox, op):
    a, b = RNG.integers(0, 2, (2, 3)).astype(bool), RNG.integers(0, 2, (3,)).astype(bool)
    ox.check_node(op, {"a": a, "b": b}, out_dtype="bool")
    ox.check_node("Not", {"a": a}, out_dtype="bool")


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
def test_bitwise(ox, op):
    a, b = RNG.integers(0, 255, (6,)).astype("uint8"), RNG.integers(0, 255, (6,)).astype("uint8")
    ox.check_node(op, {"a": a, "b": b}, out_dtype="uint8", opset=18)
    ox.check_node("BitwiseNot", {"a": a}, out_dtype="uint8", opset=18)


def test_bit_shift(ox):
    a, b = np.array([16, 4, 1], "uint32"), np.array([1, 2, 3], "uint32")
    ox.check_node("BitShift", {"a": a, "b": b}, {"direction": "LEFT"}, out_dtype="uint32")
    ox.check_node("BitShift", {"a": a, "b": b}, {"direction": "RIGHT"}, out_dtype="uint32")


def test_mod(ox):
    a = np.array([-7, -3, 3, 7, 5], "int32")
    b = np.array([2, -2, -2, 3, 5], "int32")
    ox.check_node("Mod", {"a": a, "b": b}, out_dtype="int32")
    ox.check_node("Mod", {"a": a, "b": b}, {"fmod": 1}, out_dtype="int32")
    ox.check_node("Mod", {"a": f32(5), "b": np.array([2, -2, 1.5, 3, -1], "float32")}, {"fmod": 1})


def test_pow_with_mixed_dtypes(ox):
    base = f32(2, 3, low=0.5, high=2.0)
    ox.check_node("Pow", {"a": base, "b": np.array([2, 3, -1], "int64")})
    ox.check_node("Pow", {"a": base, "b": f32(3, low=-1, high=2)})
    ox.check_node("Pow", {"a": np.array([2, 3, 4], "int32"), "b": np.array([2, 0, 1], "int32")}, out_dtype="int32")


def test_isnan_isinf(ox):
    x = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], "float32")
    ox.check_node("IsNaN", {"x": x}, out_dtype="bool")
    ox.check_node("IsInf", {"x": x}, out_dtype="bool")
    ox.check_node("IsInf", {"x": x}, {"detect_negative": 0}, out_dtype="bool")
    ox.check_node("IsInf", {"x": x}, {"detect_positive": 0}, out_dtype="bool")


@pytest.mark.parametrize("dtype", ["int32", "int8", "float32"])
def test_div_and_mod_of_integers_truncate(ox, dtype):
    """ONNX Div of integers and Mod with fmod=1 truncate toward zero: Relay's trunc_divide and trunc_mod (issue #10);
    of floats they are divide and mod (C's exact fmod)."""
    from kiln import relay

    a = np.array([[7, -7, 7, -7], [5, -3, 0, 9]], dtype)
    b = np.array([2, 2, -2, -3], dtype)
    for op, attrs, relay_op in (("Div", {}, "trunc_divide"), ("Mod", {"fmod": 1}, "trunc_mod")):
        ox.check_node(op, {"a": a, "b": b}, attrs, out_dtype=dtype)
        mod, _ = relay.frontend.from_onnx(ox.node_model(op, {"a": a, "b": b}, attrs, out_dtype=dtype))
        names = []
        relay.analysis.post_order_visit(mod["main"], lambda e, names=names: names.append(e.op.name)
                                        if isinstance(e, relay.Call) else None)
        float_op = "divide" if op == "Div" else "mod"
        assert names == [float_op if dtype == "float32" else relay_op]
