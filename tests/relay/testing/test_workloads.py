"""relay.testing as TVM's tests use it: run_infer_type, run_opt_pass, create_workload, mlp, TempOpAttr."""

import numpy as np

import kiln
from kiln import relay
from kiln.ir.op import Op
from kiln.relay.testing import create_workload, mlp, run_infer_type, run_opt_pass
from kiln.relay.testing.temp_op_attr import TempOpAttr


def test_run_infer_type_and_run_opt_pass_return_what_tvms_do():
    x = relay.var("x", shape=(2,))
    call = relay.add(x, relay.add(relay.const(1.0), relay.const(2.0)))
    assert run_infer_type(call).checked_type == relay.TensorType((2,), "float32")
    folded = run_opt_pass(call, relay.transform.FoldConstant())
    assert isinstance(folded, relay.Call) and isinstance(folded.args[1], relay.Constant)  # the body, for an expr
    assert isinstance(run_opt_pass(relay.Function([x], call), relay.transform.FoldConstant()), relay.Function)


def test_mlp_workload_builds_and_runs():
    mod, params = mlp.get_workload(batch_size=2)
    assert sorted(params) == [f"fc{k}_{p}" for k in (1, 2, 3) for p in ("bias", "weight")]
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    m = kiln.contrib.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    data = np.random.default_rng(0).uniform(size=(2, 1, 28, 28)).astype("float32")
    m.set_input("data", data)
    m.run()
    want = relay.create_executor("debug", mod=mod).evaluate()(data, *[params[p.name_hint] for p in
                                                                       mod["main"].params[1:]])
    np.testing.assert_allclose(m.get_output(0).numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_create_workload_fills_every_weight():
    data, w = relay.var("data", shape=(1, 4)), relay.var("w_weight", shape=(3, 4))
    mod, params = create_workload(relay.Function([data, w], relay.nn.dense(data, w)), seed=3)
    assert list(params) == ["w_weight"] and params["w_weight"].shape == (3, 4)
    again = create_workload(relay.Function([data, w], relay.nn.dense(data, w)), seed=3)[1]
    np.testing.assert_array_equal(params["w_weight"].numpy(), again["w_weight"].numpy())


def test_temp_op_attr_restores_the_attribute():
    op = Op.get("nn.relu")
    before, level = op.get_attr("TOpPattern"), op.get_attr_level("TOpPattern")
    with TempOpAttr("nn.relu", "TOpPattern", 8):
        assert op.get_attr("TOpPattern") == 8
    assert op.get_attr("TOpPattern") == before and op.get_attr_level("TOpPattern") == level
    with TempOpAttr("nn.relu", "kiln.test.unset", 1):
        assert op.get_attr("kiln.test.unset") == 1
    assert not op.has_attr("kiln.test.unset")
