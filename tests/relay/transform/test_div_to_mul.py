import numpy as np
import pytest

from kiln import relay

DivToMul = relay.transform.DivToMul


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_division_by_a_constant_tensor_multiplies_by_its_reciprocals(check_pass, dtype):
    x = relay.var("x", shape=(3, 4), dtype=dtype)
    divisor = np.array([1.5, -4.0, 0.3, 7.0], dtype)
    after = check_pass(relay.Function([x], x / relay.const(divisor, dtype)), DivToMul(), rtol=1e-3, atol=1e-3)
    assert after.body.op.name == "multiply"
    reciprocal = after.body.args[1].data.numpy()
    assert reciprocal.dtype == np.dtype(dtype)
    np.testing.assert_allclose(reciprocal, 1 / divisor.astype("float64"), rtol={"float16": 1e-3}.get(dtype, 1e-7))


@pytest.mark.parametrize("divisor", [np.array([2.0, 0.0], "float32"), np.array(4, "int32")])
def test_zero_and_integer_divisors_are_kept(check_pass, divisor):
    x = relay.var("x", shape=(2,), dtype=str(divisor.dtype))
    after = check_pass(relay.Function([x], x / relay.const(divisor)), DivToMul())
    assert after.body.op.name == "divide"


def test_division_by_a_variable_is_kept(check_pass):
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    assert check_pass(relay.Function([x, y], x / y), DivToMul()).body.op.name == "divide"
