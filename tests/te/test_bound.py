"""Bound inference: loop extents, regions of attached stages, guards of non-dividing splits (kiln/te/bound.py)."""

import pytest

import kiln
from kiln import te, tir
from kiln.arith import Analyzer
from kiln.error import TIRError
from kiln.te.bound import ScheduleGraph, infer_bound


def _const(e):
    assert isinstance(e, tir.IntImm), f"{e} is not a constant"
    return e.value


def _equal(a, b):
    return Analyzer().can_prove_equal(a, b)


def test_extents_of_split_and_fuse():
    A = te.placeholder((10, 6), name="A")
    B = te.compute((10, 6), lambda i, j: A[i, j] + 1.0, name="B")
    s = te.create_schedule(B.op)
    i, j = B.op.axis
    io, ii = s[B].split(i, factor=4)
    f = s[B].fuse(ii, j)
    fo, fi = s[B].split(f, nparts=5)
    info = infer_bound(s)[s[B]]
    assert [_const(info.extents[v]) for v in (io, ii, f, fo, fi)] == [3, 4, 24, 5, 5]
    guarded = {iv for iv, _ in info.checks}
    assert i in guarded and f in guarded  # 10 % 4 and 24 % 5 leave tails


def test_dividing_split_has_no_check():
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    s[B].split(B.op.axis[0], factor=4)
    assert infer_bound(s)[s[B]].checks == []


def test_compute_at_region_is_one_tile():
    A = te.placeholder((32, 32), name="A")
    B = te.compute((32, 32), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((32, 32), lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 4)
    s[B].compute_at(s[C], yo)
    info = infer_bound(s)[s[B]]
    ri, rj = (info.root_ranges[iv] for iv in B.op.axis)
    assert _const(ri.extent) == 8 and _const(rj.extent) == 4
    assert _equal(ri.min, xo.var * 8) and _equal(rj.min, yo.var * 4)
    assert info.checks == []


def test_stencil_region_covers_every_read():
    A = te.placeholder((20,), name="A")
    B = te.compute((20,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((18,), lambda i: B[i] + B[i + 2], name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=6)
    s[B].compute_at(s[C], xo)
    rng = infer_bound(s)[s[B]].root_ranges[B.op.axis[0]]
    assert _const(rng.extent) == 8 and _equal(rng.min, xo.var * 6)


def test_region_is_clipped_to_the_domain():
    # a padded read B[i - 1] guarded by if_then_else reaches index -1; B is only computed inside its domain
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((9,), lambda i: tir.if_then_else(i >= 1, B[i - 1], tir.const(0.0, "float32")), name="C")
    s = te.create_schedule(C.op)
    rng = infer_bound(s)[s[B]].root_ranges[B.op.axis[0]]
    assert _const(rng.min) == 0 and _const(rng.extent) == 8


def test_symbolic_extents():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    io, ii = s[B].split(B.op.axis[0], factor=8)
    info = infer_bound(s)[s[B]]
    assert _equal(info.extents[io], (n + 7) // 8) and _const(info.extents[ii]) == 8
    assert len(info.checks) == 1


def test_inlined_stage_has_no_bounds_and_its_reads_pass_through():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((8,), lambda i: B[i] * 2.0, name="C")
    s = te.create_schedule(C.op)
    s[B].compute_inline()
    graph = ScheduleGraph(s)
    assert graph.order == [s[C]]
    assert [load.producer for load in graph.reads[s[C]]] == [A]


def test_reader_outside_the_attach_point_is_an_error():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((8,), lambda i: B[i] * 2.0, name="C")
    D = te.compute((8,), lambda i: B[i] + C[i], name="D")
    s = te.create_schedule(D.op)
    s[B].compute_at(s[C], C.op.axis[0])
    with pytest.raises(TIRError, match="stage D reads it outside that loop"):
        kiln.lower(s, [A, D])


def test_attach_axis_split_or_fused_after_compute_at_follows_it():
    """TVM's LegalizeInvalidAttach: a split moves the attachment to the inner loop, a fuse to the fused loop."""
    import numpy as np

    A = te.placeholder((8, 6), name="A")
    B = te.compute((8, 6), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((8, 6), lambda i, j: B[i, j] * 2.0, name="C")
    a = np.random.uniform(size=(8, 6)).astype("float32")
    for change in ("split", "fuse"):
        s = te.create_schedule(C.op)
        s[B].compute_at(s[C], C.op.axis[1])
        if change == "split":
            s[C].split(C.op.axis[1], factor=2)
        else:
            s[C].fuse(C.op.axis[0], C.op.axis[1])
        f = kiln.build(s, [A, C], "llvm")
        out = kiln.nd.empty((8, 6), "float32")
        f(kiln.nd.array(a), out)
        np.testing.assert_allclose(out.numpy(), (a + 1.0) * 2.0, rtol=1e-6)


def _two_stage(scope):
    A = te.placeholder((64, 64), name="A")
    A1 = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="A1")
    A2 = te.compute((64, 64), lambda i, j: A1[i, j] + 3.0, name="A2")
    s = te.create_schedule(A2.op)
    if scope is not None:
        s[A1].set_scope(scope)
    bx, xi = s[A2].split(A2.op.axis[0], factor=16)
    tx, xi = s[A2].split(xi, nparts=4)
    s[A2].bind(bx, te.thread_axis("blockIdx.x"))
    s[A2].bind(tx, te.thread_axis("threadIdx.x"))
    s[A2].reorder(bx, tx, A2.op.axis[1], xi)
    s[A1].compute_at(s[A2], A2.op.axis[1])
    return s, A1


@pytest.mark.parametrize("scope, rows", [("shared", 16), ("local", 4), (None, 4), ("global", 64), ("warp", 16)])
def test_region_covers_the_threads_sharing_the_storage(scope, rows):
    # shared memory is shared by a block's threads, so it holds their rows; local memory is one thread's (and is
    # what a stage attached under thread loops defaults to); global memory is every block's
    s, A1 = _two_stage(scope)
    bounds = te.schedule.InferBound(s)
    assert int(bounds[A1.op.axis[0]].extent) == rows and int(bounds[A1.op.axis[1]].extent) == 1


def test_a_thread_bound_consumer_loop_keeps_local_storage_per_thread():
    A = te.placeholder((64,), name="A")
    A1 = te.compute((64,), lambda i: A[i] + 1.0, name="A1")
    A2 = te.compute((64,), lambda i: A1[i] * 2.0, name="A2")
    A3 = te.compute((64,), lambda i: A2[i] - 1.0, name="A3")
    s = te.create_schedule(A3.op)
    s[A2].set_scope("shared")
    s[A1].set_scope("local")
    tx_axis = te.thread_axis("threadIdx.x")
    bx, tx = s[A3].split(A3.op.axis[0], factor=32)
    s[A3].bind(bx, te.thread_axis("blockIdx.x"))
    s[A3].bind(tx, tx_axis)
    s[A2].compute_at(s[A3], tx)
    _, xi = s[A2].split(A2.op.axis[0], nparts=1)
    s[A2].bind(xi, tx_axis)
    s[A1].compute_at(s[A3], tx)
    bounds = te.schedule.InferBound(s)
    assert int(bounds[A2.op.axis[0]].extent) == 32 and int(bounds[A1.op.axis[0]].extent) == 1
