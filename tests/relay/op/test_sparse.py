"""sparse_fill_empty_rows (kiln/relay/op/sparse.py): against a numpy formulation of its definition, with static
shapes and with every size known only at run time, in the reference interpreter and on the VM."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import TypeInferenceError


def _expected(indices, values, rows, default):
    """Row by row: the row's entries in their order, or one filler entry ``(r, 0, ...)`` when it has none."""
    out_i, out_v, empty = [], [], []
    for r in range(rows):
        mine = [k for k in range(len(indices)) if indices[k, 0] == r]
        empty.append(not mine)
        for k in mine:
            out_i.append(indices[k])
            out_v.append(values[k])
        if not mine:
            out_i.append([r] + [0] * (indices.shape[1] - 1))
            out_v.append(default)
    return (np.array(out_i, indices.dtype).reshape(-1, indices.shape[1]), np.array(out_v, values.dtype),
            np.array(empty))


CASES = [
    (np.array([[0, 1], [0, 3], [2, 0], [3, 1]]), np.array([1.5, 2.0, 3.0, 4.0], "float32"), (5, 6)),
    (np.array([[1, 0, 2], [1, 1, 1], [4, 2, 2]]), np.array([7, 8, 9], "int32"), (6, 3, 3)),
    (np.zeros((0, 2), "int64"), np.zeros(0, "int32"), (3, 4)),
    (np.array([[0, 0], [1, 1], [2, 2]]), np.array([1, 2, 3], "int32"), (3, 3)),
]


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("indices,values,dense_shape", CASES)
def test_sparse_fill_empty_rows(indices, values, dense_shape, dynamic):
    indices = indices.astype("int64")
    args = [indices, values, np.array(dense_shape, "int64"), np.array([-5], values.dtype)]
    shapes = [a.shape for a in args]
    names = ["i", "v", "d", "dv"]
    vs = [relay.var(n, shape=tuple(relay.Any() for _ in s) if dynamic else s, dtype=str(a.dtype))
          for n, s, a in zip(names, shapes, args, strict=True)]
    func = relay.Function(vs, relay.sparse_fill_empty_rows(*vs))
    want = _expected(indices, values, dense_shape[0], -5)
    for kind in ("debug", "vm"):
        out = relay.create_executor(kind, mod=kiln.IRModule.from_expr(func), target="llvm").evaluate()(*args)
        for got, expected in zip(out, want, strict=True):
            np.testing.assert_array_equal(got.numpy(), expected)
    typed = relay.infer_type(func).body.checked_type
    assert [f.dtype for f in typed.fields] == ["int64", str(values.dtype), "bool"]


def test_bad_arguments_name_the_operator():
    i, v = relay.var("i", shape=(3,), dtype="int64"), relay.var("v", shape=(3,))
    d, dv = relay.var("d", shape=(2,), dtype="int64"), relay.var("dv", shape=(1,))
    with pytest.raises(TypeInferenceError, match="sparse_fill_empty_rows"):
        relay.infer_type(relay.sparse_fill_empty_rows(i, v, d, dv))


# ---- nn.sparse_conv2d and nn.sparse_transpose ------------------------------------------------------------------

def _random_bsr(rng, rows, cols, block):
    import scipy.sparse as sp

    dense = rng.standard_normal((rows, cols)).astype("float32")
    dense *= np.kron(rng.random((rows // block[0], cols // block[1])) < 0.5, np.ones(block)).astype("float32")
    return sp.bsr_matrix(dense, blocksize=block), dense


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("layout,kernel", [("NHWC", 1), ("NCHW", 1), ("NHWC", 3), ("NCHW", 3)])
def test_sparse_conv2d_equals_conv2d_of_the_dense_weight(target, layout, kernel):
    """A fused relu after the sparse convolution gives what nn.conv2d of the dense weight gives."""
    rng = np.random.default_rng(kernel)
    k, n = 4, 8
    mat, dense = _random_bsr(rng, n, k * kernel * kernel, (4, 1))
    if layout == "NHWC":
        shape, kernel_layout, weight = (1, 5, 6, k), "HWIO", dense.reshape(n, kernel, kernel, k).transpose(1, 2, 3, 0)
    else:
        shape, kernel_layout, weight = (1, k, 5, 6), "OIHW", dense.reshape(n, k, kernel, kernel)
    x = relay.var("x", shape=shape)
    sparse = relay.nn.sparse_conv2d(x, relay.const(mat.data[:, :, 0]), relay.const(mat.indices),
                                    relay.const(mat.indptr), layout, kernel)
    conv = relay.nn.conv2d(x, relay.const(weight), kernel_size=kernel, padding=kernel // 2, data_layout=layout,
                           kernel_layout=kernel_layout)
    data = rng.standard_normal(shape).astype("float32")
    want = relay.create_executor("debug", mod=kiln.IRModule.from_expr(relay.Function([x], relay.nn.relu(conv))))
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.nn.relu(sparse)))
    with kiln.transform.PassContext(opt_level=3):
        got = relay.create_executor("graph", mod=mod, target=target).evaluate()(data).numpy()
    np.testing.assert_allclose(got, want.evaluate()(data).numpy(), rtol=1e-5, atol=1e-5)


def test_sparse_conv2d_types():
    x = relay.var("x", shape=(2, 7, 5, 6))
    w, i, p = relay.var("w", shape=(3, 4, 2)), relay.var("i", shape=(3,), dtype="int32"), relay.var(
        "p", shape=(3,), dtype="int32")
    typed = relay.testing.run_infer_type(relay.nn.sparse_conv2d(x, w, i, p))
    assert typed.checked_type == relay.TensorType((2, 7, 5, 8), "float32")
    typed = relay.testing.run_infer_type(relay.nn.sparse_conv2d(relay.var("y", shape=(2, 6, 5, 4)), w, i, p, "NCHW",
                                                                3))
    assert typed.checked_type == relay.TensorType((2, 8, 5, 4), "float32")
    with pytest.raises(TypeInferenceError, match="nn.sparse_conv2d: the weight's 5 columns"):
        relay.testing.run_infer_type(relay.nn.sparse_conv2d(relay.var("y", shape=(1, 1, 1, 5)), w, i, p))
    with pytest.raises(TypeInferenceError, match="nn.sparse_conv2d: data .* must be 4-D"):
        relay.testing.run_infer_type(relay.nn.sparse_conv2d(relay.var("y", shape=(1, 6)), w, i, p))
    with pytest.raises(TypeInferenceError, match="nn.sparse_conv2d: weight_indptr"):
        relay.testing.run_infer_type(relay.nn.sparse_conv2d(x, w, i, relay.var("q", shape=(3, 1), dtype="int32")))
    with pytest.raises(kiln.error.OpAttributeInvalid, match="kernel_size"):
        relay.nn.sparse_conv2d(x, w, i, p, "NHWC", 5)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_sparse_transpose_of_a_named_tuple(target):
    import collections

    import scipy.sparse as sp

    csr = sp.random(11, 11, density=0.3, format="csr", dtype="float32", random_state=3)
    fields = collections.namedtuple("CSR", "data indices indptr")(
        relay.var("d", shape=csr.data.shape), relay.var("i", shape=csr.indices.shape, dtype="int32"),
        relay.var("p", shape=csr.indptr.shape, dtype="int32"))
    out = relay.nn.sparse_transpose(fields)
    func = relay.Function(list(fields), out.astuple())
    assert relay.testing.run_infer_type(func).ret_type == relay.TupleType(
        [relay.TensorType(csr.data.shape), relay.TensorType(csr.indices.shape, "int32"),
         relay.TensorType(csr.indptr.shape, "int32")])
    got = relay.create_executor("graph", mod=kiln.IRModule.from_expr(func), target=target).evaluate()(
        csr.data, csr.indices, csr.indptr)
    want = csr.transpose().tocsr()
    want.sort_indices()
    for g, w in zip(got, (want.data, want.indices, want.indptr), strict=True):
        np.testing.assert_array_equal(g.numpy(), w)
    with pytest.raises(TypeInferenceError, match="nn.sparse_transpose: sparse_data .* one entry each"):
        relay.testing.run_infer_type(relay.nn.sparse_transpose((relay.var("a", shape=(3,)), fields.indices,
                                                                fields.indptr)).astuple())


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("sparse_lhs", [False, True])
def test_sparse_dense_of_a_bsr_matrix(target, sparse_lhs):
    import scipy.sparse as sp

    rng = np.random.default_rng(6)
    w = sp.bsr_matrix((rng.standard_normal((6, 8)) * np.kron(rng.random((3, 2)) < 0.6, np.ones((2, 4)))).astype(
        "float32"), blocksize=(2, 4))
    x = relay.var("x", shape=(5, 8))
    out = relay.nn.sparse_dense(x, (relay.const(w.data), relay.const(w.indices), relay.const(w.indptr)), sparse_lhs)
    mod = kiln.IRModule.from_expr(relay.Function([x], out))
    assert relay.transform.InferType()(mod)["main"].ret_type == relay.TensorType((6, 5) if sparse_lhs else (5, 6))
    data = rng.standard_normal((5, 8)).astype("float32")
    want = w.toarray() @ data.T if sparse_lhs else data @ w.toarray().T
    np.testing.assert_allclose(relay.create_executor("debug", mod=mod).evaluate()(data).numpy(), want, rtol=1e-5,
                               atol=1e-5)
    got = relay.create_executor("graph", mod=mod, target=target).evaluate()(data).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeInferenceError, match="nn.sparse_dense: sparse_indices"):
        relay.testing.run_infer_type(relay.nn.sparse_dense(x, (relay.const(w.data), relay.const(w.indices[:1]),
                                                               relay.const(w.indptr))))


@pytest.mark.parametrize("build", [
    lambda i, p: relay.nn.sparse_conv2d(relay.var("x", shape=(1, 2, 4, 4)), relay.var("w", shape=(2, 2, 1)), i, p,
                                        "NCHW", 3),
    lambda i, p: relay.nn.sparse_transpose((relay.var("d", shape=(2,)), i, p)).astuple(),
])
def test_sparse_calls_print_and_parse_back(build):
    i, p = relay.var("i", shape=(2,), dtype="int32"), relay.var("p", shape=(3,), dtype="int32")
    body = build(i, p)
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function(relay.analysis.free_vars(body), body)))
    back = relay.transform.InferType()(relay.fromtext(mod.astext()))
    kiln.ir.assert_structural_equal(back["main"], mod["main"])
