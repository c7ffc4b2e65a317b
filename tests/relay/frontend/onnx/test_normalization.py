"""Normalization and softmax-family converters (kiln/relay/frontend/onnx/normalization.py) against onnxruntime."""

import numpy as np
import pytest

from kiln.error import OpNotImplemented

RNG = np.random.default_rng(3)


def f32(*shape):
    return RNG.standard_normal(shape).astype("float32")


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3)])
def test_batch_norm(ox, shape):
    c = shape[1]
    inits = {"s": f32(c), "b": f32(c), "m": f32(c), "v": RNG.uniform(0.5, 2, c).astype("float32")}
    ox.check_node("BatchNormalization", {"x": f32(*shape)}, {"epsilon": 1e-3}, initializers=inits, rtol=1e-5,
                  atol=1e-5)


def test_batch_norm_training_mode_is_rejected(ox):
    inits = {"s": f32(3), "b": f32(3), "m": f32(3), "v": np.ones(3, "float32")}
    model = ox.node_model("BatchNormalization", {"x": f32(2, 3)}, {"training_mode": 1}, initializers=inits)
    with pytest.raises(OpNotImplemented, match="training_mode"):
        ox.run_kiln(model, {"x": f32(2, 3)})


@pytest.mark.parametrize("shape", [(2, 3, 5, 4), (2, 3, 6)])
def test_instance_norm(ox, shape):
    ox.check_node("InstanceNormalization", {"x": f32(*shape)}, {"epsilon": 1e-4},
                  initializers={"s": f32(shape[1]), "b": f32(shape[1])}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis,outputs", [(-1, ("y",)), (1, ("y",)), (-1, ("y", "mean", "inv_std"))])
def test_layer_norm(ox, axis, outputs):
    x = f32(2, 3, 4)
    norm_shape = x.shape[axis:] if axis > 0 else x.shape[-1:]
    ox.check_node("LayerNormalization", {"x": x}, {"axis": axis, "epsilon": 1e-5},
                  initializers={"s": f32(*norm_shape), "b": f32(*norm_shape)}, outputs=outputs, rtol=1e-4, atol=1e-5)


def test_layer_norm_without_bias(ox):
    ox.check_node("LayerNormalization", {"x": f32(2, 5)}, initializers={"s": f32(5)}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("size", [3, 5])
def test_lrn(ox, size):
    ox.check_node("LRN", {"x": f32(2, 6, 3, 3)}, {"size": size, "alpha": 0.01, "beta": 0.7, "bias": 1.5},
                  rtol=1e-5, atol=1e-5)


def test_lrn_even_size_follows_the_onnx_window(ox):
    # onnxruntime rejects even sizes; ONNX sums channels c - 1 .. c + 2 for size 4
    x = f32(1, 6, 2, 2)
    model = ox.node_model("LRN", {"x": x}, {"size": 4, "alpha": 0.01, "beta": 0.7, "bias": 1.5})
    squares = np.pad(x * x, ((0, 0), (1, 2), (0, 0), (0, 0)))
    total = sum(squares[:, k : k + 6] for k in range(4))
    want = x / (1.5 + 0.01 / 4 * total) ** 0.7
    np.testing.assert_allclose(ox.run_kiln(model, {"x": x})[0], want, rtol=1e-5)


def test_mean_variance_normalization(ox):
    ox.check_node("MeanVarianceNormalization", {"x": f32(2, 3, 4, 5)}, rtol=1e-4, atol=1e-5)
    ox.check_node("MeanVarianceNormalization", {"x": f32(2, 3, 4)}, {"axes": [1, 2]}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("p", [1, 2])
def test_lp_normalization(ox, p):
    x = f32(3, 4)
    x[1] = 0  # a zero vector stays zero
    ox.check_node("LpNormalization", {"x": x}, {"axis": 1, "p": p})


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize("axis,opset", [(1, 11), (0, 11), (-1, 11), (1, 13), (-1, 13), (0, 13)])
def test_softmax_family_axis_semantics(ox, op, axis, opset):
    x = f32(2, 3, 4)
    ox.check_node(op, {"x": x}, {"axis": axis}, opset=opset, rtol=1e-5, atol=1e-6)


def test_softmax_defaults_differ_by_opset(ox):
    x = f32(2, 3, 4)
    old = ox.run_kiln(ox.node_model("Softmax", {"x": x}, opset=11), {"x": x})[0]
    new = ox.run_kiln(ox.node_model("Softmax", {"x": x}, opset=13), {"x": x})[0]
    np.testing.assert_allclose(old.reshape(2, 12).sum(1), 1, rtol=1e-5)  # axis 1 of a 2-D view
    np.testing.assert_allclose(new.sum(-1), 1, rtol=1e-5)                 # the last axis


def test_dropout_is_identity_with_mask(ox):
    x = f32(3, 4)
    ox.check_node("Dropout", {"x": x}, outputs=("y",))
    model = ox.make_model([ox.helper.make_node("Dropout", ["x", "r"], ["y", "mask"])], {"x": x},
                          ["y", ("mask", "bool")], {"r": np.array(0.3, "float32")})
    out, mask = ox.run_kiln(model, {"x": x})
    np.testing.assert_array_equal(out, x)
    assert mask.dtype == bool and mask.all()
