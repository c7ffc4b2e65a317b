"""The ready-made GEMM schedule (kiln/te/examples.py): its lowered form keeps the accumulator tile in registers."""

import numpy as np
import pytest

import kiln
from kiln import tir
from kiln.te.examples import matmul, matmul_schedule
from kiln.tir.evaluator import evaluate
from kiln.tir.stmt_functor import pre_order_visit


def test_matmul_schedule_is_correct():
    M, N, K = 8, 32, 12
    s, args = matmul_schedule(M, N, K, bn=16, mr=4)
    func = kiln.lower(s, args, name="mm")["mm"]
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((M, K)).astype("float32"), rng.standard_normal((K, N)).astype("float32")
    c = np.zeros((M, N), "float32")
    evaluate(func, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_matmul_schedule_lowered_form():
    s, args = matmul_schedule(64, 64, 32)
    func = kiln.lower(s, args, name="mm")["mm"]
    allocs, loops, stores = [], [], []

    def visit(node):
        if isinstance(node, tir.Allocate):
            allocs.append((node.buffer_var.name_hint, node.extents[0].value, node.scope))
        elif isinstance(node, tir.For):
            loops.append((node.loop_var.name_hint, node.kind))
        elif isinstance(node, tir.BufferStore) and node.buffer.name == "C.local":
            stores.append(node)

    pre_order_visit(func.body, visit)
    assert ("packedB", 64 * 32, "global") in allocs and ("C.local", 4 * 16, "local") in allocs
    # packing and the row blocks run in parallel; the reduction loop is the only loop inside a tile
    assert loops == [("x", tir.ForKind.PARALLEL), ("y", tir.ForKind.SERIAL), ("i.outer", tir.ForKind.PARALLEL),
                     ("j.outer", tir.ForKind.SERIAL), ("k", tir.ForKind.SERIAL)]
    # every accumulator access is a 16-lane vector at a constant offset: 4 init stores + 4 updates
    assert len(stores) == 8
    for st in stores:
        (index,) = st.indices
        assert isinstance(index, tir.Ramp) and isinstance(index.base, tir.IntImm) and index.lanes == 16


def test_matmul_schedule_rejects_bad_block():
    with pytest.raises(ValueError, match="multiple of bn"):
        matmul_schedule(64, 40, 32, bn=16)


def test_matmul_tensors():
    A, B, C = matmul(4, 6, 5)
    assert [int(d) for d in C.shape] == [4, 6] and C.op.reduce_axis[0].dom.extent.value == 5
    A, B, C, packed = matmul(4, 32, 5, bn=16)
    assert [int(d) for d in packed.shape] == [2, 5, 16]
