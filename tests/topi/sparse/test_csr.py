"""topi.sparse.csrmv, csrmm and dense (kiln/topi/sparse/csr.py), built for both targets with the row count a
kernel argument, against numpy on random sparse matrices."""

import numpy as np
import pytest

import kiln
import kiln.contrib.sparse as tvmsp
from kiln import te, topi
from kiln.error import OpAttributeInvalid

from ...target.conftest import TARGETS


def _sparse(rng, shape, dtype):
    values = rng.integers(-4, 5, shape) if dtype.startswith("int") else rng.standard_normal(shape)
    return (values * (rng.random(shape) < 0.4)).astype(dtype)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype,columns,bias", [("float32", 1, False), ("float64", 3, True), ("int32", 1, True),
                                                ("int64", 2, False)])
def test_csrmm_and_csrmv_with_a_run_time_row_count(target, dtype, columns, bias):
    rng = np.random.default_rng(columns)
    rows, nnz = te.var("rows"), te.var("nnz")
    a = tvmsp.placeholder((rows, 6), nonzeros=nnz, dtype=dtype, name="A")
    b = te.placeholder((6, columns), dtype=dtype, name="B")
    c = te.placeholder((rows,), dtype=dtype, name="C")
    out = (topi.sparse.csrmv if columns == 1 else topi.sparse.csrmm)(a, b, c if bias else None)
    f = kiln.build(te.create_schedule(out.op), [rows, a.data, a.indices, a.indptr, b, c, out], target)
    for m in (5, 2):
        a_np, b_np, c_np = _sparse(rng, (m, 6), dtype), _sparse(rng, (6, columns), dtype), _sparse(rng, (m,), dtype)
        sparse = tvmsp.array(a_np)
        got = kiln.nd.array(np.zeros((m, columns), dtype))
        f(m, sparse.data, sparse.indices, sparse.indptr, kiln.nd.array(b_np), kiln.nd.array(c_np), got)
        want = a_np @ b_np + (c_np[:, None] if bias else 0)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("sparse_side", ["data", "weight"])
@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_dense_with_a_sparse_operand(target, sparse_side, dtype):
    rng = np.random.default_rng(3)
    x_np, w_np, bias_np = _sparse(rng, (3, 5), dtype), _sparse(rng, (4, 5), dtype), _sparse(rng, (4,), dtype)
    nnz = te.var("nnz")
    if sparse_side == "data":
        x, w = tvmsp.placeholder((3, 5), nonzeros=nnz, dtype=dtype, name="X"), te.placeholder((4, 5), dtype, "W")
    else:
        x, w = te.placeholder((3, 5), dtype, "X"), tvmsp.placeholder((4, 5), nonzeros=nnz, dtype=dtype, name="W")
    bias = te.placeholder((4,), dtype, "bias")
    out = topi.sparse.dense(x, w, bias)
    sparse = x if sparse_side == "data" else w
    dense_arg = w if sparse_side == "data" else x
    f = kiln.build(te.create_schedule(out.op), [sparse.data, sparse.indices, sparse.indptr, dense_arg, bias, out],
                   target)
    csr = tvmsp.array(x_np if sparse_side == "data" else w_np)
    got = kiln.nd.array(np.zeros((3, 4), dtype))
    f(csr.data, csr.indices, csr.indptr, kiln.nd.array(w_np if sparse_side == "data" else x_np),
      kiln.nd.array(bias_np), got)
    np.testing.assert_allclose(got.numpy(), (x_np @ w_np.T + bias_np).astype(dtype), rtol=1e-5, atol=1e-5)


def test_dense_needs_exactly_one_sparse_operand():
    with pytest.raises(OpAttributeInvalid, match="exactly one"):
        topi.sparse.dense(te.placeholder((2, 3)), te.placeholder((4, 3)))
