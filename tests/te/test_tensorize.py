"""te.decl_tensor_intrin and Stage.tensorize (kiln/te/tensor_intrin.py, schedule_tensorize.py), run against numpy
with intrinsics written as TIR loops over their buffers."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import TIRError


def _loop(n, fbody, name="t"):
    i = tir.Var(name, "int32")
    return tir.For(i, 0, n, tir.ForKind.SERIAL, fbody(i))


def _vadd_intrin(n):
    x = te.placeholder((n,), name="vx")
    y = te.placeholder((n,), name="vy")
    z = te.compute((n,), lambda i: x[i] + y[i], name="vz")

    def fcompute(ins, outs):
        return _loop(n, lambda i: tir.BufferStore(outs[0], ins[0][i] + ins[1][i], [i]))

    return te.decl_tensor_intrin(z.op, fcompute, default_buffer_params={"offset_factor": 1})


def test_intrinsic_declaration():
    intrin = _vadd_intrin(8)
    assert [b.name for b in intrin.buffers] == ["vx", "vy", "vz"] and intrin.reduce_init is None
    assert isinstance(intrin.buffers[0].elem_offset, tir.Var)


def test_tensorized_vector_add_on_a_2d_tile_runs():
    A = te.placeholder((6, 32), name="A")
    B = te.placeholder((6, 32), name="B")
    C = te.compute((6, 32), lambda i, j: A[i, j] + B[i, j], name="C")
    s = te.create_schedule(C.op)
    jo, ji = s[C].split(C.op.axis[1], factor=8)
    s[C].tensorize(ji, _vadd_intrin(8))
    assert s[C].iter_var_attrs[ji].iter_type == tir.IterVar.Tensorized
    f = kiln.build(s, [A, B, C])
    rng = np.random.default_rng(0)
    a, b = rng.random((6, 32), dtype="float32"), rng.random((6, 32), dtype="float32")
    c = kiln.nd.array(np.zeros((6, 32), "float32"))
    f(kiln.nd.array(a), kiln.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a + b, rtol=1e-6)


def _dot_intrin(n):
    w = te.placeholder((n,), name="w")
    x = te.placeholder((n,), name="x")
    k = te.reduce_axis((0, n), name="k")
    z = te.compute((1,), lambda i: te.sum(w[k] * x[k], axis=k), name="z")

    def fcompute(ins, outs):
        ww, xx = ins
        zz = outs[0]

        def acc(i):
            return tir.BufferStore(zz, zz[0] + ww[i] * xx[i], [0])

        body = tir.SeqStmt([tir.BufferStore(zz, tir.const(0.0, "float32"), [0]), _loop(n, acc)])
        return body, tir.BufferStore(zz, tir.const(0.0, "float32"), [0]), _loop(n, acc)

    return te.decl_tensor_intrin(z.op, fcompute, default_buffer_params={"offset_factor": 1})


def test_tensorized_reduction_with_outer_reduction_loop_uses_reset_and_update():
    W = te.placeholder((5, 32), name="W")
    X = te.placeholder((32,), name="X")
    k = te.reduce_axis((0, 32), name="k")
    Y = te.compute((5, 1), lambda i, j: te.sum(W[i, k] * X[k], axis=k), name="Y")
    s = te.create_schedule(Y.op)
    ko, ki = s[Y].split(k, factor=8)
    s[Y].tensorize(ki, _dot_intrin(8))
    f = kiln.build(s, [W, X, Y])
    rng = np.random.default_rng(1)
    w, x = rng.random((5, 32), dtype="float32"), rng.random(32, dtype="float32")
    y = kiln.nd.array(np.zeros((5, 1), "float32"))
    f(kiln.nd.array(w), kiln.nd.array(x), y)
    np.testing.assert_allclose(y.numpy()[:, 0], w @ x, rtol=1e-5)


def test_intrinsic_shape_must_match_the_region():
    A = te.placeholder((32,), name="A")
    B = te.placeholder((32,), name="B")
    C = te.compute((32,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    _, ci = s[C].split(C.op.axis[0], factor=4)
    s[C].tensorize(ci, _vadd_intrin(8))
    with pytest.raises(TIRError, match="extent 8 where the region of A has 4"):
        kiln.lower(s, [A, B, C])


def test_tensor_compute_op_runs_the_intrinsic_per_row():
    A = te.placeholder((4, 8), name="A")
    B = te.placeholder((4, 8), name="B")
    vadd = _vadd_intrin(8)
    C = te.compute((4, 8), lambda i: vadd(A[i, 0:8], B[i, 0:8]), name="C")
    assert isinstance(C.op, te.tensor_compute.TensorComputeOp) and C.op.schedulable_ndim == 1
    assert [iv.var.name_hint for iv in te.create_schedule(C.op)[C].leaf_iter_vars] == ["i"]
    s = te.create_schedule(C.op)
    f = kiln.build(s, [A, B, C])
    rng = np.random.default_rng(2)
    a, b = rng.random((4, 8), dtype="float32"), rng.random((4, 8), dtype="float32")
    c = kiln.nd.array(np.zeros((4, 8), "float32"))
    f(kiln.nd.array(a), kiln.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a + b, rtol=1e-6)


def test_tensor_compute_op_accumulates_over_its_reduce_axis():
    W = te.placeholder((3, 4, 8), name="W")
    X = te.placeholder((4, 8), name="X")
    k = te.reduce_axis((0, 4), name="k")
    dot = _dot_intrin(8)
    Y = te.compute((3, 1), lambda i: dot(W[i, k, 0:8], X[k, 0:8], reduce_axis=k), name="Y")
    s = te.create_schedule(Y.op)
    f = kiln.build(s, [W, X, Y])
    rng = np.random.default_rng(3)
    w, x = rng.random((3, 4, 8), dtype="float32"), rng.random((4, 8), dtype="float32")
    y = kiln.nd.array(np.zeros((3, 1), "float32"))
    f(kiln.nd.array(w), kiln.nd.array(x), y)
    np.testing.assert_allclose(y.numpy()[:, 0], np.einsum("ikn,kn->i", w, x), rtol=1e-5)


def test_tensor_compute_reads_a_cache_and_bounds_its_slices():
    A = te.placeholder((4, 8), name="A")
    B = te.placeholder((4, 8), name="B")
    P = te.compute((4, 8), lambda i, j: A[i, j] * 2.0, name="P")
    vadd = _vadd_intrin(8)
    C = te.compute((2, 8), lambda i: vadd(P[i + 1, 0:8], B[i, 0:8]), name="C")
    s = te.create_schedule(C.op)
    PP = s.cache_read(P, "local", [C])
    s[PP].compute_at(s[C], C.op.axis[0])
    bounds = te.schedule.InferBound(s)
    assert int(bounds[PP.op.axis[0]].extent) == 1 and int(bounds[PP.op.axis[1]].extent) == 8
    assert int(bounds[P.op.axis[0]].extent) == 2  # rows 1 and 2 only
    f = kiln.build(s, [A, B, C])
    rng = np.random.default_rng(4)
    a, b = rng.random((4, 8), dtype="float32"), rng.random((4, 8), dtype="float32")
    c = kiln.nd.array(np.zeros((2, 8), "float32"))
    f(kiln.nd.array(a), kiln.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a[1:3] * 2 + b[:2], rtol=1e-6)
