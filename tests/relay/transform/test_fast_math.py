import pytest

import kiln
from kiln import relay


@pytest.mark.parametrize("op, fast", [(relay.exp, "fast_exp"), (relay.erf, "fast_erf"), (relay.tanh, "fast_tanh"),
                                      (relay.nn.softmax, "nn.fast_softmax")])
def test_each_op_becomes_its_fast_form(check_pass, op, fast):
    x = relay.var("x", shape=(2, 16))
    after = check_pass(relay.Function([x], op(x * relay.const(0.25))), relay.transform.FastMath(), opt_level=4,
                       rtol=1e-4, atol=1e-5)
    assert after.body.op.name == fast


def test_standard_pipeline_runs_it_only_when_asked():
    x = relay.var("x", shape=(4, 8))
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    with kiln.transform.PassContext(opt_level=3):
        assert "fast_exp" not in relay.optimize(mod, target="llvm")[0].astext()
    with kiln.transform.PassContext(opt_level=3, required_pass=["FastMath"]):
        assert "fast_exp" in relay.optimize(mod, target="llvm")[0].astext()
