"""kiln.build (kiln/target/build.py) on TE programs, for both targets, checked against numpy: vector add, matmul
(split/reorder/vectorize/parallel and the packed, tiled schedule), reductions, softmax, 2-D convolution, unrolled and
vectorized loops, integer dtypes, symbolic shapes; and the forms kiln.build accepts."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import KilnError
from kiln.te.examples import matmul_schedule
from kiln.tir.stmt_functor import pre_order_visit

RNG = np.random.default_rng(0)


def rand(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def nd(*arrays):
    return [kiln.nd.array(a) for a in arrays]


def test_vector_add(target):
    n = 1024
    A, B = te.placeholder((n,), name="A"), te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=64)
    s[C].parallel(xo)
    s[C].vectorize(xi)
    m = kiln.build(s, [A, B, C], target=target, name="vadd")
    a, b, c = nd(rand(n), rand(n), np.zeros(n, "float32"))
    m["vadd"](a, b, c)
    np.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy())
    m(a, b, c)  # the entry function
    assert m.entry_name == "vadd"


def _matmul(M, N, K, dtype="float32"):
    A = te.placeholder((M, K), dtype, name="A")
    B = te.placeholder((K, N), dtype, name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C, k


def test_matmul_split_reorder_vectorize_parallel(target):
    M, N, K = 64, 48, 40
    A, B, C, k = _matmul(M, N, K)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    yo, yi = s[C].split(C.op.axis[1], factor=16)
    ko, ki = s[C].split(k, factor=4)
    s[C].reorder(xo, yo, ko, ki, xi, yi)
    s[C].parallel(xo)
    s[C].vectorize(yi)
    m = kiln.build(s, [A, B, C], target=target, name="mm")
    a, b = rand(M, K), rand(K, N)
    c = kiln.nd.empty((M, N))
    m["mm"](*nd(a, b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bn, mr", [(16, 4), (32, 6), (8, 2)])
def test_packed_tiled_matmul_schedule(target, bn, mr):
    M, N, K = 60, 64, 37  # M not a multiple of mr: guarded tails
    s, args = matmul_schedule(M, N, K, bn=bn, mr=mr)
    m = kiln.build(s, args, target=target, name="mm")
    a, b = rand(M, K), rand(K, N)
    c = kiln.nd.empty((M, N))
    m["mm"](*nd(a, b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
def test_integer_matmul_and_reduction(target, dtype):
    M, N, K = 16, 32, 24
    A, B, C, k = _matmul(M, N, K, dtype)
    s = te.create_schedule(C.op)
    yo, yi = s[C].split(C.op.axis[1], factor=8)
    s[C].reorder(C.op.axis[0], yo, k, yi)
    s[C].vectorize(yi)
    m = kiln.build(s, [A, B, C], target=target, name="imm")
    a = RNG.integers(-5, 5, (M, K)).astype(dtype)
    b = RNG.integers(-5, 5, (K, N)).astype(dtype)
    c = kiln.nd.empty((M, N), dtype)
    m(*nd(a, b), c)
    np.testing.assert_array_equal(c.numpy(), (a.astype("int64") @ b.astype("int64")).astype(dtype))


@pytest.mark.parametrize("reducer, ref", [("sum", np.sum), ("max", np.max), ("min", np.min)])
def test_row_reductions(target, reducer, ref):
    A = te.placeholder((33, 70), name="A")
    k = te.reduce_axis((0, 70), name="k")
    B = te.compute((33,), lambda i: getattr(te, reducer)(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(k, factor=16)  # a non-dividing split of the reduction axis
    s[B].parallel(B.op.axis[0])
    m = kiln.build(s, [A, B], target=target, name="red")
    a = rand(33, 70)
    b = kiln.nd.empty((33,))
    m(*nd(a), b)
    np.testing.assert_allclose(b.numpy(), ref(a, axis=1), rtol=1e-5, atol=1e-5)


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
def test_softmax(target, per_row):
    A, mx, e, total, out = _softmax(37, 100)
    s = te.create_schedule(out.op)
    if per_row:
        for t in (mx, e, total):
            s[t].compute_at(s[out], out.op.axis[0])
        s[out].parallel(out.op.axis[0])
        jo, ji = s[out].split(out.op.axis[1], factor=16)
        s[out].vectorize(ji)
    m = kiln.build(s, [A, out], target=target, name="softmax")
    a = rand(37, 100) * 4
    o = kiln.nd.empty((37, 100))
    m(*nd(a), o)
    ref = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(o.numpy(), ref / ref.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_conv2d_with_padding(target):
    N, C, H, W, F, KH, KW, P = 2, 8, 14, 13, 16, 3, 3, 1
    data = te.placeholder((N, C, H, W), name="data")
    w = te.placeholder((F, C, KH, KW), name="w")
    pad = te.compute((N, C, H + 2 * P, W + 2 * P), lambda n, c, y, x: tir.if_then_else(
        tir.all(y >= P, y < H + P, x >= P, x < W + P), data[n, c, y - P, x - P], tir.const(0.0, "float32")),
        name="pad")
    rc, ry, rx = te.reduce_axis((0, C), "rc"), te.reduce_axis((0, KH), "ry"), te.reduce_axis((0, KW), "rx")
    conv = te.compute((N, F, H, W), lambda n, f, y, x: te.sum(pad[n, rc, y + ry, x + rx] * w[f, rc, ry, rx],
                                                              axis=[rc, ry, rx]), name="conv")
    s = te.create_schedule(conv.op)
    n_, f_, y_, x_ = conv.op.axis
    fused = s[conv].fuse(n_, f_)
    s[conv].parallel(fused)
    s[pad].compute_inline()
    s[conv].unroll(rx)
    m = kiln.build(s, [data, w, conv], target=target, name="conv2d")
    d, wt = rand(N, C, H, W), rand(F, C, KH, KW)
    out = kiln.nd.empty((N, F, H, W))
    m(*nd(d, wt), out)
    dp = np.pad(d, ((0, 0), (0, 0), (P, P), (P, P)))
    ref = np.zeros((N, F, H, W), "float32")
    for y in range(H):
        for x in range(W):
            ref[:, :, y, x] = np.einsum("ncij,fcij->nf", dp[:, :, y:y + KH, x:x + KW], wt)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)


def test_unrolled_and_vectorized_loops(target):
    n = 96
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: te.sqrt(te.fabs(A[i])) * 2.0 + te.exp(A[i] * 0.1), name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=32)
    xio, xii = s[B].split(xi, factor=8)
    s[B].unroll(xio)
    s[B].vectorize(xii)
    mod = kiln.lower(s, [A, B], name="uv")
    vectors = []
    pre_order_visit(mod["uv"].body, lambda x: vectors.append(x) if isinstance(x, tir.Ramp) else None)
    assert vectors, "the vectorized loop became Ramp vector code"
    m = kiln.build(s, [A, B], target=target, name="uv")
    a = rand(n)
    b = kiln.nd.empty((n,))
    m(*nd(a), b)
    np.testing.assert_allclose(b.numpy(), np.sqrt(np.abs(a)) * 2 + np.exp(a * 0.1), rtol=1e-6)


def test_symbolic_shapes(target):
    n = te.var("n")
    A = te.placeholder((n, 3), name="A")
    B = te.compute((n, 3), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    s = te.create_schedule(B.op)
    fused = s[B].fuse(*B.op.axis)
    xo, xi = s[B].split(fused, factor=8)
    s[B].vectorize(xi)
    s[B].parallel(xo)
    m = kiln.build(s, [A, B], target=target, name="affine")
    for size in (1, 5, 77):
        a = rand(size, 3)
        b = kiln.nd.empty((size, 3))
        m(*nd(a), b)
        np.testing.assert_allclose(b.numpy(), a * 2 + 1, rtol=1e-6)


def test_scalar_argument(target):
    n = te.var("n")
    alpha = te.var("alpha", "float32")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * alpha, name="B")
    s = te.create_schedule(B.op)
    m = kiln.build(s, [A, B, alpha], target=target, name="scale")
    a = rand(10)
    b = kiln.nd.empty((10,))
    m(*nd(a), b, 0.5)
    np.testing.assert_allclose(b.numpy(), a * 0.5)


def test_build_accepts_module_prim_func_and_target_objects(target):
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    mod = kiln.lower(s, [A, B], name="addone")
    a = rand(16)
    built_twice = (kiln.build(mod, target=kiln.target.Target(target)),
                   kiln.build(mod["addone"], target=target, name="addone"))
    for built in built_twice:
        b = kiln.nd.empty((16,))
        built["addone"](*nd(a), b)
        np.testing.assert_allclose(b.numpy(), a + 1)
    unnamed = kiln.build(mod["addone"], target=target)  # a PrimFunc is named after `name`, as in TVM
    assert unnamed.list_functions() == ["default_function"]
    with kiln.target.Target(target):
        current = kiln.build(s, [A, B], name="addone")
    assert current.type_key == target
    assert current.get_source() != ""


def test_default_target_is_llvm():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 3.0, name="B")
    m = kiln.build(te.create_schedule(B.op), [A, B], name="triple")
    assert m.type_key == "llvm"
    assert "define" in m.get_source()


def test_build_errors():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 3.0, name="B")
    s = te.create_schedule(B.op)
    with pytest.raises(KilnError, match="needs `args`"):
        kiln.build(s, target="c")
    with pytest.raises(KilnError, match="target kind 'cuda' is not supported"):
        kiln.build(s, [A, B], target="cuda")
    with pytest.raises(KilnError, match="unknown target kind 'tpu'"):
        kiln.build(s, [A, B], target="tpu")
    with pytest.raises(KilnError, match="expected a te.Schedule, tir.PrimFunc or IRModule, got str"):
        kiln.build("not a schedule", [A, B])
    x = kiln.relay.var("x", shape=(2,))
    with pytest.raises(KilnError, match="only tir.PrimFuncs can be compiled"):
        kiln.build(kiln.IRModule.from_expr(x + x), target="c")


def test_float16_and_bool_tensors(target):
    n = 64
    A = te.placeholder((n,), "float16", name="A")
    B = te.placeholder((n,), "float16", name="B")
    C = te.compute((n,), lambda i: A[i] * B[i] + A[i], name="C")
    D = te.compute((n,), lambda i: C[i] > tir.const(0.5, "float16"), name="D")
    F = te.compute((n,), lambda i: tir.Select(D[i], tir.const(1, "int32"), tir.const(-1, "int32")), name="F")
    s = te.create_schedule(F.op)
    for t in (C, D, F):
        xo, xi = s[t].split(t.op.axis[0], factor=8)
        s[t].vectorize(xi)
    m = kiln.build(s, [A, B, C, D, F], target=target, name="half")
    a, b = RNG.random(n).astype("float16"), RNG.random(n).astype("float16")
    c, d, f = np.zeros(n, "float16"), np.zeros(n, "bool"), np.zeros(n, "int32")
    m(a, b, c, d, f)
    np.testing.assert_array_equal(c, a * b + a)  # one rounding per operation, as numpy
    np.testing.assert_array_equal(d, c > np.float16(0.5))
    np.testing.assert_array_equal(f, np.where(d, 1, -1))  # bool vectors read back from memory


def test_lowered_module_is_not_lowered_again(target):
    """kiln.build(kiln.lower(s, args)) runs only the build passes; a function changed since, or written by hand
    (2-D buffer accesses), goes through kiln.lower's passes first."""
    from kiln.ir.instrument import pass_instrument

    @pass_instrument
    class Record:
        def __init__(self):
            self.names = []

        def run_before_pass(self, mod, info):
            self.names.append(info.name)

    A = te.placeholder((8, 8), name="A")
    B = te.compute((8, 8), lambda i, j: A[i, j] * 2.0, name="B")
    s = te.create_schedule(B.op)
    s[B].vectorize(B.op.axis[1])
    mod = kiln.lower(s, [A, B], name="double")
    a = rand(8, 8)
    for inputs, lowered_again in ((mod, False), (mod["double"], False),
                                  (mod["double"].with_attr("note", 1), True),
                                  (kiln.te.schedule_to_prim_func(s, [A, B], "double"), True)):
        rec = Record()
        with kiln.transform.PassContext(instruments=[rec]):
            m = kiln.build(inputs, target=target, name="double")
        assert ("tir.Simplify" in rec.names) == lowered_again
        assert "tir.MakePackedAPI" in rec.names
        b = kiln.nd.empty((8, 8))
        m["double"](*nd(a), b)
        np.testing.assert_allclose(b.numpy(), a * 2)


def test_vectorized_padding_guard(target):
    """A padding stage (a guarded load whose condition is the row's) vectorizes to an if_then_else over vectors;
    both code generators branch, so the out-of-bounds side is never loaded."""
    A = te.placeholder((6, 16), name="A")
    B = te.compute((8, 16), lambda i, j: te.if_then_else(tir.all(i >= 1, i < 7), A[i - 1, j], -1.0), name="B")
    s = te.create_schedule(B.op)
    s[B].vectorize(B.op.axis[1])
    mod = kiln.lower(s, [A, B], name="pad")
    stores = []
    pre_order_visit(mod["pad"].body, lambda n: stores.append(n) if isinstance(n, tir.BufferStore) else None)
    assert [st.value.dtype for st in stores] == ["float32x16"]
    m = kiln.build(mod, target=target)
    a, b = rand(6, 16), kiln.nd.empty((8, 16))
    m["pad"](*nd(a), b)
    np.testing.assert_allclose(b.numpy(), np.concatenate([-np.ones((1, 16)), a, -np.ones((1, 16))]))
