"""Quantized operators (kiln/relay/qnn/op/): types, values against the real-number definitions on random inputs,
and FoldConstant, which folds them only with fold_qnn."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import TypeInferenceError
from kiln.relay.testing import run_infer_type, run_opt_pass

RNG = np.random.default_rng(5)


def _run(expr, *args):
    params = relay.analysis.free_vars(expr)
    return relay.create_executor("debug", mod=kiln.IRModule.from_expr(relay.Function(params, expr))) \
        .evaluate()(*args).numpy()


def _c(value, dtype):
    return relay.const(np.asarray(value, dtype=dtype))


def test_quantize_dequantize_round_trip():
    x = RNG.uniform(-10, 10, (4, 5)).astype("float32")
    scale, zp = 0.1, 3
    v = relay.var("x", shape=(4, 5))
    q = relay.qnn.op.quantize(v, _c(scale, "float32"), _c(zp, "int32"), out_dtype="int8")
    assert run_infer_type(q).checked_type == relay.TensorType((4, 5), "int8")
    got = _run(q, x)
    scaled = x / np.float32(scale)
    want = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5) + zp, -128, 127)  # halves away from zero
    np.testing.assert_array_equal(got, want.astype("int8"))
    back = _run(relay.qnn.op.dequantize(relay.var("q", shape=(4, 5), dtype="int8"), _c(scale, "float32"),
                                        _c(zp, "int32")), got)
    inside = np.abs(x / scale + zp) < 127
    np.testing.assert_allclose(back[inside], x[inside], atol=scale / 2 + 1e-6)


def test_per_channel_quantize():
    x = RNG.uniform(-1, 1, (2, 3, 4)).astype("float32")
    scales = np.array([0.01, 0.02, 0.05], "float32")
    got = _run(relay.qnn.op.quantize(relay.var("x", shape=(2, 3, 4)), _c(scales, "float32"), _c(0, "int32"), axis=1),
               x)
    scaled = x / scales[None, :, None]
    want = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
    np.testing.assert_array_equal(got, np.clip(want, -128, 127).astype("int8"))


def test_requantize_rounds_halves_up():
    q = np.arange(-6, 7, dtype="int32")
    v = relay.var("q", shape=(13,), dtype="int32")
    r = relay.qnn.op.requantize(v, _c(1.0, "float32"), _c(0, "int32"), _c(4.0, "float32"), _c(2, "int32"))
    np.testing.assert_array_equal(_run(r, q), (np.floor(q / 4 + 0.5) + 2).astype("int8"))
    near = relay.qnn.op.requantize(v, _c(1.0, "float32"), _c(0, "int32"), _c(4.0, "float32"), _c(2, "int32"),
                                   rounding="TONEAREST")
    np.testing.assert_array_equal(_run(near, q), (np.sign(q) * np.floor(np.abs(q) / 4 + 0.5) + 2).astype("int8"))


@pytest.mark.parametrize("name", ["add", "mul"])
def test_add_mul_follow_the_real_values(name):
    a, b = RNG.integers(0, 256, (3, 4)).astype("uint8"), RNG.integers(0, 256, (3, 4)).astype("uint8")
    (sa, za), (sb, zb), (so, zo) = (0.5, 10), (0.25, 20), (2.0 if name == "mul" else 0.5, 7)
    lhs, rhs = relay.var("a", shape=(3, 4), dtype="uint8"), relay.var("b", shape=(3, 4), dtype="uint8")
    op = getattr(relay.qnn.op, name)
    out = op(lhs, rhs, _c(sa, "float32"), _c(za, "int32"), _c(sb, "float32"), _c(zb, "int32"),
             _c(so, "float32"), _c(zo, "int32"))
    got = _run(out, a, b)
    real_a, real_b = sa * (a.astype(np.float64) - za), sb * (b.astype(np.float64) - zb)
    real = real_a + real_b if name == "add" else real_a * real_b
    want = np.clip(real / so + zo, 0, 255)
    assert np.abs(got - want).max() <= 1.0  # each operand is rounded once on the way


def test_per_channel_mul_scales_each_channel():
    a, b = RNG.integers(-20, 20, (2, 3, 4)).astype("int8"), RNG.integers(-20, 20, (2, 3, 4)).astype("int8")
    sa, sb = RNG.uniform(1, 3, 3).astype("float32"), RNG.uniform(1, 3, 3).astype("float32")
    lhs, rhs = relay.var("a", shape=(2, 3, 4), dtype="int8"), relay.var("b", shape=(2, 3, 4), dtype="int8")
    out = relay.qnn.op.mul(lhs, rhs, _c(sa, "float32"), _c(0, "int32"), _c(sb, "float32"), _c(0, "int32"),
                           _c(4.0, "float32"), _c(0, "int32"), lhs_axis=1, rhs_axis=1)
    real = (sa[:, None] * a.astype(np.float64)) * (sb[:, None] * b.astype(np.float64))
    want = np.clip(np.floor(real / 4.0 + 0.5), -128, 127)
    np.testing.assert_array_equal(_run(out, a, b), want)
    built = relay.create_executor("graph", mod=kiln.IRModule.from_expr(relay.Function([lhs, rhs], out)),
                                  target="llvm").evaluate()(a, b).numpy()
    np.testing.assert_array_equal(built, want)


def test_dense_and_conv2d_centre_their_operands():
    d, w = RNG.integers(0, 256, (2, 6)).astype("uint8"), RNG.integers(-128, 128, (5, 6)).astype("int8")
    out = relay.qnn.op.dense(relay.var("d", shape=(2, 6), dtype="uint8"), relay.var("w", shape=(5, 6), dtype="int8"),
                             _c(3, "int32"), _c(-2, "int32"), _c(1.0, "float32"), _c(1.0, "float32"), units=5)
    assert run_infer_type(out).checked_type == relay.TensorType((2, 5), "int32")
    np.testing.assert_array_equal(_run(out, d, w), (d.astype(np.int64) - 3) @ (w.astype(np.int64) + 2).T)
    x, k = RNG.integers(0, 256, (1, 2, 4, 4)).astype("uint8"), RNG.integers(-128, 128, (3, 2, 3, 3)).astype("int8")
    conv = relay.qnn.op.conv2d(relay.var("x", shape=(1, 2, 4, 4), dtype="uint8"),
                               relay.var("k", shape=(3, 2, 3, 3), dtype="int8"), _c(100, "int32"), _c(1, "int32"),
                               _c(1.0, "float32"), _c(1.0, "float32"), kernel_size=(3, 3), channels=3,
                               padding=(1, 1))
    centred = np.pad(x.astype(np.int64) - 100, ((0, 0), (0, 0), (1, 1), (1, 1)))  # padding reads the zero point
    kc = k.astype(np.int64) - 1
    want = np.zeros((1, 3, 4, 4), np.int64)
    for y in range(4):
        for z in range(4):
            want[0, :, y, z] = np.einsum("chw,ochw->o", centred[0, :, y:y + 3, z:z + 3], kc)
    np.testing.assert_array_equal(_run(conv, x, k), want)


def test_bad_parameters_are_type_errors():
    v = relay.var("x", shape=(3,))
    with pytest.raises(TypeInferenceError, match="qnn.quantize: argument 2 has dtype float32"):
        run_infer_type(relay.qnn.op.quantize(v, _c(1.0, "float32"), _c(0.0, "float32")))
    with pytest.raises(TypeInferenceError, match="qnn.dequantize: argument 0 has dtype float32"):
        run_infer_type(relay.qnn.op.dequantize(v, _c(1.0, "float32"), _c(0, "int32")))
    with pytest.raises(TypeInferenceError, match="zero_point"):  # a matrix of zero points
        run_infer_type(relay.qnn.op.quantize(v, _c(1.0, "float32"), _c([[0]], "int32")))


def test_fold_constant_folds_qnn_only_when_asked():
    q = relay.qnn.op.quantize(_c([1.0, 1.25, 3.0], "float32"), _c(0.5, "float32"), _c(1, "int32"))
    body = relay.add(relay.var("x", shape=(3,), dtype="int8"), q)
    func = relay.Function(relay.analysis.free_vars(body), body)
    kept = run_opt_pass(func, relay.transform.FoldConstant())
    assert kiln.ir.structural_equal(kept, run_opt_pass(func, relay.transform.InferType()))
    folded = run_opt_pass(func, relay.transform.FoldConstant(fold_qnn=True))
    assert isinstance(folded.body.args[1], relay.Constant)
    np.testing.assert_array_equal(folded.body.args[1].data.numpy(), np.array([3, 4, 7], "int8"))  # 2.5 rounds away from 0


def test_requantize_config_sets_the_rounding_of_unspecified_calls():
    q = np.arange(0, -32, -1).astype("int32")
    v = relay.var("q", shape=(32,), dtype="int32")
    unspecified = relay.qnn.op.requantize(v, _c(1.0, "float32"), _c(0, "int32"), _c(16.0, "float32"),
                                          _c(0, "int32"), out_dtype="int8")
    explicit = relay.qnn.op.requantize(v, _c(1.0, "float32"), _c(0, "int32"), _c(16.0, "float32"), _c(0, "int32"),
                                       rounding="UPWARD", out_dtype="int8")
    up, near = np.floor(q / 16 + 0.5), np.sign(q) * np.floor(np.abs(q) / 16 + 0.5)
    np.testing.assert_array_equal(_run(unspecified, q), up)  # TVM's default: halves up
    with relay.qnn.requantize_config(rounding="TONEAREST"):
        np.testing.assert_array_equal(_run(unspecified, q), near)
        built = relay.create_executor("graph", mod=kiln.IRModule.from_expr(relay.Function([v], unspecified)),
                                      target="llvm").evaluate()(q).numpy()
        np.testing.assert_array_equal(built, near)
        np.testing.assert_array_equal(_run(explicit, q), up)  # a call's own rounding wins
    with pytest.raises(kiln.error.KilnError, match="rounding must be one of"):
        relay.qnn.requantize_config(rounding="DOWN")


def test_quantize_to_uint16():
    x = RNG.uniform(-1, 40, (3, 4)).astype("float32")
    out = relay.qnn.op.quantize(relay.var("x", shape=(3, 4)), _c(0.001, "float32"), _c(100, "int32"),
                                out_dtype="uint16")
    assert run_infer_type(out).checked_type == relay.TensorType((3, 4), "uint16")
    scaled = x / np.float32(0.001)
    want = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5) + 100, 0, 65535)
    got = relay.create_executor("graph", mod=kiln.IRModule.from_expr(relay.Function(relay.analysis.free_vars(out),
                                                                                     out)), target="llvm")
    np.testing.assert_array_equal(got.evaluate()(x).numpy(), want.astype("uint16"))
    np.testing.assert_array_equal(_run(out, x), want.astype("uint16"))
