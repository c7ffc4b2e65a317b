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
