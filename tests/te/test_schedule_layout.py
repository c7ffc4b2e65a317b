"""Stage.transform_layout (kiln/te/schedule_layout.py): physical layouts of inputs, outputs and their loops."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import TIRError


def _run(s, args, *arrays):
    f = kiln.build(s, args, target="llvm")
    nds = [kiln.nd.array(a) for a in arrays]
    f(*nds)
    return [x.numpy() for x in nds]


def test_transposed_output_and_blocked_input_run():
    A = te.placeholder((4, 8), name="A")
    B = te.compute((4, 8), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    s = te.create_schedule(B.op)
    s[A].transform_layout(lambda i, j: [i, j // 4, j % 4])
    axes = s[B].transform_layout(lambda i, j: [j, i])
    assert [int(a.dom.extent) for a in axes] == [8, 4] and list(s[B].leaf_iter_vars) == axes
    a = np.random.default_rng(0).random((4, 8), dtype="float32")
    b = _run(s, [A, B], a.reshape(4, 2, 4), np.zeros((8, 4), "float32"))[1]
    np.testing.assert_allclose(b, (a * 2 + 1).T, rtol=1e-6)


def test_new_axes_can_be_scheduled_and_a_reduction_keeps_its_axis():
    A = te.placeholder((6, 8, 5), name="A")
    k = te.reduce_axis((0, 5), name="k")
    B = te.compute((6, 8), lambda i, j: te.sum(A[i, j, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    flat = s[B].transform_layout(lambda i, j: [i * 8 + j])
    assert [int(a.dom.extent) for a in flat] == [48] and s[B].leaf_iter_vars[-1] is k
    s[B].split(flat[0], factor=16)
    a = np.random.default_rng(1).random((6, 8, 5), dtype="float32")
    b = _run(s, [A, B], a, np.zeros(48, "float32"))[1]
    np.testing.assert_allclose(b, a.sum(axis=2).reshape(-1), rtol=1e-5)


def test_axis_separators_give_two_dimensional_physical_indices():
    A = te.placeholder((2, 3, 4), name="A")
    B = te.compute((2, 3, 4), lambda i, j, k: A[i, j, k], name="B")
    s = te.create_schedule(B.op)
    s[B].transform_layout(lambda i, j, k: [i, j, te.AXIS_SEPARATOR, k])
    func = kiln.lower(s, [A, B])["main"]
    stores = []
    tir.stmt_functor.post_order_visit(func.body, lambda n: stores.append(n) if isinstance(n, tir.BufferStore) else None)
    assert len(stores[0].indices) == 2 and [int(d) for d in stores[0].buffer.shape] == [6, 4]


def test_padding_and_moved_axes_are_refused():
    A = te.placeholder((1, 3, 8), name="A")
    B = te.compute(A.shape, lambda *i: A[i], name="B")
    s = te.create_schedule(B.op)
    with pytest.raises(TIRError, match="transform_layout of stage B: IndexMap.inverse"):
        s[B].transform_layout(lambda n, c, w: [n, c // 4, w, c % 4])
    s[B].split(B.op.axis[2], factor=4)
    with pytest.raises(TIRError, match="must still be its loops"):
        s[B].transform_layout(lambda n, c, w: [w, c, n])
