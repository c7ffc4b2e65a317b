"""Element-wise operators of the reference interpreter against independent numpy/math references."""

import math

import numpy as np
import pytest

from kiln import relay

RNG = np.random.default_rng(1)


def run(expr, **inputs):
    params = relay.analysis.free_vars(expr)
    out = relay.create_executor().evaluate(relay.Function(params, expr))(**inputs)
    return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()


def v(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


@pytest.mark.parametrize("op,ref", [
    (relay.add, np.add), (relay.subtract, np.subtract), (relay.multiply, np.multiply),
    (relay.maximum, np.maximum), (relay.minimum, np.minimum), (relay.divide, np.divide),
])
def test_broadcast_binary_float(op, ref):
    a, b = RNG.standard_normal((2, 1, 4)).astype("f4"), RNG.standard_normal((3, 1)).astype("f4") + 3
    out = run(op(v("a", (2, 1, 4)), v("b", (3, 1))), a=a, b=b)
    assert out.dtype == np.float32 and out.shape == (2, 3, 4)
    np.testing.assert_allclose(out, ref(a.astype("f8"), b.astype("f8")), rtol=1e-6)


def test_integer_divide_truncates_toward_zero():
    a = np.array([7, -7, 7, -7, 0, 5, -1], "int32")
    b = np.array([2, 2, -2, -2, 3, 5, 3], "int32")
    expected = [int(x / y) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    out = run(relay.divide(v("a", (7,), "int32"), v("b", (7,), "int32")), a=a, b=b)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, expected)


def test_power_float_and_int():
    a, b = np.abs(RNG.standard_normal(5)).astype("f4"), RNG.standard_normal(5).astype("f4")
    np.testing.assert_allclose(run(relay.power(v("a", (5,)), v("b", (5,))), a=a, b=b), a.astype("f8") ** b, rtol=1e-5)
    ia, ib = np.array([2, 3, -2, 5], "int32"), np.array([3, 0, 3, 1], "int32")
    out = run(relay.power(v("a", (4,), "int32"), v("b", (4,), "int32")), a=ia, b=ib)
    np.testing.assert_array_equal(out, [8, 1, -8, 5])
    assert out.dtype == np.int32


@pytest.mark.parametrize("op,ref", [
    (relay.negative, lambda x: -x), (relay.exp, math.exp), (relay.tanh, math.tanh),
    (relay.sigmoid, lambda x: 1 / (1 + math.exp(-x))), (relay.abs, abs), (relay.erf, math.erf),
    (relay.floor, math.floor), (relay.ceil, math.ceil), (relay.sign, lambda x: (x > 0) - (x < 0)),
])
def test_unary_math(op, ref):
    a = (RNG.standard_normal((3, 4)) * 3).astype("f4")
    out = run(op(v("a", (3, 4))), a=a)
    assert out.dtype == np.float32
    expected = np.array([[ref(float(x)) for x in row] for row in a])
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-7)


def test_log_sqrt_rsqrt():
    a = (np.abs(RNG.standard_normal(6)) + 0.1).astype("f4")
    x = v("a", (6,))
    np.testing.assert_allclose(run(relay.log(x), a=a), [math.log(t) for t in a], rtol=1e-6)
    np.testing.assert_allclose(run(relay.sqrt(x), a=a), [math.sqrt(t) for t in a], rtol=1e-6)
    np.testing.assert_allclose(run(relay.rsqrt(x), a=a), [1 / math.sqrt(t) for t in a], rtol=1e-6)


def test_round_ties_away_from_zero():
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 2.4, -2.6], "float32")
    out = run(relay.round(v("a", (9,))), a=a)
    np.testing.assert_array_equal(out, [1, 2, 3, -1, -2, -3, 0, 2, -3])


def test_sigmoid_saturates_without_nan():
    a = np.array([-200.0, 0.0, 200.0], "float32")
    np.testing.assert_array_equal(run(relay.sigmoid(v("a", (3,))), a=a), [0.0, 0.5, 1.0])


def test_clip_float_and_integer_bounds():
    a = np.linspace(-3, 3, 13).astype("f4")
    np.testing.assert_array_equal(run(relay.clip(v("a", (13,)), -1.5, 2.0), a=a), [min(max(t, -1.5), 2.0) for t in a])
    ia = np.arange(-5, 6, dtype="int32")
    out = run(relay.clip(v("a", (11,), "int32"), -2.7, float("inf")), a=ia)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [max(t, -2) for t in ia])  # int(-2.7) == -2, as TVM's const


def test_cast():
    a = np.array([-1.7, -0.2, 0.0, 0.6, 2.9], "float32")
    x = v("a", (5,))
    np.testing.assert_array_equal(run(relay.cast(x, "int32"), a=a), [-1, 0, 0, 0, 2])
    np.testing.assert_array_equal(run(relay.cast(x, "bool"), a=a), [True, True, False, True, True])
    assert run(relay.cast(x, "float16"), a=a).dtype == np.float16


def test_where_broadcasts_and_accepts_integer_conditions():
    c = np.array([[1], [0]], "int32")
    x, y = RNG.standard_normal((2, 3)).astype("f4"), RNG.standard_normal((3,)).astype("f4")
    out = run(relay.where(v("c", (2, 1), "int32"), v("x", (2, 3)), v("y", (3,))), c=c, x=x, y=y)
    np.testing.assert_array_equal(out, [x[0], y])


def test_zeros_ones_full():
    assert run(relay.zeros((2, 3), "int8")).tolist() == [[0] * 3] * 2
    ones = run(relay.ones((4,), "float16"))
    assert ones.dtype == np.float16 and ones.tolist() == [1, 1, 1, 1]
    full = run(relay.full(relay.const(2.5), (2, 2), "int32"))
    assert full.dtype == np.int32 and full.tolist() == [[2, 2], [2, 2]]
    fill = relay.var("f", shape=(), dtype="float32")
    np.testing.assert_array_equal(run(relay.full(fill, (3,), "float32"), f=np.float32(7)), [7, 7, 7])


def test_float32_stays_float32_with_python_scalars():
    x = v("x", (3,))
    out = run(x * 0.1 + 1e-3, x=np.ones(3, "f4"))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.float32(0.1) + np.float32(1e-3), rtol=1e-7)


def test_erf_of_a_scalar_tensor():
    """numpy's frompyfunc gives a Python float for a 0-d array (found by the fuzzer of issue #10)."""
    out = run(relay.erf(v("x", (), "float16")), x=np.array(0.5, "float16"))
    assert out.dtype == np.float16 and out.shape == ()
    assert out == np.float16(math.erf(0.5))


def test_clip_bounds_saturate_exactly_in_int64():
    """``inf`` means no bound, and ``float(2**63 - 1)`` must not wrap to the lowest int64."""
    x = np.array([-(2**62), 2**62], "int64")
    np.testing.assert_array_equal(run(relay.clip(v("x", (2,), "int64"), -np.inf, np.inf), x=x), x)
