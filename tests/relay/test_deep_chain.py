"""A chain of 10,000 operators goes through every Relay component without a RecursionError (issue 2)."""

import numpy as np

from kiln import relay
from kiln.ir import IRModule, load_json, save_json, structural_equal, structural_hash


def test_ten_thousand_operator_chain_end_to_end():
    x = relay.var("x", shape=(4,))
    y = x
    for i in range(10000):
        y = relay.add(y, relay.const(1.0)) if i % 2 else relay.multiply(y, relay.const(1.0))
    mod = IRModule.from_expr(relay.Function([x], y))
    typed = relay.infer_type(mod)
    text = str(typed)
    back = relay.parse(text)
    assert structural_equal(back, typed)
    assert structural_hash(back) == structural_hash(typed)
    assert structural_equal(load_json(save_json(typed)), typed)
    out = relay.create_executor("debug", mod=typed).evaluate()(np.zeros(4, "float32"))
    np.testing.assert_allclose(out.numpy(), np.full(4, 5000.0, "float32"))


def test_repr_of_a_deep_expression_is_its_text():
    """``repr`` of a Relay expression is the text printer's (as in TVM), which walks iteratively: a 5,000-operator
    chain does not hit the recursion limit (issue 13)."""
    y = relay.var("x", shape=(4,))
    for _ in range(5000):
        y = relay.add(y, relay.const(1.0))
    assert y.astext().endswith(repr(y)) and repr(y).count("add(") == 5000
