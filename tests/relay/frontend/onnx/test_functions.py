"""Operators converted through their ONNX function bodies (kiln/relay/frontend/onnx/functions.py)."""

import numpy as np

from kiln.relay.frontend.onnx import CONVERTERS

RNG = np.random.default_rng(10)


def test_swish_expands_with_its_attribute(ox):
    assert "Swish" not in CONVERTERS
    x = RNG.standard_normal((3, 4)).astype("float32")
    model = ox.node_model("Swish", {"x": x}, {"alpha": 1.5}, opset=24)
    np.testing.assert_allclose(ox.run_kiln(model, {"x": x})[0], x / (1 + np.exp(-1.5 * x)), rtol=1e-5, atol=1e-6)


def test_context_dependent_rms_normalization(ox):
    assert "RMSNormalization" not in CONVERTERS
    x = RNG.standard_normal((2, 3, 8)).astype("float32")
    scale = RNG.standard_normal(8).astype("float32")
    model = ox.node_model("RMSNormalization", {"x": x}, {"epsilon": 1e-5}, initializers={"s": scale}, opset=23)
    want = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * scale
    np.testing.assert_allclose(ox.run_kiln(model, {"x": x})[0], want, rtol=1e-5, atol=1e-5)


def test_group_normalization(ox):
    x = RNG.standard_normal((2, 6, 3, 3)).astype("float32")
    scale, bias = RNG.standard_normal(6).astype("float32"), RNG.standard_normal(6).astype("float32")
    model = ox.node_model("GroupNormalization", {"x": x}, {"num_groups": 3, "epsilon": 1e-5},
                          initializers={"s": scale, "b": bias}, opset=21)
    g = x.reshape(2, 3, -1)
    norm = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    want = norm * scale[None, :, None, None] + bias[None, :, None, None]
    np.testing.assert_allclose(ox.run_kiln(model, {"x": x})[0], want, rtol=1e-4, atol=1e-5)
