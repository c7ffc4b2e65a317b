"""topi.nn.sparse_conv2d and topi.nn.sparse_transpose (kiln/topi/nn/sparse.py) built from TE for both targets,
against the numpy references of kiln/topi/testing/sparse.py on random BSR and CSR matrices."""

import numpy as np
import pytest
import scipy.sparse as sp

import kiln
from kiln import te
from kiln.error import OpAttributeInvalid
from kiln.topi.nn.sparse import sparse_conv2d, sparse_transpose
from kiln.topi.testing.sparse import sparse_conv2d_python, sparse_transpose_python

from ...target.conftest import TARGETS


def _build_and_run(target, tensors, outputs, args):
    s = te.create_schedule([o.op for o in outputs])
    func = kiln.build(s, [*tensors, *outputs], target)
    results = [kiln.nd.array(np.zeros([int(d) for d in o.shape], o.dtype)) for o in outputs]
    func(*[kiln.nd.array(a) for a in args], *results)
    return [r.numpy() for r in results]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@pytest.mark.parametrize("kernel,block,index_dtype", [(1, (4, 2), "int32"), (1, (2, 1), "int64"),
                                                      (3, (2, 1), "int32"), (3, (4, 3), "int8")])
def test_sparse_conv2d_matches_the_reference(target, layout, kernel, block, index_dtype):
    rng = np.random.default_rng(kernel * 10 + block[0])
    k, n = 6, 8
    dense = rng.standard_normal((n, k * kernel * kernel)).astype("float32")
    dense *= np.kron(rng.random((n // block[0], k * kernel * kernel // block[1])) < 0.5, np.ones(block)).astype(
        "float32")
    mat = sp.bsr_matrix(dense, blocksize=block)
    data = mat.data if block[1] > 1 else mat.data[:, :, 0]
    indices, indptr = mat.indices.astype(index_dtype), mat.indptr.astype(index_dtype)
    x = rng.standard_normal((2, 4, 5, k) if layout == "NHWC" else (2, k, 4, 5)).astype("float32")
    placeholders = [te.placeholder(a.shape, str(a.dtype), name) for a, name in
                    ((x, "x"), (data, "w"), (indices, "i"), (indptr, "p"))]
    out = sparse_conv2d(*placeholders, layout, (kernel, kernel))
    (got,) = _build_and_run(target, placeholders, [out], [x, data, indices, indptr])
    want = sparse_conv2d_python(x, data, indices, indptr, layout, kernel)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n,density,index_dtype", [(9, 0.3, "int32"), (40, 0.1, "int64"), (5, 0.0, "int32"),
                                                   (3, 1.0, "int16")])
def test_sparse_transpose_matches_the_reference(target, n, density, index_dtype):
    mat = sp.random(n, n, density=density, format="csr", dtype="float32", random_state=n)
    data, indices, indptr = mat.data, mat.indices.astype(index_dtype), mat.indptr.astype(index_dtype)
    placeholders = [te.placeholder(a.shape, str(a.dtype), name) for a, name in
                    ((data, "d"), (indices, "i"), (indptr, "p"))]
    got = _build_and_run(target, placeholders, sparse_transpose(*placeholders), [data, indices, indptr])
    want = sparse_transpose_python(data, indices, indptr)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g[:len(mat.data)], w[:len(mat.data)])
    np.testing.assert_array_equal(got[2], want[2])


def test_sparse_conv2d_refuses_other_kernels_and_layouts():
    x, w = te.placeholder((1, 2, 2, 4)), te.placeholder((2, 2, 2))
    i, p = te.placeholder((2,), "int32"), te.placeholder((3,), "int32")
    with pytest.raises(OpAttributeInvalid, match="kernel_size 5"):
        sparse_conv2d(x, w, i, p, "NHWC", 5)
    with pytest.raises(OpAttributeInvalid, match="must be square"):
        sparse_conv2d(x, w, i, p, "NHWC", (1, 3))
    with pytest.raises(OpAttributeInvalid, match="layout HWCN"):
        sparse_conv2d(x, w, i, p, "HWCN", 1)
    with pytest.raises(OpAttributeInvalid, match="BSR weight data"):
        sparse_conv2d(x, te.placeholder((4,)), i, p)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("sparse_lhs", [False, True])
@pytest.mark.parametrize("block", [(4, 2), (1, 3), (2, 1)])
def test_sparse_dense_of_a_bsr_matrix(target, sparse_lhs, block):
    from kiln import topi

    rng = np.random.default_rng(block[0])
    n, k = 8, 12
    mask = np.kron(rng.random((n // block[0], k // block[1])) < 0.5, np.ones(block))
    w = sp.bsr_matrix((rng.standard_normal((n, k)) * mask).astype("float32"), blocksize=block)
    x_np = rng.standard_normal((3, k)).astype("float32")
    x = te.placeholder(x_np.shape, "float32", "x")
    args = [te.placeholder(a.shape, str(a.dtype), name) for a, name in ((w.data, "d"), (w.indices, "i"),
                                                                          (w.indptr, "p"))]
    out = topi.nn.relu(topi.nn.sparse_dense(x, *args, sparse_lhs=sparse_lhs))
    schedule = topi.x86.schedule_sparse_dense([out])
    func = kiln.build(schedule, [x, *args, out], target)
    got = kiln.nd.array(np.zeros([int(d) for d in out.shape], "float32"))
    func(kiln.nd.array(x_np), kiln.nd.array(w.data), kiln.nd.array(w.indices), kiln.nd.array(w.indptr), got)
    want = w.toarray() @ x_np.T if sparse_lhs else x_np @ w.toarray().T
    np.testing.assert_allclose(got.numpy(), np.maximum(want, 0), rtol=1e-5, atol=1e-5)
