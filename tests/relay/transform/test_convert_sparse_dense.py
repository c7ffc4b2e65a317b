"""DenseToSparse (kiln/relay/transform/convert_sparse_dense.py) through relay.data_dep_optimization.bsr_dense, with
relay.analysis.sparse_dense.process_params: sparse-enough dense weights become nn.sparse_dense of BSR parameters
and the function computes what it did, compiled for both targets."""

import numpy as np
import pytest
import scipy.sparse as sp

import kiln
from kiln import relay
from kiln.relay.analysis.sparse_dense import process_params
from kiln.relay.data_dep_optimization import bsr_dense


def _model():
    x = relay.var("x", shape=(3, 16))
    w1, w2 = relay.var("w1", shape=(8, 16)), relay.var("w2", shape=(8, 16))
    hidden = relay.nn.relu(relay.nn.dense(relay.nn.relu(x), w1))
    return relay.Function([x, w1, w2], relay.add(hidden, relay.nn.dense(x, w2)))


def _weights(seed):
    rng = np.random.default_rng(seed)
    sparse = (rng.standard_normal((8, 16)) * np.kron(rng.random((2, 16)) < 0.3, np.ones((4, 1)))).astype("float32")
    return sparse, rng.standard_normal((8, 16)).astype("float32")


def _ops(func):
    names = []
    relay.analysis.post_order_visit(func, lambda n: names.append(n.op.name) if isinstance(n, relay.Call) else None)
    return names


def _run(func, params, x, target):
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(kiln.IRModule.from_expr(func), target=target, params=params)
    module = kiln.contrib.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    module.run(x=x)
    return module.get_output(0).numpy()


def test_process_params_replaces_only_the_sparse_weight():
    sparse, dense = _weights(0)
    params = {"w1": kiln.nd.array(sparse), "w2": kiln.nd.array(dense)}
    info = process_params(_model(), params, (4, 1), 0.5)
    assert list(info.weight_name) == ["w1"] and sorted(params) == ["w1.data", "w1.indices", "w1.indptr", "w2"]
    want = sp.bsr_matrix(sparse, blocksize=(4, 1))
    want.sort_indices()
    np.testing.assert_array_equal(params["w1.data"].numpy(), want.data)
    np.testing.assert_array_equal(params["w1.indptr"].numpy(), want.indptr)
    assert list(info.weight_shape[0]) == [*want.data.shape, len(want.indices), len(want.indptr)]


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_bsr_dense_convert_keeps_the_result(target):
    sparse, dense = _weights(1)
    x = np.random.default_rng(2).standard_normal((3, 16)).astype("float32")
    func = _model()
    want = _run(func, {"w1": kiln.nd.array(sparse), "w2": kiln.nd.array(dense)}, x, target)
    new_func, params = bsr_dense.convert(func, {"w1": kiln.nd.array(sparse), "w2": kiln.nd.array(dense)}, (4, 1),
                                         0.5)
    assert _ops(new_func).count("nn.sparse_dense") == 1 and _ops(new_func).count("nn.dense") == 1
    assert [p.name_hint for p in new_func.params] == ["x", "w2", "w1.data", "w1.indices", "w1.indptr"]
    np.testing.assert_allclose(_run(new_func, params, x, target), want, rtol=1e-5, atol=1e-5)
