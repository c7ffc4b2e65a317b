import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.ir import op as ir_op
from kiln.ir import register_op_attr
from kiln.relay.op.op import OpPattern, register_relay_op
from kiln.relay.op.type_relations import identity_rel
from kiln.relay.testing import run_opt_pass

Fold = relay.transform.FoldConstant


def test_folds_constant_subgraph(check_pass):
    x = relay.var("x", shape=(2, 3))
    c = relay.add(relay.const(np.ones((2, 3), "float32")), relay.const(2.0))
    before = relay.Function([x], relay.multiply(x, relay.exp(c)))
    after = check_pass(before, Fold())
    folded = after.body.args[1]
    assert isinstance(folded, relay.Constant)
    np.testing.assert_allclose(folded.data.numpy(), np.exp(np.full((2, 3), 3.0, "float32")), rtol=1e-6)


def test_expected_in_text_form(check_pass):
    x = relay.var("x", shape=(4,))
    before = relay.Function([x], relay.add(x, relay.multiply(relay.const(2.0), relay.const(3.0))))
    check_pass(before, Fold(), """
        def @main(%x: Tensor[(4), float32]) {
          add(%x, 6f)
        }
    """)


def test_shape_of_folds_even_for_variables():
    x = relay.var("x", shape=(2, 5, 7))
    after = run_opt_pass(relay.Function([x], relay.shape_of(x)), Fold())
    assert isinstance(after.body, relay.Constant)
    assert after.body.data.numpy().tolist() == [2, 5, 7] and after.body.data.dtype == "int32"


def test_tuples_lets_and_getitem():
    x = relay.var("x", shape=(3,))
    t = relay.Tuple([relay.const(1.0), relay.exp(relay.const(0.0))])
    v = relay.var("v")
    body = relay.Let(v, relay.TupleGetItem(t, 1), relay.add(x, v))
    after = run_opt_pass(relay.Function([x], body), Fold())
    assert isinstance(after.body, relay.Call) and isinstance(after.body.args[1], relay.Constant)
    assert after.body.args[1].data.numpy() == 1.0


@pytest.fixture
def random_like_op():
    """A stateful operator ``test.random_like``, removed afterwards (tests that run every operator must not meet
    it)."""
    register_relay_op("test.random_like", 1, identity_rel, OpPattern.OPAQUE)
    register_op_attr("test.random_like", "TOpIsStateful", True)
    register_op_attr("test.random_like", "FEvaluate", lambda attrs, a: np.random.rand(*a.shape).astype(a.dtype))
    yield
    ir_op._OPS.pop("test.random_like", None)
    ir_op._OP_ATTRS.pop("test.random_like", None)


def test_leaves_stateful_ops_and_primitive_functions_alone(random_like_op):
    x = relay.var("x", shape=(2,))
    rnd = relay.Call(relay.Op.get("test.random_like"), [relay.const(np.zeros(2, "float32"))])
    after = run_opt_pass(relay.Function([x], relay.add(x, rnd)), Fold())
    assert isinstance(after.body.args[1], relay.Call)
    p = relay.var("p", shape=(2,))
    prim = relay.Function([p], relay.add(p, relay.add(relay.const(1.0), relay.const(1.0)))).with_attr("Primitive", 1)
    after = run_opt_pass(relay.Function([x], relay.Call(prim, [x])), Fold())
    assert isinstance(after.body.op.body.args[1], relay.Call)


def test_bound_params_fold_resnet_block(check_pass):
    from kiln.relay.testing import resnet

    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    func = relay.bind(mod["main"], {k: relay.const(v.numpy()) for k, v in params.items()})
    after = check_pass(func, [relay.transform.SimplifyInference(), Fold()], rtol=1e-4, atol=1e-4)
    ops = []
    relay.post_order_visit(after, lambda e: ops.append(e.op.name) if isinstance(e, relay.Call) else None)
    assert "nn.batch_norm" not in ops and "sqrt" not in ops  # the folded scale and shift are constants


def test_pass_info():
    p = Fold()
    assert p.info.name == "FoldConstant" and p.info.opt_level == 2
    assert str(kiln.transform.get_pass("FoldConstant")) == "FoldConstant"


def test_if_on_a_constant_condition_becomes_its_branch(check_pass):
    x = relay.var("x", shape=(3,))
    flag = relay.var("flag")
    before = relay.Function([x], relay.Let(flag, relay.greater(relay.const(2), relay.const(1)),
                                           relay.If(flag, relay.exp(x), relay.log(x))))
    check_pass(before, relay.transform.FoldConstant(), """
        def @main(%x: Tensor[(3), float32]) {
          exp(%x)
        }
    """)
    runtime = relay.var("c", shape=(), dtype="bool")
    kept = run_opt_pass(relay.Function([runtime, x], relay.If(runtime, x, x)), relay.transform.FoldConstant())
    assert isinstance(kept.body, relay.If)


def test_a_call_that_fails_on_its_constants_is_left_for_run_time():
    """A scatter whose constant indices are out of range is not folded (the error is the run's to report), while
    the constant arithmetic next to it still folds."""
    data = relay.const(np.zeros((1, 3), "float32"))
    indices = relay.const(np.array([[2]], "int64"))
    updates = relay.const(np.ones((1, 3), "float32"))
    bad = relay.scatter_nd(data, indices, updates)
    x = relay.var("x", shape=(1, 3))
    after = run_opt_pass(relay.Function([x], bad + (x + relay.const(1.0) * relay.const(2.0))),
                         relay.transform.FoldConstant())
    ops = relay.analysis.list_op_freqs(kiln.IRModule.from_expr(after))
    assert ops.get("scatter_nd") == 1 and "multiply" not in ops


def test_fold_constant_expr_outside_a_pass():
    q = relay.qnn.op.quantize(relay.const(np.array([0.5, -1.25], "float32")), relay.const(0.25), relay.const(1))
    kept = relay.transform.FoldConstantExpr(q)
    assert isinstance(kept, relay.Call) and kept.op.name == "qnn.quantize"  # qnn folds only when asked, as TVM's
    folded = relay.transform.FoldConstantExpr(q, kiln.IRModule(), fold_qnn=True)
    np.testing.assert_array_equal(folded.data.numpy(), np.array([3, -4], "int8"))
