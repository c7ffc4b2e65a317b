"""contrib.sparse (kiln/contrib/sparse.py): CSR arrays round-trip dense matrices as scipy stores them, and
placeholders hold the three tensors."""

import numpy as np
import pytest
import scipy.sparse as sp

import kiln
import kiln.contrib.sparse as tvmsp
from kiln import te
from kiln.error import ArgumentTypeError, OpAttributeInvalid


@pytest.mark.parametrize("dtype", ["float32", "int16", "float64"])
def test_csr_array_stores_what_scipy_stores(dtype):
    rng = np.random.default_rng(0)
    dense = (rng.integers(-3, 4, (6, 9)) * (rng.random((6, 9)) < 0.3)).astype(dtype)
    dense[2] = 0  # an empty row
    a = tvmsp.array(dense, kiln.cpu(0))
    want = sp.csr_matrix(dense)
    np.testing.assert_array_equal(a.data.numpy(), want.data)
    np.testing.assert_array_equal(a.indices.numpy(), want.indices)
    np.testing.assert_array_equal(a.indptr.numpy(), want.indptr)
    assert a.indices.dtype == "int32" and a.stype == "csr" and a.shape == (6, 9) and a.dtype == dtype
    np.testing.assert_array_equal(a.numpy(), dense)
    again = tvmsp.CSRNDArray((a.data, a.indices, a.indptr), shape=(6, 9))
    np.testing.assert_array_equal(again.asnumpy(), dense)


def test_csr_array_refuses_what_it_cannot_store():
    with pytest.raises(OpAttributeInvalid, match="2-D"):
        tvmsp.array(np.zeros(3, "float32"))
    with pytest.raises(OpAttributeInvalid, match="stype='coo'"):
        tvmsp.array(np.zeros((2, 2), "float32"), stype="coo")
    with pytest.raises(ArgumentTypeError, match="numpy array"):
        tvmsp.array([[1, 0]])
    with pytest.raises(OpAttributeInvalid, match="shape"):
        tvmsp.CSRNDArray((kiln.nd.array(np.ones(1, "float32")), kiln.nd.array(np.zeros(1, "int32")),
                          kiln.nd.array(np.array([0, 1], "int32"))))


def test_placeholder_holds_the_three_tensors():
    rows, nonzeros = te.var("rows"), te.var("nnz")
    a = tvmsp.placeholder((rows, 7), nonzeros=nonzeros, dtype="float64", name="A")
    assert a.stype == "csr" and a.dtype == "float64"
    assert a.data.dtype == "float64" and a.indices.dtype == "int32" and a.indptr.dtype == "int32"
    assert a.data.name == "A_data" and len(a.indptr.shape) == 1
    assert tvmsp.placeholder((3, 4)).data.dtype == "float32"
