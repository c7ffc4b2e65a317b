"""A Relay function pass types what it returns, as TVM's FunctionPass does."""

import numpy as np
import pytest

import kiln as tvm
from kiln import relay
from kiln.error import TypeInferenceError
from kiln.relay.transform import function_pass


def _untyped_module():
    x = relay.var("x", shape=(1, 16))
    y1 = relay.add(relay.nn.relu(x), relay.const(1.0))
    y2 = relay.add(relay.nn.relu(x), relay.const(1.0))
    return tvm.IRModule.from_expr(relay.Function([x], relay.add(y1, y2)))


def test_pass_over_an_untyped_module_returns_typed_functions():
    out = relay.transform.EliminateCommonSubexpr()(_untyped_module())
    main = out["main"]
    assert str(main.ret_type) == "Tensor[(1, 16), float32]"
    assert str(main.body.checked_type) == "Tensor[(1, 16), float32]"
    assert main.body.args[0] is main.body.args[1]  # the shared subexpression, typed once


def test_untouched_module_is_returned_as_it_was():
    mod = _untyped_module()

    @function_pass(opt_level=0)
    def keep(func, mod, ctx):
        return func

    assert keep(mod) is mod


def test_ill_typed_result_names_the_pass():
    @function_pass(opt_level=0)
    def add_wrong_shape(func, mod, ctx):
        return func.with_fields(body=relay.add(func.body, relay.const(np.ones((4, 5), "float32"))))

    with pytest.raises(TypeInferenceError, match=r"cannot be broadcast") as info:
        add_wrong_shape(_untyped_module())
    assert "add_wrong_shape" in "".join(getattr(info.value, "__notes__", [])) + str(info.value)
