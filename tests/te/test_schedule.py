"""Schedules: stages, loop relations, annotations, placement, cache stages, and their errors (kiln/te/schedule.py,
schedule_cache.py)."""

import pytest

import kiln
from kiln import te
from kiln.error import TIRError


def _matmul(n=16):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C, k


def names(stage):
    return [iv.var.name_hint for iv in stage.leaf_iter_vars]


def test_create_schedule_has_a_stage_per_operation():
    A, B, C, k = _matmul()
    s = te.create_schedule(C.op)
    assert [st.op for st in s.stages] == [A.op, B.op, C.op]
    assert s[C] is s[C.op] and s[C].is_output and not s[A].is_output
    assert names(s[C]) == ["i", "j", "k"]
    assert te.create_schedule([C.op]).outputs == [C.op]


def test_split_names_and_leaf_order():
    A, B, C, k = _matmul()
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    io, ii = s[C].split(i, factor=4)
    assert names(s[C]) == ["i.outer", "i.inner", "j", "k"]
    jo, ji = s[C].split(j, nparts=2)
    assert names(s[C]) == ["i.outer", "i.inner", "j.outer", "j.inner", "k"]
    assert len(s[C].relations) == 2 and s[C].relations[1].nparts.value == 2
    assert len(s[C].all_iter_vars) == 7


def test_reorder_puts_axes_in_given_order_at_their_positions():
    A, B, C, k = _matmul()
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    io, ii = s[C].split(i, factor=4)
    s[C].reorder(k, ii)
    assert names(s[C]) == ["i.outer", "k", "j", "i.inner"]


def test_tile():
    A, B, C, k = _matmul()
    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 8)
    assert names(s[C]) == ["i.outer", "j.outer", "i.inner", "j.inner", "k"]
    assert (xo, yo, xi, yi) == tuple(s[C].leaf_iter_vars[:4])


def test_fuse_adjacent_axes():
    A, B, C, k = _matmul()
    s = te.create_schedule(C.op)
    f = s[C].fuse(*C.op.axis)
    assert names(s[C]) == ["i.j.fused", "k"]
    assert s[C].fuse(f) is f


def test_fuse_errors():
    A, B, C, k = _matmul()
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    # a data-parallel and a reduction axis fuse into a reduction axis, as in TVM (not an error)
    jk = s[C].fuse(j, k)
    assert jk.iter_type == kiln.tir.IterVar.CommReduce
    io, ii = s[C].split(i, factor=4)
    with pytest.raises(TIRError, match="not adjacent"):
        s[C].fuse(io, jk)


def test_split_errors():
    A, B, C, k = _matmul()
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    s[C].split(i, factor=4)
    with pytest.raises(TIRError, match="split of stage C: i is not a loop"):
        s[C].split(i, factor=2)
    with pytest.raises(TIRError, match="exactly one of factor and nparts"):
        s[C].split(j)
    with pytest.raises(TIRError, match="must be positive"):
        s[C].split(j, factor=0)
    with pytest.raises(TIRError, match="not a compute stage"):
        s[A].split(C.op.axis[0], factor=2)


def test_annotations():
    A, B, C, k = _matmul()
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    s[C].parallel(i)
    s[C].vectorize(j)
    s[C].unroll(k)
    kinds = {iv: attr.iter_type for iv, attr in s[C].iter_var_attrs.items()}
    assert kinds == {i: te.IterVar.Parallelized, j: te.IterVar.Vectorized, k: te.IterVar.Unrolled}
    with pytest.raises(TIRError, match="reduction axis"):
        s[C].parallel(k)


def test_compute_at_inline_root():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((8,), lambda i: B[i] * 2.0, name="C")
    s = te.create_schedule(C.op)
    s[B].compute_at(s[C], C.op.axis[0])
    assert s[B].attach_type == "scope" and s[B].attach_stage is s[C] and s[B].attach_ivar is C.op.axis[0]
    s[B].compute_inline()
    assert s[B].attach_type == "inline"
    s[B].compute_root()
    assert s[B].attach_type == "root"
    with pytest.raises(TIRError, match="not an axis of stage C"):
        s[B].compute_at(s[C], B.op.axis[0])
    with pytest.raises(TIRError, match="output of the schedule"):
        s[C].compute_inline()
    s[C].compute_at(s[C], C.op.axis[0])  # refused when lowered, as in TVM
    with pytest.raises(TIRError, match="attached to itself"):
        kiln.lower(s, [A, C])
    s[C].compute_root()
    s[B].compute_at(s[C], C.op.axis[0])
    s[C].compute_at(s[B], B.op.axis[0])
    with pytest.raises(TIRError, match="cycle"):
        kiln.lower(s, [A, C])


def test_compute_inline_of_reduction_is_refused():
    A, B, C, k = _matmul()
    D = te.compute((16, 16), lambda i, j: C[i, j] + 1.0, name="D")
    s = te.create_schedule(D.op)
    with pytest.raises(TIRError, match="reduction and cannot be inlined"):
        s[C].compute_inline()


def test_cache_write_splits_the_stage():
    A, B, C, k = _matmul()
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "local")
    assert CC.op.name == "C.local" and s[CC].scope == "local"
    assert [iv.var.name_hint for iv in CC.op.axis] == ["i.c", "j.c"] and CC.op.reduce_axis == (k,)
    assert s[C].op is not C.op and s[C].origin_op is C.op
    assert s[C].op.axis == C.op.axis and s[C].op.reduce_axis == ()
    assert s.stages.index(s[CC]) == s.stages.index(s[C]) - 1
    assert names(s[C]) == ["i", "j"]


def test_cache_read_redirects_readers():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((8,), lambda i: A[i] * 2.0, name="C")
    D = te.compute((8,), lambda i: B[i] + C[i], name="D")
    s = te.create_schedule(D.op)
    AA = s.cache_read(A, "local", [B])
    assert AA.op.name == "A.local" and s[AA].scope == "local"
    assert s[B].op.input_tensors == [AA]
    assert s[C].op.input_tensors == [A]
    assert s.stages.index(s[AA]) == s.stages.index(s[A]) + 1


def test_unknown_stage():
    A, B, C, k = _matmul()
    s = te.create_schedule(C.op)
    other = te.placeholder((2,), name="other")
    with pytest.raises(TIRError, match="other is not an operation of this schedule"):
        s[other]


def test_pragma_bind_and_singleton_in_the_loop_nest():
    import numpy as np

    import kiln
    from kiln.tir import stmt as S
    from kiln.tir.stmt_functor import post_order_visit

    A = te.placeholder((100,), name="A")
    T = te.compute((100,), lambda i: A[i] * 3.0, name="T")
    s = te.create_schedule(T.op)
    xo, xi = s[T].split(T.op.axis[0], factor=10)
    s[T].pragma(xo, "my_hint", 7)
    s[T].pragma(xi, "unroll")
    assert s[T].iter_var_attrs[xo].pragma_keys[0].value == "my_hint"
    assert s[T].iter_var_attrs[xi].iter_type == te.IterVar.Unrolled
    attrs = []
    post_order_visit(kiln.lower(s, [A, T])["main"].body,
                     lambda n: attrs.append((n.attr_key, n.value.value)) if isinstance(n, S.AttrStmt) else None)
    assert ("pragma_my_hint", 7) in attrs
    f = kiln.build(s, [A, T], "llvm")
    a, t = kiln.nd.array(np.random.uniform(size=100).astype("float32")), kiln.nd.empty((100,), "float32")
    f(a, t)
    np.testing.assert_allclose(t.numpy(), a.numpy() * 3.0, rtol=1e-6)

    s = te.create_schedule(T.op)
    bx, tx = s[T].split(T.op.axis[0], factor=25)
    s[T].bind(bx, te.thread_axis("blockIdx.x"))
    s[T].bind(tx, te.thread_axis("threadIdx.x"))
    extents = {}
    post_order_visit(kiln.lower(s, [A, T])["main"].body,
                     lambda n: extents.__setitem__(n.node.thread_tag, n.value.value)
                     if isinstance(n, S.AttrStmt) and n.attr_key == "thread_extent" else None)
    assert extents == {"blockIdx.x": 4, "threadIdx.x": 25}
    with pytest.raises(TIRError, match="thread axis"):
        s[T].bind(bx, bx)

    S0 = te.compute((), lambda: A[0] + 1.0, name="S0")
    s = te.create_schedule(S0.op)
    single = s[S0].fuse()
    assert isinstance(s[S0].relations[0], te.Singleton) and s[S0].leaf_iter_vars == [single]
    f = kiln.build(s, [A, S0], "llvm")
    out = kiln.nd.empty((), "float32")
    f(a, out)
    assert out.numpy() == a.numpy()[0] + 1.0


def test_vectorizing_a_reduction_axis_is_refused():
    A, B, C, k = _matmul()
    s = te.create_schedule(C.op)
    with pytest.raises(TIRError, match="reduction axis"):
        s[C].vectorize(k)


def test_cache_write_of_a_reduction_whose_length_and_reducer_read_the_output_axis():
    import numpy as np

    X = te.placeholder((10,), name="x")

    def row(i):
        rv = te.reduce_axis((0, i), name="rv")
        init = lambda dtype: kiln.tir.Select(i > 1, kiln.tir.const(0, dtype), i.astype(dtype))  # noqa: E731
        acc = te.comm_reducer(lambda a, b: te.max(a + b, i.astype("float32")), init, name="acc")
        return acc(X[rv], axis=rv)

    Y = te.compute((10,), row, name="y")
    s = te.create_schedule(Y.op)
    s.cache_write(Y, "local")
    f = kiln.build(s, [X, Y])
    x = np.random.default_rng(0).normal(size=10).astype("float32")
    y = kiln.nd.array(np.zeros(10, "float32"))
    f(kiln.nd.array(x), y)
    want = []
    for i in range(10):
        v = np.float32(0 if i > 1 else i)
        for k in range(i):
            v = max(v + x[k], np.float32(i))
        want.append(v)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)


def test_fusing_a_data_axis_with_a_reduction_axis_makes_a_reduction_loop_that_runs():
    import numpy as np

    X = te.placeholder((6,), name="X")
    Y = te.placeholder((5, 6), name="Y")
    k = te.reduce_axis((0, 6), name="k")
    Z = te.compute((5,), lambda i: te.sum(X[k] * Y[i, k], axis=k), name="Z")
    s = te.create_schedule(Z.op)
    fused = s[Z].fuse(Z.op.axis[0], k)
    assert fused.iter_type == kiln.tir.IterVar.CommReduce
    f = kiln.build(s, [X, Y, Z])
    rng = np.random.default_rng(6)
    x, y = rng.random(6, dtype="float32"), rng.random((5, 6), dtype="float32")
    z = kiln.nd.array(np.full(5, 7.0, "float32"))
    f(kiln.nd.array(x), kiln.nd.array(y), z)
    np.testing.assert_allclose(z.numpy(), y @ x, rtol=1e-5)
