"""relay.analysis.sparse_conv2d (kiln/relay/analysis/sparse_conv2d.py): the BSR form of a weight matches
scipy's, and process_params replaces exactly the sparse-enough weights of the convolutions."""

import numpy as np
import pytest
import scipy.sparse as sp

import kiln
from kiln import relay
from kiln.relay.analysis.sparse_conv2d import bsr_from_dense, process_params, weight_params


@pytest.mark.parametrize("block", [(1, 1), (2, 3), (4, 1)])
def test_bsr_from_dense_is_scipys(block):
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((8, 12)).astype("float32")
    matrix *= np.kron(rng.random((8 // block[0], 12 // block[1])) < 0.4, np.ones(block)).astype("float32")
    data, indices, indptr = bsr_from_dense(matrix, block)
    want = sp.bsr_matrix(matrix, blocksize=block)
    want.sort_indices()
    np.testing.assert_array_equal(indptr, want.indptr)
    np.testing.assert_array_equal(indices, want.indices)
    np.testing.assert_array_equal(data, want.data)


def _model(layout, kernel):
    x = relay.var("x", shape=(1, 8, 4, 4) if layout == "NCHW" else (1, 4, 4, 8))
    shape = (16, 8, kernel, kernel) if layout == "NCHW" else (kernel, kernel, 8, 16)
    w1, w2 = relay.var("w1", shape=shape), relay.var("w2", shape=shape)
    kw = dict(kernel_size=kernel, padding=kernel // 2, data_layout=layout,
              kernel_layout="OIHW" if layout == "NCHW" else "HWIO")
    y = relay.add(relay.nn.conv2d(x, w1, **kw), relay.nn.conv2d(x, w2, **kw))
    return relay.Function([x, w1, w2], y), shape


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("kernel", [1, 3])
def test_process_params_replaces_the_sparse_weights(layout, kernel):
    rng = np.random.default_rng(kernel)
    func, shape = _model(layout, kernel)
    sparse = rng.standard_normal(shape).astype("float32") * (rng.random(shape) < 0.05)
    dense = rng.standard_normal(shape).astype("float32")
    params = {"w1": kiln.nd.array(sparse), "w2": kiln.nd.array(dense)}
    found = [name for name, _ in weight_params(func, "nn.conv2d", params)]
    assert found == ["w1", "w2"] or found == ["w2", "w1"]
    info = process_params(func, params, (4, 1), 0.5, layout, kernel)
    assert list(info.weight_name) == ["w1"]
    assert sorted(params) == ["w1.data", "w1.indices", "w1.indptr", "w2"]
    matrix = sparse.reshape(16, -1) if layout == "NCHW" else sparse.reshape(-1, 16).T
    bsr = sp.bsr_matrix(matrix, blocksize=(4, 1))
    bsr.sort_indices()
    data = params["w1.data"].numpy()
    np.testing.assert_array_equal(data.reshape(bsr.data.shape), bsr.data)
    assert data.ndim == (2 if kernel == 1 else 3)  # a 1x1 weight of one-column blocks drops that axis, as TVM's
    assert list(info.weight_shape[0]) == [*data.shape, len(bsr.indices), len(bsr.indptr)]


def test_process_params_skips_other_kernels():
    func, shape = _model("NCHW", 3)
    params = {"w1": kiln.nd.array(np.zeros(shape, "float32")), "w2": kiln.nd.array(np.zeros(shape, "float32"))}
    assert list(process_params(func, params, (4, 1), 0.5, "NCHW", 1).weight_name) == []
    assert sorted(params) == ["w1", "w2"]
