"""Operators whose relations used to refuse a ``relay.Any`` batch (einsum, matrix_set_diag, nn.batch_to_space_nd,
nn.nll_loss, nn.sparse_add, sparse_to_dense): each compiled once for the VM, run at two batch sizes on random data
against numpy and the reference interpreter; a size that does not fit fails the run-time check its kernel records,
with a KilnError naming the operator (before the kernel could read out of bounds)."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.runtime.vm import VirtualMachine
from kiln.topi.testing.transform import batch_to_space_nd_python

ANY = relay.Any()
RNG = np.random.default_rng(0)


def compiled(params, body):
    """The VM function and the reference interpreter of ``fn(params) -> body``, compiled once."""
    mod = kiln.IRModule.from_expr(relay.Function(params, body))
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    return (lambda *a: vm.invoke("main", *a).numpy()), (lambda *a: relay.create_executor(
        "debug", mod=mod).evaluate()(*a).numpy())


def check(params, body, runs, bad, error):
    """Each of ``runs`` (``(args, numpy result)``) matches on the VM and the interpreter; ``bad`` args fail on
    the VM with ``error`` in the message."""
    vm, reference = compiled(params, body)
    for args, want in runs:
        np.testing.assert_allclose(vm(*args), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(reference(*args), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(KilnError, match=error):
        vm(*bad)


def rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def test_einsum_takes_the_static_size_of_an_axis():
    a, b = relay.var("a", shape=(ANY, 3)), relay.var("b", shape=(ANY, 2))
    runs = [((x, y), np.einsum("ij,jk->ik", x, y)) for x, y in ((rand(2, 3), rand(3, 2)), (rand(5, 3), rand(3, 2)))]
    check([a, b], relay.einsum([a, b], "ij,jk->ik"), runs, (rand(2, 3), rand(4, 2)), "einsum.*axis 'j'")


def test_matrix_set_diag_checks_the_diagonal_at_run_time():
    data, diag = relay.var("data", shape=(ANY, 3, 4)), relay.var("diag", shape=(ANY, 3))

    def numpy(x, d):
        out = x.copy()
        out[:, np.arange(3), np.arange(3)] = d
        return out

    runs = [((x, d), numpy(x, d)) for x, d in ((rand(2, 3, 4), rand(2, 3)), (rand(5, 3, 4), rand(5, 3)))]
    check([data, diag], relay.matrix_set_diag(data, diag), runs, (rand(2, 3, 4), rand(3, 3)), "matrix_set_diag")


def test_batch_to_space_nd_of_a_run_time_batch():
    x = relay.var("x", shape=(ANY, 2, 3, 1))
    body = relay.nn.batch_to_space_nd(x, (2, 2), ((0, 1), (1, 0)))
    runs = [((d,), batch_to_space_nd_python(d, (2, 2), (0, 1), (1, 0))) for d in (rand(4, 2, 3, 1),
                                                                                   rand(12, 2, 3, 1))]
    check([x], body, runs, (rand(6, 2, 3, 1),), "reshape")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_checks_the_batch_of_the_targets(reduction):
    pred, target = relay.var("pred", shape=(ANY, 4)), relay.var("target", shape=(ANY,), dtype="int32")
    weights = relay.var("weights", shape=(4,))
    w = RNG.random(4).astype("float32") + 0.5

    def numpy(p, t):
        terms, picked = -p[np.arange(len(t)), t] * w[t], w[t]
        return {"mean": terms.sum() / picked.sum(), "sum": terms.sum(), "none": terms}[reduction]

    runs = []
    for n in (3, 7):
        p, t = rand(n, 4), RNG.integers(0, 4, n).astype("int32")
        runs.append(((p, t, w), numpy(p, t)))
    body = relay.nn.nll_loss(pred, target, weights, reduction)
    check([pred, target, weights], body, runs, (rand(3, 4), np.zeros(2, "int32"), w), "nn.nll_loss")


def test_sparse_add_checks_the_row_pointers():
    dense = relay.var("dense", shape=(ANY, 3))
    values, indices = relay.var("values", shape=(ANY,)), relay.var("indices", shape=(ANY,), dtype="int32")
    indptr = relay.var("indptr", shape=(ANY,), dtype="int32")
    body = relay.nn.sparse_add(dense, (values, indices, indptr))

    def case(rows):
        mask = RNG.random((rows, 3)) < 0.4
        matrix = np.where(mask, rand(rows, 3), 0).astype("float32")
        rows_i, cols = np.nonzero(matrix)
        indptr_v = np.searchsorted(rows_i, np.arange(rows + 1)).astype("int32")
        d = rand(rows, 3)
        return (d, matrix[rows_i, cols], cols.astype("int32"), indptr_v), d + matrix

    runs = [case(2), case(5)]
    (d, v, i, p), _ = case(4)
    check([dense, values, indices, indptr], body, runs, (d, v, i, p[:-1]), "nn.sparse_add.*indptr")


def test_sparse_to_dense_checks_the_number_of_values():
    indices, values = relay.var("indices", shape=(ANY, 2), dtype="int32"), relay.var("values", shape=(ANY,))
    body = relay.sparse_to_dense(indices, (3, 4), values, relay.const(0.5))

    def numpy(i, v):
        out = np.full((3, 4), 0.5, "float32")
        out[i[:, 0], i[:, 1]] = v
        return out

    runs = []
    for n in (2, 5):
        flat = RNG.choice(12, n, replace=False)
        i = np.stack([flat // 4, flat % 4], 1).astype("int32")
        v = rand(n)
        runs.append(((i, v), numpy(i, v)))
    check([indices, values], body, runs, (runs[0][0][0], rand(3)), "sparse_to_dense")
