"""SimplifyFCTranspose (kiln/relay/transform/simplify_fc_transpose.py) through
relay.data_dep_optimization.simplify_fc_transpose, with relay.analysis.search_fc_transpose: transposed dense
weights become pre-transposed parameters and the function computes what it did."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.relay.data_dep_optimization import simplify_fc_transpose


def _model(axes=(1, 0)):
    x = relay.var("x", shape=(2, 6))
    w1, w2 = relay.var("w1", shape=(6, 5)), relay.var("w2", shape=(5, 3))
    hidden = relay.nn.relu(relay.nn.dense(x, relay.transpose(w1, axes)))
    return relay.Function([x, w1, w2], relay.nn.dense(hidden, relay.transpose(w2)))


def _run(func, params, x, target):
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(kiln.IRModule.from_expr(func), target=target, params=params)
    module = kiln.contrib.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    module.run(x=x)
    return module.get_output(0).numpy()


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_convert_stores_the_weights_transposed(target):
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((6, 5)).astype("float32"), rng.standard_normal((5, 3)).astype("float32")
    x = rng.standard_normal((2, 6)).astype("float32")
    func = _model()
    assert relay.analysis.search_fc_transpose(func) == ["w1", "w2"]
    want = _run(func, {"w1": kiln.nd.array(w1), "w2": kiln.nd.array(w2)}, x, target)
    new_func, params = simplify_fc_transpose.convert(func, {"w1": kiln.nd.array(w1), "w2": kiln.nd.array(w2)})
    assert [p.name_hint for p in new_func.params] == ["x", "w1.T", "w2.T"]
    np.testing.assert_array_equal(params["w1.T"].numpy(), w1.T)
    names = []
    relay.analysis.post_order_visit(new_func, lambda n: names.append(n.op.name) if isinstance(n, relay.Call) else 0)
    assert "transpose" not in names
    np.testing.assert_allclose(_run(new_func, params, x, target), want, rtol=1e-5, atol=1e-5)


def test_identity_permutation_is_no_transpose():
    """transpose(w, [0, 1]) leaves w as it is: its dense layer is not rewritten (TVM's search takes any transpose)."""
    x = relay.var("x", shape=(2, 6))
    w = relay.var("w", shape=(5, 6))
    func = relay.Function([x, w], relay.nn.dense(x, relay.transpose(w, (0, 1))))
    assert relay.analysis.search_fc_transpose(func) == []
    new_func, params = simplify_fc_transpose.convert(func, {"w": kiln.nd.array(np.ones((5, 6), "float32"))})
    assert list(params) == ["w"] and [p.name_hint for p in new_func.params] == ["x", "w"]
