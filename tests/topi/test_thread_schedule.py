"""The thread-binding schedules of topi.cuda and topi.hls: their loop nests bind each kernel to blocks x threads
(or one pipeline stage), and, run by the TIR evaluator a thread at a time, compute what numpy does."""

import numpy as np
import pytest

import kiln
from kiln import te, tir, topi
from kiln.tir.evaluator import evaluate
from kiln.tir.stmt_functor import post_order_visit


def _threads(func):
    found = {}
    post_order_visit(func.body, lambda n: found.__setitem__(n.node.thread_tag, int(n.value))
                     if isinstance(n, tir.AttrStmt) and n.attr_key == "thread_extent" else None)
    return found


@pytest.mark.parametrize("schedule, tags", [
    (topi.cuda.schedule_softmax, {"blockIdx.x", "threadIdx.x"}),
    (topi.hls.schedule_softmax, {"pipeline"}),
])
def test_softmax(schedule, tags):
    x = np.random.uniform(size=(5, 7)).astype("float32")
    A = te.placeholder(x.shape, name="A")
    B = topi.nn.softmax(A, axis=1)
    func = kiln.lower(schedule(B), [A, B])["main"]
    assert set(_threads(func)) == tags
    out = np.zeros_like(x)
    evaluate(func, x, out)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5)


def test_gpu_blocks_use_the_targets_thread_count():
    x = np.random.uniform(size=(3, 4, 9, 9)).astype("float32")
    A = te.placeholder(x.shape, name="A")
    B = topi.nn.pool2d(A, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    with kiln.target.Target("cuda"):
        max_threads = kiln.target.Target.current().max_num_threads
        func = kiln.lower(topi.cuda.schedule_pool(B, "NCHW"), [A, B])["main"]
    assert _threads(func)["threadIdx.x"] == max_threads
    out = np.zeros((3, 4, 5, 5), "float32")
    evaluate(func, x, out)
    ref = kiln.build(topi.generic.schedule_pool(B), [A, B], "llvm")
    want = kiln.nd.empty((3, 4, 5, 5), "float32")
    ref(kiln.nd.array(x), want)
    np.testing.assert_allclose(out, want.numpy())
