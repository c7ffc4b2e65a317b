"""kiln.lower on scheduled tensor expressions: the loop nests it prints, and the results of running them with the TIR
evaluator against numpy (kiln/te/lower.py, schedule_ops.py)."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import TIRError
from kiln.tir.evaluator import call_packed, evaluate
from kiln.tir.stmt_functor import pre_order_visit
from kiln.tir.transform import make_packed_api

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def run(s, args, arrays, name="f"):
    """Lower, run on ``arrays`` (written in place), return the PrimFunc."""
    mod = kiln.lower(s, args, name=name)
    func = mod[name]
    if any(not isinstance(d, tir.IntImm) for b in func.buffer_map.values() for d in b.shape):
        assert call_packed(make_packed_api(func), *arrays) == 0  # symbolic sizes are bound from the arrays
    else:
        evaluate(func, *arrays)
    return func


def loops(func):
    """(loop variable, kind, depth) of every For, outermost first."""
    out = []

    def walk(stmt, depth):
        stack = [(stmt, depth)]
        while stack:
            s, d = stack.pop()
            if isinstance(s, tir.For):
                out.append((s.loop_var.name_hint, s.kind, d))
                stack.append((s.body, d + 1))
            elif isinstance(s, tir.SeqStmt):
                stack.extend((c, d) for c in reversed(s.seq))
            elif isinstance(s, tir.IfThenElse):
                stack.extend((c, d) for c in (s.else_case, s.then_case) if c is not None)
            elif isinstance(s, tir.Allocate | tir.LetStmt | tir.AttrStmt):
                stack.append((s.body, d))

    walk(func.body, 0)
    return out


def count(func, kind):
    found = []
    pre_order_visit(func.body, lambda n: found.append(n) if isinstance(n, kind) else None)
    return len(found)


def matmul(M, N, K):
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C, k


# ---- elementwise


def test_vector_add_split_vectorize_parallel():
    n = 64
    A, B = te.placeholder((n,), name="A"), te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    s[C].parallel(xo)
    s[C].vectorize(xi)
    a, b, c = rand(n), rand(n), np.zeros(n, "float32")
    func = run(s, [A, B, C], [a, b, c], name="vadd")
    np.testing.assert_allclose(c, a + b)
    assert loops(func) == [("i.outer", tir.ForKind.PARALLEL, 0)]  # the vectorized loop became vector code
    text = str(kiln.lower(s, [A, B, C], name="vadd"))
    assert "for i_outer in T.parallel(8):" in text
    assert "C[i_outer * 8:i_outer * 8 + 8] = A[i_outer * 8:i_outer * 8 + 8] + B[i_outer * 8:i_outer * 8 + 8]" in text


def test_non_dividing_split_is_guarded():
    n = 37
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 3.0, name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=8)
    s[B].vectorize(xi)
    a, b = rand(n), np.zeros(n, "float32")
    func = run(s, [A, B], [a, b])
    np.testing.assert_allclose(b, a * 3.0, rtol=1e-6)
    text = str(func)
    # whole blocks run as vectors; the block the split overruns stays scalar, over its 5 valid elements only
    assert "B[i_outer * 8:i_outer * 8 + 8] = A[i_outer * 8:i_outer * 8 + 8] * T.Broadcast(T.float32(3.0), 8)" in text
    assert "for i_inner in range(5):\n" in text and "B[i_inner + 32] = A[i_inner + 32]" in text
    assert loops(func) == [("i.outer", tir.ForKind.SERIAL, 0), ("i.inner", tir.ForKind.SERIAL, 1)]


def test_tail_guard_of_an_outer_split_stays_outside_the_vector_loop():
    A = te.placeholder((10, 16), name="A")
    B = te.compute((10, 16), lambda i, j: A[i, j] + 1.0, name="B")
    s = te.create_schedule(B.op)
    xo, yo, xi, yi = s[B].tile(B.op.axis[0], B.op.axis[1], 4, 8)
    s[B].vectorize(yi)
    a, b = rand(10, 16), np.zeros((10, 16), "float32")
    func = run(s, [A, B], [a, b])
    np.testing.assert_allclose(b, a + 1.0)
    assert [name for name, _, _ in loops(func)] == ["i.outer", "j.outer", "i.inner"]
    stores = []
    pre_order_visit(func.body, lambda x: stores.append(x) if isinstance(x, tir.BufferStore) else None)
    assert len(stores) == 1 and isinstance(stores[0].indices[0], tir.Ramp)
    assert "if T.likely(i_outer * 4 + i_inner < 10):" in str(func)


def test_fuse_then_split_by_nparts_with_unroll():
    A = te.placeholder((6, 10), name="A")
    B = te.compute((6, 10), lambda i, j: A[i, j] + 1.0, name="B")
    s = te.create_schedule(B.op)
    f = s[B].fuse(*B.op.axis)
    fo, fi = s[B].split(f, nparts=7)
    s[B].parallel(fo)
    s[B].unroll(fi)
    a, b = rand(6, 10), np.zeros((6, 10), "float32")
    func = run(s, [A, B], [a, b])
    np.testing.assert_allclose(b, a + 1.0)
    assert loops(func) == [("i.j.fused.outer", tir.ForKind.PARALLEL, 0)]  # the inner loop was unrolled
    assert count(func, tir.BufferStore) == 9


def test_multi_output_compute():
    A = te.placeholder((4, 6), name="A")
    P, Q = te.compute((4, 6), lambda i, j: [A[i, j] + 1.0, A[i, j] * 2.0], name="PQ")
    s = te.create_schedule(P.op)
    a, p, q = rand(4, 6), np.zeros((4, 6), "float32"), np.zeros((4, 6), "float32")
    run(s, [A, P, Q], [a, p, q])
    np.testing.assert_allclose(p, a + 1.0)
    np.testing.assert_allclose(q, a * 2.0)


def test_two_outputs_in_one_schedule():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((8,), lambda i: B[i] * 2.0, name="C")
    D = te.compute((8,), lambda i: B[i] - 1.0, name="D")
    s = te.create_schedule([C.op, D.op])
    a, c, d = rand(8), np.zeros(8, "float32"), np.zeros(8, "float32")
    func = run(s, [A, C, D], [a, c, d])
    np.testing.assert_allclose(c, (a + 1.0) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(d, a, atol=1e-6)
    assert count(func, tir.Allocate) == 1  # B, computed once for both


# ---- reductions


def test_matmul_default_schedule():
    A, B, C, _ = matmul(8, 6, 5)
    s = te.create_schedule(C.op)
    a, b, c = rand(8, 5), rand(5, 6), np.zeros((8, 6), "float32")
    func = run(s, [A, B, C], [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert [name for name, _, _ in loops(func)] == ["i", "j", "k"]


def test_matmul_split_reorder_vectorize_parallel():
    A, B, C, k = matmul(32, 32, 16)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    yo, yi = s[C].split(C.op.axis[1], factor=8)
    ko, ki = s[C].split(k, factor=4)
    s[C].reorder(xo, yo, ko, ki, xi, yi)
    s[C].parallel(xo)
    s[C].vectorize(yi)
    a, b, c = rand(32, 16), rand(16, 32), np.zeros((32, 32), "float32")
    func = run(s, [A, B, C], [a, b, c], name="mm")
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert loops(func) == [
        ("i.outer", tir.ForKind.PARALLEL, 0), ("j.outer", tir.ForKind.SERIAL, 1),
        ("i.inner.init", tir.ForKind.SERIAL, 2), ("k.outer", tir.ForKind.SERIAL, 2),
        ("k.inner", tir.ForKind.SERIAL, 3), ("i.inner", tir.ForKind.SERIAL, 4),
    ]
    text = str(kiln.lower(s, [A, B, C], name="mm"))
    lines = [line.strip() for line in text.splitlines()]
    # TVM prints a serial loop as range, and a nest of them as one T.grid
    order = [lines.index(f"for {v} in {kind}({n}):") for v, kind, n in (
        ("i_outer", "T.parallel", 4), ("j_outer", "range", 4), ("k_outer, k_inner, i_inner", "T.grid", "4, 4, 8"))]
    assert order == sorted(order)
    assert "T.Broadcast(A_1[" in text and "B_1[k_outer * 128 + k_inner * 32 + j_outer * 8:" in text  # flat views


def test_matmul_tile_and_unroll():
    A, B, C, k = matmul(16, 16, 8)
    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 4)
    s[C].reorder(xo, yo, k, xi, yi)
    s[C].unroll(xi)
    s[C].vectorize(yi)
    a, b, c = rand(16, 8), rand(8, 16), np.zeros((16, 16), "float32")
    func = run(s, [A, B, C], [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert [name for name, _, _ in loops(func)] == ["i.outer", "j.outer", "k"]


def test_sum_over_an_axis_with_where():
    A = te.placeholder((5, 7), name="A")
    k = te.reduce_axis((0, 7), name="k")
    B = te.compute((5,), lambda i: te.sum(A[i, k], axis=k, where=k % 2 == 0), name="B")
    s = te.create_schedule(B.op)
    a, b = rand(5, 7), np.zeros(5, "float32")
    run(s, [A, B], [a, b])
    np.testing.assert_allclose(b, a[:, ::2].sum(1), rtol=1e-5)


@pytest.mark.parametrize("reducer, ref", [(te.max, np.max), (te.min, np.min)])
def test_max_min_reduction(reducer, ref):
    A = te.placeholder((4, 9), name="A")
    k = te.reduce_axis((0, 9), name="k")
    B = te.compute((4,), lambda i: reducer(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(k, factor=4)  # a non-dividing split of a reduction axis
    a, b = rand(4, 9), np.zeros(4, "float32")
    run(s, [A, B], [a, b])
    np.testing.assert_array_equal(b, ref(a, axis=1))


def test_reduction_over_two_axes_with_init():
    A = te.placeholder((3, 4, 5), name="A")
    r1, r2 = te.reduce_axis((0, 4), "r1"), te.reduce_axis((0, 5), "r2")
    B = te.compute((3,), lambda i: te.sum(A[i, r1, r2], axis=[r1, r2], init=10.0), name="B")
    s = te.create_schedule(B.op)
    a, b = rand(3, 4, 5), np.zeros(3, "float32")
    run(s, [A, B], [a, b])
    np.testing.assert_allclose(b, a.sum((1, 2)) + 10.0, rtol=1e-5)


def test_tuple_reduction_argmax():
    argmax = te.comm_reducer(
        lambda x, y: (tir.Select(x[1] >= y[1], x[0], y[0]), tir.Select(x[1] >= y[1], x[1], y[1])),
        lambda t0, t1: (tir.const(-1, t0), tir.min_value(t1)), name="argmax")
    A = te.placeholder((4, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    idx, val = te.compute((4,), lambda i: argmax((k.var, A[i, k]), axis=k), name="am")
    s = te.create_schedule(idx.op)
    a, ii, vv = rand(4, 6), np.zeros(4, "int32"), np.zeros(4, "float32")
    run(s, [A, idx, val], [a, ii, vv])
    np.testing.assert_array_equal(ii, a.argmax(1))
    np.testing.assert_array_equal(vv, a.max(1))


def _softmax(m, n):
    A = te.placeholder((m, n), name="A")
    k = te.reduce_axis((0, n), "k")
    mx = te.compute((m,), lambda i: te.max(A[i, k], axis=k), name="mx")
    e = te.compute((m, n), lambda i, j: te.exp(A[i, j] - mx[i]), name="e")
    k2 = te.reduce_axis((0, n), "k2")
    total = te.compute((m,), lambda i: te.sum(e[i, k2], axis=k2), name="total")
    out = te.compute((m, n), lambda i, j: e[i, j] / total[i], name="out")
    return A, mx, e, total, out


@pytest.mark.parametrize("per_row", [False, True])
def test_softmax(per_row):
    A, mx, e, total, out = _softmax(4, 10)
    s = te.create_schedule(out.op)
    if per_row:
        for t in (mx, e, total):
            s[t].compute_at(s[out], out.op.axis[0])
        s[out].parallel(out.op.axis[0])
    a, o = rand(4, 10), np.zeros((4, 10), "float32")
    func = run(s, [A, out], [a, o])
    ref = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(o, ref / ref.sum(1, keepdims=True), rtol=1e-5)
    if per_row:  # one row of each intermediate, allocated inside the parallel loop
        assert loops(func)[0] == ("i", tir.ForKind.PARALLEL, 0)
        sizes = []
        pre_order_visit(func.body, lambda x: sizes.append(x.extents[0].value) if isinstance(x, tir.Allocate) else None)
        assert sorted(sizes) == [1, 1, 10]


def _conv2d(N=1, C=2, H=6, W=5, F=3, KH=3, KW=3, P=1):
    data = te.placeholder((N, C, H, W), name="data")
    w = te.placeholder((F, C, KH, KW), name="w")
    pad = te.compute((N, C, H + 2 * P, W + 2 * P), lambda n, c, y, x: tir.if_then_else(
        tir.all(y >= P, y < H + P, x >= P, x < W + P), data[n, c, y - P, x - P], tir.const(0.0, "float32")),
        name="pad")
    rc, ry, rx = te.reduce_axis((0, C), "rc"), te.reduce_axis((0, KH), "ry"), te.reduce_axis((0, KW), "rx")
    conv = te.compute((N, F, H, W), lambda n, f, y, x: te.sum(pad[n, rc, y + ry, x + rx] * w[f, rc, ry, rx],
                                                              axis=[rc, ry, rx]), name="conv")
    d, wt = rand(N, C, H, W), rand(F, C, KH, KW)
    dp = np.pad(d, ((0, 0), (0, 0), (P, P), (P, P)))
    ref = np.zeros((N, F, H, W), "float32")
    for y in range(H):
        for x in range(W):
            ref[:, :, y, x] = np.einsum("ncij,fcij->nf", dp[:, :, y:y + KH, x:x + KW], wt)
    return data, w, pad, conv, d, wt, ref


@pytest.mark.parametrize("placement", ["root", "inline", "compute_at"])
def test_conv2d_with_padding(placement):
    data, w, pad, conv, d, wt, ref = _conv2d()
    s = te.create_schedule(conv.op)
    if placement == "inline":
        s[pad].compute_inline()
    elif placement == "compute_at":
        yo, yi = s[conv].split(conv.op.axis[2], factor=4)  # 6 rows: a tail
        s[pad].compute_at(s[conv], yo)
    out = np.zeros(ref.shape, "float32")
    func = run(s, [data, w, conv], [d, wt, out])
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    allocs = []
    pre_order_visit(func.body, lambda x: allocs.append(x.extents[0].value) if isinstance(x, tir.Allocate) else None)
    assert allocs == {"root": [2 * 8 * 7], "inline": [], "compute_at": [2 * 6 * 7]}[placement]


# ---- placement and caches


def test_compute_at_computes_one_tile():
    A = te.placeholder((16, 16), name="A")
    B = te.compute((16, 16), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((16, 16), lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 8)
    s[B].compute_at(s[C], yo)
    a, c = rand(16, 16), np.zeros((16, 16), "float32")
    func = run(s, [A, C], [a, c])
    np.testing.assert_allclose(c, a * 2.0 + 1.0, rtol=1e-6)
    text = str(func)
    assert 'B = T.allocate([32], "float32", "global")' in text
    assert [name for name, _, _ in loops(func)][:2] == ["i.outer", "j.outer"]


def test_compute_inline_chain_allocates_nothing():
    A = te.placeholder((10,), name="A")
    B = te.compute((10,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((10,), lambda i: B[i] * B[i], name="C")
    D = te.compute((10,), lambda i: C[i] - 2.0, name="D")
    s = te.create_schedule(D.op)
    s[B].compute_inline()
    s[C].compute_inline()
    a, d = rand(10), np.zeros(10, "float32")
    func = run(s, [A, D], [a, d])
    np.testing.assert_allclose(d, (a + 1.0) ** 2 - 2.0, rtol=1e-5)
    assert count(func, tir.Allocate) == 0 and len(loops(func)) == 1


def test_cache_write_accumulates_in_a_local_tile():
    A, B, C, k = matmul(16, 32, 8)
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "local")
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 8)
    s[CC].compute_at(s[C], yo)
    ic, jc = s[CC].op.axis
    s[CC].reorder(k, ic, jc)
    s[CC].unroll(ic)
    s[CC].vectorize(jc)
    s[C].vectorize(yi)
    s[C].parallel(xo)
    a, b, c = rand(16, 8), rand(8, 32), np.zeros((16, 32), "float32")
    func = run(s, [A, B, C], [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    text = str(func)
    assert 'C_local = T.allocate([32], "float32", "local")' in text
    # unrolled rows, constant offsets; the buffer over the allocation prints as a view of it, as in TVM
    assert 'C_local_1 = T.Buffer((32,), "float32", scope="local", data=C_local)' in text
    assert "C_local_1[8:16] = C_local_1[8:16] + T.Broadcast(" in text


def test_cache_read_into_local():
    A = te.placeholder((8, 8), name="A")
    B = te.compute((8, 8), lambda i, j: A[i, j] * 3.0, name="B")
    s = te.create_schedule(B.op)
    AA = s.cache_read(A, "local", [B])
    xo, xi = s[B].split(B.op.axis[0], factor=2)
    s[AA].compute_at(s[B], xo)
    a, b = rand(8, 8), np.zeros((8, 8), "float32")
    func = run(s, [A, B], [a, b])
    np.testing.assert_allclose(b, a * 3.0, rtol=1e-6)
    assert 'A_local = T.allocate([16], "float32", "local")' in str(func)


def test_intermediate_passed_as_argument_is_computed_whole():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((4,), lambda i: B[i * 2] * 2.0, name="C")
    s = te.create_schedule(C.op)
    a, b, c = rand(8), np.zeros(8, "float32"), np.zeros(4, "float32")
    func = run(s, [A, B, C], [a, b, c])
    np.testing.assert_allclose(b, a + 1.0)
    np.testing.assert_allclose(c, (a[::2] + 1.0) * 2.0, rtol=1e-6)
    assert count(func, tir.Allocate) == 0


# ---- symbolic sizes


def test_symbolic_vector_add():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=4)
    s[B].vectorize(xi)
    func = kiln.lower(s, [A, B], name="f")["f"]
    assert "for i_outer in range((n + 3) // 4):" in str(func)
    for size in (1, 8, 13):
        a, b = rand(size), np.zeros(size, "float32")
        assert call_packed(make_packed_api(func), a, b) == 0
        np.testing.assert_allclose(b, a * 2.0)


def test_symbolic_matmul_with_cache_write():
    m, n, kk = te.var("m"), te.var("n"), te.var("k")
    A = te.placeholder((m, kk), name="A")
    B = te.placeholder((kk, n), name="B")
    r = te.reduce_axis((0, kk), "r")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "local")
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 4)
    s[CC].compute_at(s[C], yo)
    s[C].parallel(xo)
    a, b, c = rand(5, 3), rand(3, 6), np.zeros((5, 6), "float32")
    func = run(s, [A, B, C], [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)
    assert 'C_local = T.allocate([16], "float32", "local")' in str(func)


def test_scalar_parameter():
    n = te.var("n")
    alpha = te.var("alpha", "float32")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * alpha, name="B")
    s = te.create_schedule(B.op)
    func = kiln.lower(s, [A, B, alpha], name="scale")["scale"]
    assert func.params[2] is alpha
    a, b = rand(6), np.zeros(6, "float32")
    assert call_packed(make_packed_api(func), a, b, 0.5) == 0
    np.testing.assert_allclose(b, a * 0.5)


# ---- lower itself


def test_lowered_function_shape():
    A, B, C, _ = matmul(4, 4, 4)
    mod = kiln.lower(te.create_schedule(C.op), [A, B, C], name="mm")
    assert isinstance(mod, kiln.IRModule) and [gv.name_hint for gv in mod.get_global_vars()] == ["mm"]
    func = mod["mm"]
    assert isinstance(func, tir.PrimFunc) and func.attrs["global_symbol"] == "mm" and func.attrs["tir.noalias"]
    assert [func.buffer_map[p].name for p in func.params] == ["A", "B", "C"]
    assert [len(func.buffer_map[p].shape) for p in func.params] == [2, 2, 2]
    accesses = []
    kinds = tir.BufferLoad | tir.BufferStore
    pre_order_visit(func.body, lambda x: accesses.append(x) if isinstance(x, kinds) else None)
    assert accesses and all(len(x.indices) == 1 for x in accesses)  # flattened
    assert kiln.lower(te.create_schedule(C.op), [A, B, C])["main"]


def test_binds_give_an_argument_its_buffer():
    A = te.placeholder((4, 4), name="A")
    B = te.compute((4, 4), lambda i, j: A[i, j] + 1.0, name="B")
    Ab = tir.decl_buffer((4, 4), "float32", name="Abuf", strides=(8, 1))
    func = kiln.lower(te.create_schedule(B.op), [A, B], name="f", binds={A: Ab})["f"]
    assert func.buffer_map[func.params[0]] is Ab
    big, b = rand(4, 8), np.zeros((4, 4), "float32")
    evaluate(func, np.ascontiguousarray(big), b)
    np.testing.assert_allclose(b, big[:, :4] + 1.0)


def test_lower_accepts_prim_func_and_module():
    A, B, C, _ = matmul(4, 4, 4)
    from kiln.te.lower import schedule_to_prim_func

    func = schedule_to_prim_func(te.create_schedule(C.op), [A, B, C], "mm")
    assert len(func.buffer_map[func.params[0]].shape) == 2
    lowered = kiln.lower(func, name="mm")["mm"]
    a, b, c = rand(4, 4), rand(4, 4), np.zeros((4, 4), "float32")
    evaluate(lowered, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)
    mod = kiln.lower(kiln.IRModule({"mm": func}))
    assert isinstance(mod["mm"], tir.PrimFunc)


def test_disable_vectorize_config():
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    s[B].vectorize(B.op.axis[0])
    with kiln.transform.PassContext(config={"tir.disable_vectorize": True}):
        func = kiln.lower(s, [A, B], name="f")["f"]
    assert loops(func) == [("i", tir.ForKind.SERIAL, 0)]


def test_lower_errors():
    A, B, C, _ = matmul(4, 4, 4)
    s = te.create_schedule(C.op)
    with pytest.raises(TIRError, match="input .placeholder. but is neither in the arguments"):
        kiln.lower(s, [A, C])
    with pytest.raises(TIRError, match="given twice"):
        kiln.lower(s, [A, B, C, C])
    with pytest.raises(TIRError, match="must be a te.Tensor"):
        kiln.lower(s, [A, B, "C"])
    with pytest.raises(TIRError, match="arguments .* are required"):
        kiln.lower(s)
    with pytest.raises(TIRError, match="expected a te.Schedule"):
        kiln.lower(C)
    alpha = te.var("alpha", "float32")
    D = te.compute((4,), lambda i: A[i, 0] * alpha, name="D")
    with pytest.raises(TIRError, match="variables alpha are used but are not arguments"):
        kiln.lower(te.create_schedule(D.op), [A, D])


def test_is_lowered_marks_what_lower_returns():
    from kiln.te.lower import is_lowered

    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    raw = te.schedule_to_prim_func(s, [A, B], "f")
    assert not is_lowered(raw)
    func = kiln.lower(s, [A, B], name="f")["f"]
    assert is_lowered(func) and not is_lowered(func.with_attr("x", 1)) and not is_lowered(3)
    again = kiln.lower(kiln.IRModule({"f": func}))["f"]
    assert str(again) == str(func) and is_lowered(again)  # lowering is idempotent on its own output


def test_scalar_parameter_after_the_buffer_whose_shape_uses_it():
    """MakePackedAPI binds scalar parameters before buffers (as TVM): B's shape reads x, listed last."""
    import numpy as np

    n, m, x = te.size_var("n"), te.size_var("m"), te.size_var("x")
    A = te.placeholder((n, m), name="A")
    B = te.compute((m, n // x), lambda i, j: A[j, i], name="B")
    f = kiln.build(te.create_schedule(B.op), [A, B, x], "llvm")
    a = np.random.uniform(size=(6, 4)).astype("float32")
    out = kiln.nd.empty((4, 3), "float32")
    f(kiln.nd.array(a), out, 2)
    np.testing.assert_allclose(out.numpy(), a.T[:, :3])
    with pytest.raises(kiln.error.KilnError, match="shape"):
        f(kiln.nd.array(a), kiln.nd.empty((4, 2), "float32"), 2)


def test_lowering_a_prim_func_marks_it_noalias_unless_configured_off():
    from kiln.script import tir as T

    @T.prim_func
    def copy(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i]

    func = kiln.lower(copy)["main"]
    assert func.attrs["tir.noalias"] and func.attrs["global_symbol"] == "main"
    with kiln.transform.PassContext(config={"tir.noalias": False}):
        assert "tir.noalias" not in kiln.lower(copy)["main"].attrs
