"""QuantizeLinear / DequantizeLinear converters (kiln/relay/frontend/onnx/quantize.py) against onnxruntime."""

import numpy as np
import pytest

RNG = np.random.default_rng(8)


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_per_tensor_round_trip(ox, dtype):
    x = np.array([-3.0, -1.25, -0.5, 0.0, 0.25, 0.75, 1.5, 2.5, 300.0], "float32")
    scale, zero = np.array(0.5, "float32"), np.array(3, dtype)
    ox.check_node("QuantizeLinear", {"x": x}, initializers={"s": scale, "z": zero}, out_dtype=dtype)
    q = RNG.integers(0, 100, (6,)).astype(dtype)
    ox.check_node("DequantizeLinear", {"q": q}, initializers={"s": scale, "z": zero})


def test_default_uint8_without_zero_point(ox):
    x = RNG.uniform(-2, 300, (5,)).astype("float32")
    ox.check_node("QuantizeLinear", {"x": x}, initializers={"s": np.array(2.0, "float32")}, out_dtype="uint8")


def test_per_axis(ox):
    x = RNG.uniform(-5, 5, (2, 3, 4)).astype("float32")
    scale = np.array([0.1, 0.2, 0.3], "float32")
    zero = np.array([0, 10, -5], "int8")
    ox.check_node("QuantizeLinear", {"x": x}, {"axis": 1}, initializers={"s": scale, "z": zero}, out_dtype="int8")
    q = RNG.integers(-100, 100, (2, 3, 4)).astype("int8")
    ox.check_node("DequantizeLinear", {"q": q}, {"axis": 1}, initializers={"s": scale, "z": zero})


def test_blocked(ox):
    x = RNG.uniform(-5, 5, (2, 6)).astype("float32")
    scale = RNG.uniform(0.1, 0.5, (2, 3)).astype("float32")
    zero = RNG.integers(-3, 3, (2, 3)).astype("int8")
    ox.check_node("QuantizeLinear", {"x": x}, {"axis": 1, "block_size": 2}, initializers={"s": scale, "z": zero},
                  out_dtype="int8", opset=21)
    q = RNG.integers(-100, 100, (2, 6)).astype("int8")
    ox.check_node("DequantizeLinear", {"q": q}, {"axis": 1, "block_size": 2}, initializers={"s": scale, "z": zero},
                  opset=21)
