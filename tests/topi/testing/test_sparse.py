"""The sparse references (kiln/topi/testing/sparse.py) against scipy.sparse and a direct convolution loop, on
random matrices."""

import numpy as np
import pytest
import scipy.sparse as sp

from kiln.topi.testing.sparse import bsr_to_dense, sparse_conv2d_python, sparse_transpose_python


def _bsr(rng, rows, cols, block, density=0.5):
    dense = rng.standard_normal((rows, cols)).astype("float32")
    mask = np.kron(rng.random((rows // block[0], cols // block[1])) < density, np.ones(block))
    return sp.bsr_matrix(dense * mask, blocksize=block)


@pytest.mark.parametrize("block", [(1, 1), (2, 3), (4, 1)])
def test_bsr_to_dense_is_scipy_todense(block):
    mat = _bsr(np.random.default_rng(0), 8, 12, block)
    data = mat.data if block[1] > 1 else mat.data[:, :, 0]
    np.testing.assert_array_equal(bsr_to_dense(data, mat.indices, mat.indptr, 12), mat.toarray())


def _direct_conv(x_nhwc, w_hwio, pad):
    """A plain loop over the output pixels and the kernel window."""
    m, h, w, _ = x_nhwc.shape
    kh, kw, _, n = w_hwio.shape
    padded = np.pad(x_nhwc.astype("float64"), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    out = np.zeros((m, h, w, n))
    for y in range(h):
        for x in range(w):
            window = padded[:, y:y + kh, x:x + kw, :]
            out[:, y, x, :] = np.tensordot(window, w_hwio, axes=([1, 2, 3], [0, 1, 2]))
    return out


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@pytest.mark.parametrize("kernel", [1, 3])
@pytest.mark.parametrize("block", [(2, 1), (4, 2)])
def test_sparse_conv2d_is_the_dense_convolution(layout, kernel, block):
    rng = np.random.default_rng(kernel)
    k, n = 4, 8
    mat = _bsr(rng, n, k * kernel * kernel, block)
    dense = mat.toarray()
    if layout == "NHWC":  # columns (kh, kw, c)
        w_hwio = dense.reshape(n, kernel, kernel, k).transpose(1, 2, 3, 0)
    else:  # columns (c, kh, kw)
        w_hwio = dense.reshape(n, k, kernel, kernel).transpose(2, 3, 1, 0)
    x = rng.standard_normal((2, 5, 3, k)).astype("float32")
    want = _direct_conv(x, w_hwio, kernel // 2)
    data = mat.data if block[1] > 1 else mat.data[:, :, 0]
    arg = x if layout == "NHWC" else x.transpose(0, 3, 1, 2)
    got = sparse_conv2d_python(arg, data, mat.indices, mat.indptr, layout, kernel)
    got = got if layout == "NHWC" else got.transpose(0, 2, 3, 1)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n,density", [(1, 1.0), (7, 0.3), (30, 0.1), (12, 0.0)])
def test_sparse_transpose_is_scipy_transpose(n, density):
    mat = sp.random(n, n, density=density, format="csr", dtype="float32", random_state=n)
    data, indices, indptr = sparse_transpose_python(mat.data, mat.indices, mat.indptr)
    want = mat.transpose().tocsr()
    want.sort_indices()
    np.testing.assert_array_equal(indptr, want.indptr)
    np.testing.assert_array_equal(indices, want.indices)
    np.testing.assert_array_equal(data, want.data)
    assert indices.dtype == mat.indices.dtype and indptr.dtype == mat.indptr.dtype
