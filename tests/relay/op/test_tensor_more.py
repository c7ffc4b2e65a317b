"""The element-wise operators appended to kiln/relay/op/tensor.py (trigonometry, predicates, floor/trunc
division and remainder, comparisons, logic and bit operations) against numpy."""

import numpy as np
import pytest

from kiln import relay
from kiln.error import TypeInferenceError
from kiln.ir import Op
from kiln.relay.op import OpPattern

RNG = np.random.default_rng(5)


def run(expr, **inputs):
    params = relay.analysis.free_vars(expr)
    return relay.create_executor().evaluate(relay.Function(params, expr))(**inputs).numpy()


@pytest.mark.parametrize("name,fn,low,high", [
    ("sin", np.sin, -3, 3), ("cos", np.cos, -3, 3), ("tan", np.tan, -1, 1), ("asin", np.arcsin, -1, 1),
    ("acos", np.arccos, -1, 1), ("atan", np.arctan, -3, 3), ("sinh", np.sinh, -2, 2), ("cosh", np.cosh, -2, 2),
    ("asinh", np.arcsinh, -3, 3), ("acosh", np.arccosh, 1, 4), ("atanh", np.arctanh, -0.9, 0.9),
    ("trunc", np.trunc, -3, 3),
])
def test_unary_math(name, fn, low, high):
    a = RNG.uniform(low, high, (3, 4)).astype("float32")
    x = relay.var("x", shape=(3, 4))
    out = run(getattr(relay, name)(x), x=a)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, fn(a), rtol=1e-6, atol=1e-6)
    assert Op.get(name).get_attr("TOpPattern") == OpPattern.ELEMWISE


def test_predicates_are_bool():
    a = np.array([1.0, np.nan, np.inf, -np.inf], "float32")
    x = relay.var("x", shape=(4,))
    assert run(relay.isnan(x), x=a).tolist() == [False, True, False, False]
    assert run(relay.isinf(x), x=a).tolist() == [False, False, True, True]
    assert run(relay.isfinite(x), x=a).tolist() == [True, False, False, False]
    assert relay.infer_type(relay.isnan(x)).checked_type.dtype == "bool"


def test_floor_and_trunc_division_and_remainder():
    a = np.array([-7, -3, 3, 7], "int32")
    b = np.array([2, -2, -2, 3], "int32")
    x, y = relay.var("x", shape=(4,), dtype="int32"), relay.var("y", shape=(4,), dtype="int32")
    np.testing.assert_array_equal(run(relay.floor_divide(x, y), x=a, y=b), a // b)
    np.testing.assert_array_equal(run(relay.floor_mod(x, y), x=a, y=b), a % b)
    np.testing.assert_array_equal(run(relay.mod(x, y), x=a, y=b), np.fmod(a, b))
    af, bf = a.astype("float32") + 0.5, b.astype("float32")
    xf, yf = relay.var("x", shape=(4,)), relay.var("y", shape=(4,))
    np.testing.assert_allclose(run(relay.floor_mod(xf, yf), x=af, y=bf), af - np.floor(af / bf) * bf)
    np.testing.assert_allclose(run(relay.floor_divide(xf, yf), x=af, y=bf), np.floor(af / bf))


@pytest.mark.parametrize("name,fn", [("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                                     ("less_equal", np.less_equal), ("greater", np.greater),
                                     ("greater_equal", np.greater_equal)])
def test_comparisons_broadcast_to_bool(name, fn):
    a = RNG.integers(0, 3, (2, 3)).astype("float32")
    b = RNG.integers(0, 3, (3,)).astype("float32")
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(3,))
    out = run(getattr(relay, name)(x, y), x=a, y=b)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, fn(a, b))
    with pytest.raises(TypeInferenceError, match="one dtype"):
        relay.infer_type(getattr(relay, name)(x, relay.var("z", shape=(3,), dtype="int32")))


def test_logic_and_bits():
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    x, y = relay.var("x", shape=(4,), dtype="bool"), relay.var("y", shape=(4,), dtype="bool")
    for name, fn in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                     ("logical_xor", np.logical_xor)]:
        np.testing.assert_array_equal(run(getattr(relay, name)(x, y), x=a, y=b), fn(a, b))
    np.testing.assert_array_equal(run(relay.logical_not(x), x=a), ~a)
    i, j = np.array([12, 5, -1], "int32"), np.array([10, 1, 3], "int32")
    p, q = relay.var("p", shape=(3,), dtype="int32"), relay.var("q", shape=(3,), dtype="int32")
    for name, fn in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                     ("bitwise_xor", np.bitwise_xor), ("left_shift", np.left_shift),
                     ("right_shift", np.right_shift)]:
        np.testing.assert_array_equal(run(getattr(relay, name)(p, q), p=i, q=j), fn(i, j))
    np.testing.assert_array_equal(run(relay.bitwise_not(p), p=i), ~i)
