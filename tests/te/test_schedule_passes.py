"""InferBound / ScheduleOps / schedule_to_module: the bounds of split, attached and tightened loops, and the
unoptimized statement and module of a schedule (run through the TIR evaluator against numpy)."""

import numpy as np

import kiln
from kiln import te, tir
from kiln.driver.build_module import schedule_to_module
from kiln.tir.stmt_functor import post_order_visit


def _chain(m=16):
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((m,), lambda i: B[i] + 1.0, name="C")
    return A, B, C


def test_bounds_of_split_and_attached_stage():
    A, B, C = _chain(16)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[B].compute_at(s[C], xo)
    bounds = te.schedule.InferBound(s)
    assert isinstance(bounds, kiln.container.Map)
    assert bounds[xo].extent.value == 4 and bounds[xi].extent.value == 4
    assert bounds[B.op.axis[0]].extent.value == 4  # B computes the four elements one xo iteration reads
    assert str(bounds[B.op.axis[0]].min) == str(xo.var * 4)
    assert bounds[C.op.axis[0]].extent.value == 16


def test_schedule_ops_and_schedule_to_module():
    A, B, C = _chain(16)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[B].compute_at(s[C], xo)
    stmt = te.schedule.ScheduleOps(s, te.schedule.InferBound(s))
    loops = []
    post_order_visit(stmt, lambda n: loops.append(n.extent.value) if isinstance(n, tir.For) else None)
    assert sorted(loops) == [4, 4, 4]  # xo, B's four elements inside it, xi
    mod = schedule_to_module(s, [A, C])
    assert isinstance(mod["main"], tir.PrimFunc)
    f = kiln.build(kiln.lower(s, [A, C]), target="llvm")
    a, c = kiln.nd.array(np.random.uniform(size=16).astype("float32")), kiln.nd.empty((16,), "float32")
    f["main"](a, c)
    np.testing.assert_allclose(c.numpy(), a.numpy() * 2.0 + 1.0, rtol=1e-6)


def test_auto_inline_passes_choose_by_access_pattern():

    A = te.placeholder((4, 5), name="A")
    B = te.placeholder((5,), name="B")
    T1 = te.compute((4, 5), lambda i, j: A[i, j] * 2.0, name="T1")  # element-wise
    T2 = te.compute((4, 5), lambda i, j: T1[i, j] + B[j], name="T2")  # broadcast
    k = te.reduce_axis((0, 5), name="k")
    R = te.compute((4,), lambda i: te.sum(T2[i, k], axis=k), name="R")
    s = te.create_schedule(R.op)
    te.schedule.AutoInlineElemWise(s)
    assert s[T1].attach_type == "inline" and s[T2].attach_type == "root"
    te.schedule.AutoInlineInjective(s)
    assert s[T2].attach_type == "inline" and s[R].attach_type == "root"
    f = kiln.build(s, [A, B, R])
    rng = np.random.default_rng(8)
    a, b = rng.random((4, 5), dtype="float32"), rng.random(5, dtype="float32")
    r = kiln.nd.array(np.zeros(4, "float32"))
    f(kiln.nd.array(a), kiln.nd.array(b), r)
    np.testing.assert_allclose(r.numpy(), (a * 2 + b).sum(axis=1), rtol=1e-5)
    s2 = te.create_schedule(R.op)
    s2[T2].split(T2.op.axis[0], factor=2)  # a scheduled stage is left alone
    te.schedule.AutoInlineBroadcast(s2)
    assert s2[T1].attach_type == "inline" and s2[T2].attach_type == "root"
