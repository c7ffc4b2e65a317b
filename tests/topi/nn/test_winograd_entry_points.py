"""TVM's device-named Winograd entry points (kiln/topi/cuda/conv*_winograd.py, kiln/topi/mali, kiln/topi/arm_cpu/
conv2d_winograd.py): the GPU ones, thread-bound, run by the TIR evaluator a thread at a time; the Arm one compiled for
the host; all against the direct convolution."""

import numpy as np
import pytest

import kiln
from kiln import te, tir, topi
from kiln.tir.evaluator import evaluate
from kiln.tir.stmt_functor import post_order_visit
from kiln.topi.testing import conv2d_nchw_python, conv3d_ncdhw_python

RNG = np.random.default_rng(12)


def thread_tags(func):
    found = set()
    post_order_visit(func.body, lambda n: found.add(n.node.thread_tag)
                     if isinstance(n, tir.AttrStmt) and n.attr_key == "thread_extent" else None)
    return found


@pytest.mark.parametrize("compute, schedule, layout", [
    (topi.cuda.conv2d_nchw_winograd, topi.cuda.schedule_conv2d_nchw_winograd, "NCHW"),
    (topi.mali.conv2d_nchw_winograd, topi.mali.schedule_conv2d_nchw_winograd, "NCHW"),
    (topi.cuda.conv2d_nhwc_winograd_direct, topi.cuda.schedule_conv2d_nhwc_winograd_direct, "NHWC"),
])
def test_gpu_2d_entry_points(compute, schedule, layout):
    x = RNG.standard_normal((1, 1, 4, 3)).astype("float32")  # small: the evaluator runs every element in Python
    w = RNG.standard_normal((2, 1, 3, 3)).astype("float32")
    want = conv2d_nchw_python(x, w, 1, 1)
    if layout == "NHWC":
        x, w = np.ascontiguousarray(x.transpose(0, 2, 3, 1)), np.ascontiguousarray(w.transpose(2, 3, 1, 0))
        want = want.transpose(0, 2, 3, 1)
    a, k = te.placeholder(x.shape, name="a"), te.placeholder(w.shape, name="k")
    with kiln.target.Target("cuda"):
        out = topi.nn.relu(compute(a, k, 1, 1, 1, "float32"))
        func = kiln.lower(schedule([out]), [a, k, out])["main"]
    assert {"blockIdx.x", "threadIdx.x"} <= thread_tags(func)
    got = np.zeros(want.shape, "float32")
    evaluate(func, x, w, got)
    np.testing.assert_allclose(got, np.maximum(want, 0), rtol=1e-4, atol=1e-4)


def test_gpu_3d_entry_point():
    # a 1-tap depth stays a direct axis: the evaluator's cheap case (compiled tests cover the transformed depth)
    x, w = RNG.standard_normal((1, 1, 2, 3, 2)).astype("float32"), RNG.standard_normal((1, 1, 1, 3, 3)).astype(
        "float32")
    a, k = te.placeholder(x.shape, name="a"), te.placeholder(w.shape, name="k")
    with kiln.target.Target("cuda"):
        out = topi.cuda.conv3d_ncdhw_winograd(a, k, (1, 1, 1), (0, 1, 1), (1, 1, 1), 1, "float32")
        func = kiln.lower(topi.cuda.schedule_conv3d_ncdhw_winograd([out]), [a, k, out])["main"]
    got = np.zeros((1, 1, 2, 3, 2), "float32")
    evaluate(func, x, w, got)
    np.testing.assert_allclose(got, conv3d_ncdhw_python(x, w, 1, (0, 1, 1)), rtol=1e-4, atol=1e-4)
    with pytest.raises(kiln.error.OpAttributeInvalid, match="groups must be 1"):
        topi.cuda.conv3d_ncdhw_winograd(a, k, 1, 1, 1, 2, "float32")


def test_arm_cpu_entry_point_on_the_host():
    x, w = RNG.standard_normal((2, 5, 9, 9)).astype("float32"), RNG.standard_normal((4, 5, 3, 3)).astype("float32")
    a, k = te.placeholder(x.shape, name="a"), te.placeholder(w.shape, name="k")
    with kiln.target.Target("llvm -device=arm_cpu"):
        fcompute, fschedule = topi.testing.dispatch("llvm -device=arm_cpu", {
            "arm_cpu": (topi.arm_cpu.conv2d_nchw_winograd, topi.arm_cpu.schedule_conv2d_nchw_winograd)})
        out = fcompute(a, k, 1, "SAME", 1, "float32")
        func = kiln.build(fschedule([out]), [a, k, out], "llvm")
    got = kiln.nd.empty((2, 4, 9, 9), "float32")
    func(kiln.nd.array(x), kiln.nd.array(w), got)
    np.testing.assert_allclose(got.numpy(), conv2d_nchw_python(x, w, 1, "SAME"), rtol=1e-3, atol=1e-3)
