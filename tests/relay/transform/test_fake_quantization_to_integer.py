"""FakeQuantizationToInteger (kiln/relay/transform/fake_quantization_to_integer.py, rules in
kiln/relay/qnn/op/fake_quantization*.py): each rewritten program computes on integers what the fake-quantized float
program computes, on random inputs, through the reference interpreter and the compiled module."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.ir import TensorAffineType, structural_equal
from kiln.relay.analysis import post_order_visit
from kiln.relay.transform import FakeQuantizationToInteger, InferType

RNG = np.random.default_rng(13)
dq, q = relay.qnn.op.dequantize, relay.qnn.op.quantize


def _c(value, dtype="float32"):
    return relay.const(np.asarray(value, dtype=dtype))


def _ops(mod):
    names = []
    post_order_visit(mod["main"], lambda e: names.append(e.op.name) if isinstance(e, relay.Call) else None)
    return names


def _ints(shape, dtype="int8", low=-128, high=127):
    return RNG.integers(low, high, size=shape).astype(dtype)


def check(expr, args, float_ops, tolerance=0, **options):
    """Rewrite ``expr``; no call of ``float_ops`` may remain; the interpreter and the built module of the rewritten
    program agree with the interpreter on the original within ``tolerance`` integer units."""
    mod = InferType()(kiln.IRModule.from_expr(expr))
    rewritten = FakeQuantizationToInteger(**options)(mod)
    assert not structural_equal(mod, rewritten)
    left = [name for name in _ops(rewritten) if name in float_ops]
    assert not left, f"float operators left after the rewrite: {left}"
    want = relay.create_executor("debug", mod=mod).evaluate()(*args).numpy().astype("int64")
    for kind in ("debug", "graph"):
        got = relay.create_executor(kind, mod=rewritten, target="llvm").evaluate()(*args).numpy()
        assert got.dtype.kind in "iu", kind
        assert np.abs(got.astype("int64") - want).max(initial=0) <= tolerance, kind
    return rewritten


def test_conv2d_becomes_qnn_conv2d():
    x, w = relay.var("x", shape=(1, 3, 8, 8), dtype="int8"), relay.var("w", shape=(4, 3, 3, 3), dtype="int8")
    conv = relay.nn.conv2d(dq(x, _c(0.5), _c(0, "int32")), dq(w, _c(0.25), _c(0, "int32")), kernel_size=(3, 3),
                           padding=(1, 1))
    out = q(conv, _c(1.0), _c(0, "int32"), out_dtype="uint8")
    mod = check(out, [_ints((1, 3, 8, 8)), _ints((4, 3, 3, 3))], {"nn.conv2d", "qnn.dequantize"})
    assert "qnn.conv2d" in _ops(mod) and "qnn.requantize" in _ops(mod)


def test_dense_per_channel_with_bias():
    x, w = relay.var("x", shape=(4, 16), dtype="int8"), relay.var("w", shape=(8, 16), dtype="int8")
    b = relay.var("b", shape=(8,), dtype="int32")
    w_scale = RNG.uniform(0.01, 0.1, 8).astype("float32")
    dense = relay.nn.dense(dq(x, _c(0.5), _c(3, "int32")), dq(w, _c(w_scale), _c([0] * 8, "int32"), axis=0))
    out = q(relay.add(dense, dq(b, _c(0.5 * w_scale), _c(0, "int32"))), _c(0.3), _c(-2, "int32"))
    args = [_ints((4, 16)), _ints((8, 16)), _ints((8,), "int32", -500, 500)]
    mod = check(out, args, {"nn.dense", "qnn.dequantize"}, tolerance=1)
    assert "qnn.dense" in _ops(mod)


@pytest.mark.parametrize("op", [relay.add, relay.multiply, relay.minimum, relay.maximum])
def test_binary_with_different_scales(op):
    x, y = relay.var("x", shape=(2, 3, 5), dtype="int8"), relay.var("y", shape=(2, 3, 5), dtype="int8")
    z = op(dq(x, _c(0.1), _c(2, "int32")), dq(y, _c(0.2), _c(-1, "int32")))
    out = q(z, _c(2.0 if op is relay.multiply else 0.1), _c(1, "int32"))
    check(out, [_ints((2, 3, 5), low=-25, high=25), _ints((2, 3, 5), low=-25, high=25)],
          {"add", "multiply", "qnn.dequantize"}, tolerance=1)


def test_per_channel_multiply_and_float_constant_operand():
    x, y = relay.var("x", shape=(1, 3, 4), dtype="int8"), relay.var("y", shape=(1, 3, 4), dtype="int8")
    s = RNG.uniform(1, 3, 3).astype("float32")
    z = relay.multiply(dq(x, _c(s), _c([1, 2, 0], "int32"), axis=1), dq(y, _c(s[::-1].copy()), _c(0, "int32"), axis=1))
    check(q(z, _c(2.0), _c(0, "int32")), [_ints((1, 3, 4), low=-20, high=20), _ints((1, 3, 4), low=-20, high=20)],
          {"multiply"}, tolerance=1)
    c = q(relay.add(dq(x, _c(0.1), _c(10, "int32")), _c(1.0)), _c(0.1), _c(10, "int32"))
    check(c, [_ints((1, 3, 4), low=-25, high=25)], {"add"})


def test_moving_operators_keep_the_quantization():
    x = relay.var("x", shape=(1, 4, 6, 6), dtype="uint8")
    v = dq(x, _c(0.5), _c(100, "int32"))
    v = relay.nn.max_pool2d(relay.transpose(v, (0, 1, 3, 2)), (2, 2))
    v = relay.reshape(relay.nn.relu(relay.clip(v, -10.0, 20.0)), (1, -1))
    out = q(relay.strided_slice(v, [0, 1], [1, 30]), _c(0.5), _c(100, "int32"), out_dtype="uint8")
    mod = check(out, [_ints((1, 4, 6, 6), "uint8", 0, 255)], {"qnn.dequantize", "qnn.requantize", "nn.relu"})
    assert set(_ops(mod)) == {"transpose", "nn.max_pool2d", "clip", "maximum", "reshape", "strided_slice"}


def test_per_channel_relu_and_clip():
    x = relay.var("x", shape=(1, 3, 4, 4), dtype="uint8")
    s, z = _c([1.0, 2.0, 3.0]), _c([96, 114, 128], "int32")
    out = q(relay.clip(relay.nn.relu(dq(x, s, z, axis=1)), 0.0, 6.0), s, z, out_dtype="uint8", axis=1)
    check(out, [_ints((1, 3, 4, 4), "uint8", 0, 255)], {"qnn.dequantize", "nn.relu", "clip"})


def test_split_tuple_and_averages():
    x = relay.var("x", shape=(1, 4, 6, 6), dtype="int8")
    parts = relay.split(dq(x, _c(2.0), _c(-12, "int32")), 2, axis=3)
    pooled = relay.nn.global_avg_pool2d(parts[1])
    check(q(pooled, _c(0.5), _c(10, "int32")), [_ints((1, 4, 6, 6))], {"qnn.dequantize"}, tolerance=1)
    m = q(relay.mean(dq(x, _c(2.0), _c(-12, "int32")), axis=[2, 3]), _c(2.0), _c(-12, "int32"))
    check(m, [_ints((1, 4, 6, 6))], {"qnn.dequantize"}, tolerance=1)


def test_pad_value_is_quantized():
    x = relay.var("x", shape=(1, 5, 3), dtype="int8")
    out = q(relay.nn.pad(dq(x, _c(1.0), _c(10, "int32")), ((0, 0), (1, 1), (0, 0)), 2.0), _c(1.0), _c(10, "int32"))
    check(out, [_ints((1, 5, 3), low=-25, high=25)], {"qnn.dequantize"})


def test_regions_that_are_not_fake_quantized_stay():
    x, f = relay.var("x", shape=(2, 3), dtype="int8"), relay.var("f", shape=(2, 3))
    out = q(relay.add(dq(x, _c(0.5), _c(0, "int32")), f), _c(0.5), _c(0, "int32"))  # a float input inside
    mod = InferType()(kiln.IRModule.from_expr(out))
    assert structural_equal(FakeQuantizationToInteger()(mod), mod)


def test_hard_fail_on_an_operator_without_rule():
    x = relay.var("x", shape=(2, 3), dtype="int8")
    out = q(relay.cos(dq(x, _c(0.5), _c(0, "int32"))), _c(0.5), _c(0, "int32"))
    mod = InferType()(kiln.IRModule.from_expr(out))
    assert structural_equal(FakeQuantizationToInteger()(mod), mod)
    with pytest.raises(kiln.error.KilnError, match="cos"):
        FakeQuantizationToInteger(hard_fail=True)(mod)


def test_affine_types():
    t = TensorAffineType(_c(0.5), _c(0, "int32"), "int8", 1)
    assert t.axis == 1 and t.dtype == "int8"
    assert structural_equal(t, TensorAffineType(_c(0.5), _c(0, "int32"), "int8", 1))
    assert not structural_equal(t, TensorAffineType(_c(0.25), _c(0, "int32"), "int8", 1))
    with pytest.raises(kiln.error.ArgumentTypeError):
        kiln.ir.TupleAffineType([1])


def test_batch_matmul_subtract_and_concatenate():
    x, y = relay.var("x", shape=(1, 4, 6), dtype="int8"), relay.var("y", shape=(1, 5, 6), dtype="int8")
    mm = relay.nn.batch_matmul(dq(x, _c(0.5), _c(1, "int32")), dq(y, _c(0.25), _c(-2, "int32")))
    mod = check(q(mm, _c(2.0), _c(0, "int32")), [_ints((1, 4, 6)), _ints((1, 5, 6))], {"nn.batch_matmul"}, 1)
    assert "qnn.batch_matmul" in _ops(mod)
    a, b = relay.var("a", shape=(2, 3), dtype="int8"), relay.var("b", shape=(2, 3), dtype="int8")
    da, db = dq(a, _c(0.5), _c(0, "int32")), dq(b, _c(1.5), _c(3, "int32"))
    check(q(relay.subtract(da, db), _c(0.5), _c(2, "int32")), [_ints((2, 3), low=-30, high=30)] * 2, {"subtract"}, 1)
    mod = check(q(relay.concatenate([da, db], 1), _c(3.5), _c(0, "int32")), [_ints((2, 3))] * 2, {"concatenate"})
    assert "qnn.concatenate" in _ops(mod)


@pytest.mark.parametrize("op", [relay.sqrt, relay.exp, relay.erf, relay.sigmoid, relay.tanh, relay.log, relay.abs])
def test_elementwise_functions_become_lookup_tables(op):
    x = relay.var("x", shape=(4, 5), dtype="uint8")
    out = q(op(dq(x, _c(0.03), _c(0, "int32"))), _c(0.02), _c(3, "int32"), out_dtype="uint8")
    mod = check(out, [_ints((4, 5), "uint8", 0, 255)], {op.__name__}, tolerance=1)
    assert _ops(mod) == [f"qnn.{op.__name__}"]
    canonical = relay.transform.QnnCanonicalize()(mod)
    assert set(_ops(canonical)) <= {"cast", "subtract", "take"}  # the table, indexed by the integers


def test_pools_and_leaky_relu():
    x = relay.var("x", shape=(1, 2, 6, 6), dtype="uint8")
    pooled = relay.nn.avg_pool2d(dq(x, _c(2.0), _c(12, "int32")), (3, 3))
    check(q(pooled, _c(0.5), _c(10, "int32"), out_dtype="uint8"), [_ints((1, 2, 6, 6), "uint8", 0, 255)],
          {"nn.avg_pool2d"}, tolerance=1)
    leaky = relay.nn.leaky_relu(dq(x, _c(2.0), _c(114, "int32")), 0.1)
    check(q(leaky, _c(2.0), _c(114, "int32"), out_dtype="uint8"), [_ints((1, 2, 6, 6), "uint8", 0, 255)],
          {"nn.leaky_relu"}, tolerance=1)


def test_softmax_only_when_asked():
    x = relay.var("x", shape=(3, 8), dtype="int8")
    out = q(relay.nn.softmax(dq(x, _c(0.1), _c(0, "int32")), axis=1), _c(1 / 256), _c(-128, "int32"))
    mod = InferType()(kiln.IRModule.from_expr(out))
    assert structural_equal(FakeQuantizationToInteger()(mod), mod)
    check(out, [_ints((3, 8))], {"nn.softmax"}, tolerance=1, optional_qnn_ops=["nn.softmax"])


def test_qat_converts_operators_whose_inputs_are_dequantized():
    a, b = relay.var("a", shape=(1, 4, 2), dtype="int8"), relay.var("b", shape=(1, 3, 2), dtype="int8")
    mm = relay.nn.batch_matmul(dq(a, _c(2.0), _c(0, "int32")), dq(b, _c(6.0), _c(0, "int32")))
    expr = relay.erf(relay.add(mm, _c(1.0)))  # no quantize closes the region
    mod = InferType()(kiln.IRModule.from_expr(expr))
    assert structural_equal(FakeQuantizationToInteger()(mod), mod)
    rewritten = FakeQuantizationToInteger(False, True)(mod)
    qmm = relay.qnn.op.batch_matmul(a, b, _c(0, "int32"), _c(0, "int32"), _c(2.0), _c(6.0))
    want = relay.erf(relay.add(dq(qmm, _c(12.0), _c(0, "int32")), _c(1.0)))
    assert structural_equal(rewritten, InferType()(kiln.IRModule.from_expr(want)))
    args = [_ints((1, 4, 2)), _ints((1, 3, 2))]
    ref = relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()
    got = relay.create_executor("graph", mod=rewritten, target="llvm").evaluate()(*args).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-5)
