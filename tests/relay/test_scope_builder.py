"""relay.ScopeBuilder: let chains and if/else blocks, run by the reference interpreter."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError


def run(func, *args):
    return relay.create_executor("debug", mod=kiln.IRModule.from_expr(func)).evaluate()(*args).numpy()


def test_let_chain_and_branches():
    x, c = relay.var("x", shape=(2,)), relay.var("c", shape=(), dtype="bool")
    sb = relay.ScopeBuilder()
    y = sb.let("y", relay.add(x, x))
    with sb.if_scope(c):
        z = sb.let(("z", relay.TensorType((2,))), relay.multiply(y, y))
        sb.ret(z)
    with sb.else_scope():
        sb.ret(y)
    func = relay.Function([c, x], sb.get())
    assert isinstance(func.body, relay.Let) and isinstance(func.body.body, relay.If)
    ones = np.ones(2, "float32")
    np.testing.assert_array_equal(run(func, np.array(True), ones), [4.0, 4.0])
    np.testing.assert_array_equal(run(func, np.array(False), ones), [2.0, 2.0])


def test_misuse_is_refused():
    sb = relay.ScopeBuilder()
    with pytest.raises(KilnError, match="no value"):
        sb.get()
    with pytest.raises(KilnError, match="no if_scope"):
        sb.else_scope()
    sb.ret(relay.const(1.0))
    with pytest.raises(KilnError, match="already returned"):
        sb.ret(relay.const(2.0))
