"""The gradients of the element-wise and broadcasting operators (kiln/relay/op/_tensor_grad.py), each checked
against central differences; and the check that every operator with a registered gradient has a case here or in
test_tensor_grad_transform.py / test_tensor_grad_nn.py."""

import numpy as np
import pytest

from kiln import relay
from kiln.ir.op import Op, list_op_names

from .grad_checks import away_from, case, run_case, uniform
from .test_tensor_grad_nn import CASES as NN_CASES
from .test_tensor_grad_transform import CASES as TRANSFORM_CASES

S = (2, 3)


def _unary(name, **kw):
    return case(name, lambda x: getattr(relay, name)(x), S, **kw)


CASES = [
    _unary("negative"), _unary("exp"), _unary("fast_exp"), _unary("tanh"), _unary("fast_tanh"), _unary("sigmoid"),
    _unary("erf"), _unary("fast_erf"), _unary("sin"), _unary("cos"), _unary("tan"), _unary("sinh"), _unary("cosh"),
    _unary("asin"), _unary("acos"), _unary("atan"), _unary("asinh"), _unary("atanh"), _unary("copy"),
    _unary("log", mean=2.0), _unary("log2", mean=2.0), _unary("log10", mean=2.0), _unary("sqrt", mean=2.0),
    _unary("rsqrt", mean=2.0), _unary("acosh", mean=2.0),
    _unary("exp", inputs=uniform(S, low=-2, high=2)), _unary("tanh", inputs=uniform(S, low=-2, high=2)),
    _unary("abs", inputs=away_from([0.0], S)),
    *[_unary(n, inputs=away_from([-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2], S, margin=0.1))
      for n in ("floor", "ceil", "round", "trunc", "sign")],
    case("zeros_like", lambda x: relay.zeros_like(x) + x * x, S),
    case("ones_like", lambda x: relay.ones_like(x) * x, S),
    case("annotation.checkpoint", lambda x: relay.annotation.checkpoint(x * x), S, inputs=uniform(S)),
    case("clip", lambda x: relay.clip(x, -0.5, 0.5), S, inputs=away_from([-0.5, 0.5], S, margin=0.05, spread=1)),
    case("cast", lambda x: relay.cast(x, "float32") * relay.const(2.0), S, inputs=uniform(S), eps=1e-3, atol=1e-3,
         rtol=1e-3),
    case("cast_like", lambda x, y: relay.cast_like(x, y) * relay.const(3.0), S, S, dtypes=("float64", "float32"),
         inputs=uniform(S, S), tested=(0,), eps=1e-3, atol=1e-3, rtol=1e-3),
    case("add", lambda x, y: relay.add(x, y), (2, 3), (3,)),
    case("subtract", lambda x, y: relay.subtract(x, y), (2, 1), (2, 3)),
    case("multiply", lambda x, y: relay.multiply(x, y), (2, 3), (2, 1), inputs=uniform((2, 3), (2, 1))),
    case("divide", lambda x, y: relay.divide(x, y), (2, 3), (3,), inputs=lambda rng: [rng.uniform(-1, 1, (2, 3)),
                                                                                        rng.uniform(1, 2, (3,))]),
    case("power", lambda x, y: relay.power(x, y), (2, 3), (3,), inputs=lambda rng: [rng.uniform(0.5, 2, (2, 3)),
                                                                                      rng.uniform(-1, 2, (3,))]),
    case("maximum", lambda x, y: relay.maximum(x, y), (2, 3), (3,), inputs=uniform((2, 3), (3,))),
    case("minimum", lambda x, y: relay.minimum(x, y), (2, 3), (2, 1), inputs=uniform((2, 3), (2, 1))),
    case("where", lambda c, x, y: relay.where(c, x, y), (2, 3), (1, 3), (2, 1), dtypes=("bool", "float64", "float64"),
         inputs=lambda rng: [rng.uniform(size=(2, 3)) < 0.5, rng.uniform(-1, 1, (1, 3)), rng.uniform(-1, 1, (2, 1))],
         tested=(1, 2)),
    *[case(n, lambda x, y, n=n: relay.where(getattr(relay, n)(x, y), x * x, y), S, S,
           inputs=lambda rng: [rng.choice([-1.0, 1.0], S), rng.choice([-2.0, 0.0, 2.0], S)])
      for n in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")],
]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.op)
def test_gradient(c):
    run_case(c)


def test_comparison_results_have_zero_gradients():
    """A function whose result is a comparison: the gradient of each argument is zero (TVM's ``less_equal`` test)."""
    x, y = relay.var("x", shape=S, dtype="float64"), relay.var("y", shape=(3,), dtype="float64")
    back = relay.transform.gradient(relay.Function([x, y], relay.less_equal(x, y)))
    _, (gx, gy) = relay.create_executor().evaluate(back)(np.ones(S), np.zeros(3))
    np.testing.assert_array_equal(gx.numpy(), np.zeros(S))
    np.testing.assert_array_equal(gy.numpy(), np.zeros(3))


def test_every_gradient_is_tested():
    """Every operator with a registered gradient has a numerical check (here or in the nn/transform files)."""
    tested = {c.op for c in CASES + NN_CASES + TRANSFORM_CASES}
    registered = {n for n in list_op_names() if Op.get(n).get_attr("FPrimalGradient") is not None}
    assert not registered - tested, f"gradients without a numerical test: {sorted(registered - tested)}"
