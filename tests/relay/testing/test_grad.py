"""relay.testing.check_grad (kiln/relay/testing/grad.py): it accepts right gradients and rejects wrong ones."""

import numpy as np
import pytest

from kiln import relay
from kiln.relay.testing import check_grad
from kiln.relay.testing.temp_op_attr import TempOpAttr


def _square_sum():
    x = relay.var("x", shape=(3, 2), dtype="float64")
    return relay.Function([x], relay.sum(x * relay.exp(x)))


def test_accepts_a_right_gradient():
    check_grad(_square_sum())
    check_grad(_square_sum(), inputs=[np.linspace(-1, 1, 6).reshape(3, 2)], mode="first_order")


def test_rejects_a_wrong_gradient():
    """``exp``'s gradient replaced by a wrong one (twice the right value): the check fails."""
    def wrong(orig, grad):
        return [grad * orig * relay.const(2.0, "float64")]

    with TempOpAttr("exp", "FPrimalGradient", wrong), pytest.raises(AssertionError):
        check_grad(_square_sum(), inputs=[np.linspace(-1, 1, 6).reshape(3, 2)])


def test_tests_only_the_chosen_inputs():
    """Indices are not differentiable: ``test_inputs`` picks the data, matched by identity."""
    data = relay.var("data", shape=(4,), dtype="float64")
    index = relay.var("index", shape=(3,), dtype="int32")
    func = relay.Function([data, index], relay.take(data, index) * relay.take(data, index))
    inputs = [np.array([0.5, -1.0, 2.0, 0.25]), np.array([3, 0, 3], "int32")]
    check_grad(func, inputs=inputs, test_inputs=inputs[:1])


def test_tuple_results_are_summed_whole():
    x = relay.var("x", shape=(2,), dtype="float64")
    check_grad(relay.Function([x], relay.Tuple([x * x, relay.exp(x)])), mode="first_order")
