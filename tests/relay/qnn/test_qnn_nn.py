"""Quantized operators of kiln/relay/qnn/op/qnn_nn.py and qnn_elemwise.py: values against numpy definitions over
the real numbers on random inputs, through the reference interpreter and the compiled module (canonical form)."""

import math

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import TypeInferenceError
from kiln.relay.testing import run_infer_type

RNG = np.random.default_rng(21)
QOP = relay.qnn.op


def _c(value, dtype="float32"):
    return relay.const(np.asarray(value, dtype=dtype))


def _both(expr, *args):
    """The interpreter's and the compiled module's values of ``expr`` (free variables in order)."""
    mod = kiln.IRModule.from_expr(relay.Function(relay.analysis.free_vars(expr), expr))
    out = [relay.create_executor(kind, mod=mod, target="llvm").evaluate()(*args).numpy() for kind in ("debug", "graph")]
    assert out[0].dtype == out[1].dtype
    return out


def _quantize(real, scale, zp, dtype):
    info = np.iinfo(dtype)
    scaled = real / scale
    return np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5) + zp, info.min, info.max)


def test_subtract_and_concatenate_requantize_to_the_output():
    a, b = RNG.integers(-60, 60, (2, 5)).astype("int8"), RNG.integers(-60, 60, (2, 5)).astype("int8")
    x, y = relay.var("x", shape=(2, 5), dtype="int8"), relay.var("y", shape=(2, 5), dtype="int8")
    out = QOP.subtract(x, y, _c(0.5), _c(3, "int32"), _c(0.25), _c(-2, "int32"), _c(0.5), _c(1, "int32"))
    want = np.clip((0.5 * (a - 3.0) - 0.25 * (b + 2.0)) / 0.5 + 1, -128, 127)
    for got in _both(out, a, b):
        assert np.abs(got - want).max() <= 1
    cat = QOP.concatenate([x, y], [_c(0.5), _c(0.25)], [_c(3, "int32"), _c(0, "int32")], _c(0.25), _c(1, "int32"), 1)
    want = np.concatenate([_quantize(0.5 * (a - 3.0), 0.25, 1, "int8"), _quantize(0.25 * b, 0.25, 1, "int8")], 1)
    for got in _both(cat, a, b):
        np.testing.assert_array_equal(got, want)


def test_batch_matmul_and_conv2d_transpose_centre_their_operands():
    a, b = RNG.integers(0, 255, (2, 3, 4)).astype("uint8"), RNG.integers(-128, 127, (2, 5, 4)).astype("int8")
    x, y = relay.var("x", shape=(2, 3, 4), dtype="uint8"), relay.var("y", shape=(2, 5, 4), dtype="int8")
    out = QOP.batch_matmul(x, y, _c(128, "int32"), _c(-3, "int32"), _c(0.1), _c(0.2))
    assert run_infer_type(out).checked_type == relay.TensorType((2, 3, 5), "int32")
    want = np.einsum("bik,bjk->bij", a.astype(np.int64) - 128, b.astype(np.int64) + 3)
    for got in _both(out, a, b):
        np.testing.assert_array_equal(got, want)
    d, w = RNG.integers(-128, 127, (1, 2, 3, 3)).astype("int8"), RNG.integers(-128, 127, (2, 4, 2, 2)).astype("int8")
    dv, wv = relay.var("d", shape=(1, 2, 3, 3), dtype="int8"), relay.var("w", shape=(2, 4, 2, 2), dtype="int8")
    conv = QOP.conv2d_transpose(dv, wv, _c(5, "int32"), _c(1, "int32"), _c(1.0), _c(1.0), kernel_size=(2, 2),
                                channels=4, strides=(2, 2))
    centred_d, centred_w = d.astype(np.int64) - 5, w.astype(np.int64) - 1
    want = np.zeros((1, 4, 6, 6), np.int64)  # each input pixel scatters its kernel-weighted copy
    for c, i, j in np.ndindex(2, 3, 3):
        want[0, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2] += centred_d[0, c, i, j] * centred_w[c]
    for got in _both(conv, d, w):
        np.testing.assert_array_equal(got, want)


def test_avg_pool2d_rounds_the_real_average():
    data = RNG.integers(0, 255, (1, 2, 4, 4)).astype("uint8")
    x = relay.var("x", shape=(1, 2, 4, 4), dtype="uint8")
    out = QOP.avg_pool2d(x, _c(0.6), _c(7, "int32"), _c(0.25), _c(3, "int32"), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1),
                         layout="NCHW")
    real = 0.6 * (data.astype(np.float64) - 7)
    average = real.reshape(1, 2, 2, 2, 2, 2).mean(axis=(3, 5))
    for got in _both(out, data):
        assert np.abs(got - _quantize(average, 0.25, 3, "uint8")).max() <= 1


@pytest.mark.parametrize("name,fn", [("sqrt", np.sqrt), ("exp", np.exp), ("erf", np.vectorize(math.erf)),
                                     ("sigmoid", lambda v: 1 / (1 + np.exp(-v))), ("tanh", np.tanh),
                                     ("abs", np.abs), ("hardswish", lambda v: v * np.clip(v + 3, 0, 6) / 6)])
def test_elementwise_functions_follow_the_real_values(name, fn):
    dtype = "uint8" if name == "sqrt" else "int8"
    info = np.iinfo(dtype)
    data = np.arange(info.min, info.max + 1).astype(dtype)  # every value: the lookup table in full
    x = relay.var("x", shape=data.shape, dtype=dtype)
    zp = 0 if name == "sqrt" else 5
    out = getattr(QOP, name)(x, _c(0.05), _c(zp, "int32"), _c(0.02), _c(-3 if dtype == "int8" else 10, "int32"))
    real = 0.05 * (data.astype(np.float64) - zp)
    want = _quantize(fn(real), 0.02, -3 if dtype == "int8" else 10, dtype)
    for got in _both(out, data):
        assert got.dtype == np.dtype(dtype)
        assert np.abs(got - want).max() <= 1


def test_leaky_relu_and_softmax():
    data = RNG.integers(-128, 127, (3, 6)).astype("int8")
    x = relay.var("x", shape=(3, 6), dtype="int8")
    leaky = QOP.leaky_relu(x, 0.2, _c(0.1), _c(4, "int32"), _c(0.05), _c(-1, "int32"))
    real = 0.1 * (data.astype(np.float64) - 4)
    for got in _both(leaky, data):
        assert np.abs(got - _quantize(np.where(real > 0, real, 0.2 * real), 0.05, -1, "int8")).max() <= 1
    soft = QOP.softmax(x, _c(0.1), _c(0, "int32"), _c(1 / 256), _c(-128, "int32"), axis=1)
    e = np.exp(0.1 * data - (0.1 * data).max(axis=1, keepdims=True))
    for got in _both(soft, data):
        assert np.abs(got - _quantize(e / e.sum(axis=1, keepdims=True), 1 / 256, -128, "int8")).max() <= 1


def test_bad_operands_are_type_errors():
    x = relay.var("x", shape=(2, 3, 4), dtype="float32")
    with pytest.raises(TypeInferenceError, match="qnn.batch_matmul"):
        run_infer_type(QOP.batch_matmul(x, x, _c(0, "int32"), _c(0, "int32"), _c(1.0), _c(1.0)))
    q = relay.var("q", shape=(2, 3), dtype="int8")
    with pytest.raises(TypeInferenceError, match="qnn.sqrt"):
        run_infer_type(QOP.sqrt(q, _c(1.0), _c(0.5), _c(1.0), _c(0, "int32")))  # a float zero point


def test_concatenate_of_a_tuple_valued_expression():
    data = RNG.integers(-100, 100, (2, 6)).astype("int8")
    x = relay.var("x", shape=(2, 6), dtype="int8")
    parts = relay.split(x, 2, axis=1)  # a TupleWrapper; its tuple_value is a call, not a literal tuple
    out = QOP.concatenate(parts, [_c(0.5), _c(0.5)], [_c(0, "int32"), _c(0, "int32")], _c(0.25), _c(0, "int32"), 0)
    want = np.concatenate(np.split(_quantize(0.5 * data.astype(np.float64), 0.25, 0, "int8"), 2, axis=1), 0)
    for got in _both(out, data):
        np.testing.assert_array_equal(got, want)
