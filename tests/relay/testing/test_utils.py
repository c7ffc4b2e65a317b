"""Tests of kiln/relay/testing/utils.py: ``assert_same_results``, the check every ``check_pass`` test ends with."""

import numpy as np
import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.relay.testing import assert_same_results, random_inputs


def _function(make_body, dtype="float32"):
    x = relay.var("x", shape=(2, 3), dtype=dtype)
    return relay.Function([x], make_body(x))


def test_same_results_pass():
    before = _function(lambda x: relay.Tuple([relay.exp(x), relay.negative(x)]))
    after = _function(lambda x: relay.Tuple([relay.exp(x), relay.multiply(x, relay.const(-1.0))]))
    assert_same_results(before, after)


def test_a_dropped_output_fails():
    before = _function(lambda x: relay.Tuple([relay.exp(x), relay.negative(x)]))
    with pytest.raises(AssertionError, match=r"1 output\(s\) instead of 2"):
        assert_same_results(before, _function(lambda x: relay.Tuple([relay.exp(x)])))
    with pytest.raises(AssertionError, match=r"1 output\(s\) instead of 2"):
        assert_same_results(before, _function(relay.exp))  # the tuple replaced by its first field


def test_a_changed_dtype_fails_even_with_equal_values():
    before = _function(relay.negative, dtype="int32")
    after = _function(lambda x: relay.cast(relay.negative(x), "int64"), dtype="int32")
    with pytest.raises(AssertionError, match=r"output 0 is int64\[2, 3\] instead of int32\[2, 3\]"):
        assert_same_results(before, after)


def test_a_changed_shape_or_value_fails_naming_the_element_and_seed():
    before = _function(relay.exp)
    with pytest.raises(AssertionError, match=r"output 0 is float32\[3, 2\] instead of float32\[2, 3\]"):
        assert_same_results(before, _function(lambda x: relay.transpose(relay.exp(x))))
    with pytest.raises(AssertionError, match=r"seed 0\): output 0 differs at index \[0, 0\]"):
        assert_same_results(before, _function(lambda x: relay.exp(relay.multiply(x, relay.const(1.01)))))


def test_random_inputs_follow_the_parameter_types():
    x = relay.var("x", shape=(2, 3))
    i = relay.var("i", shape=(4,), dtype="int64")
    b = relay.var("b", shape=(), dtype="bool")
    xs, iv, bv = random_inputs(relay.Function([x, i, b], x), seed=3)
    assert (xs.dtype, xs.shape, iv.dtype, bv.dtype) == (np.float32, (2, 3), np.int64, np.bool_)
    assert np.all((xs >= -1) & (xs < 1)) and np.all((iv >= 0) & (iv < 4))
    assert all(np.array_equal(a, b) for a, b in zip(random_inputs(relay.Function([x, i, b], x), seed=3),
                                                     (xs, iv, bv), strict=True))
    f = relay.var("f", relay.FuncType([], relay.TensorType((1,))))
    with pytest.raises(KilnError, match="parameter %f: its type .* is not a tensor type"):
        random_inputs(relay.Function([f], f))


def test_rand_and_count_ops():
    from kiln.relay.testing import count_ops, rand

    r = rand("float32", 2, 3)
    assert r.shape == (2, 3) and r.dtype == "float32" and 0 <= r.numpy().min() and r.numpy().max() < 1
    x = relay.var("x", shape=(2,))
    counts = count_ops(relay.Function([x], relay.exp(relay.exp(x)) + x))
    assert counts["exp"] == 2 and counts["add"] == 1 and counts["nn.dense"] == 0
