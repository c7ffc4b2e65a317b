"""kiln.script: scripted PrimFuncs parse into the TIR a builder would make, build, and compute what numpy does."""

import numpy as np
import pytest

import kiln
from kiln import tir
from kiln.error import TIRError
from kiln.ir import assert_structural_equal
from kiln.script import ir as I  # noqa: N812
from kiln.script import tir as T  # noqa: N812


def _run(func, *arrays, target="llvm"):
    f = kiln.build(func, target=target)
    nds = [kiln.nd.array(a) for a in arrays]
    f(*nds)
    return [n.numpy() for n in nds]


def test_loop_and_store_match_hand_built_tir():
    @T.prim_func
    def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = A[i] + T.float32(1)

    a_buf = tir.decl_buffer((8,), "float32", "A")
    b_buf = tir.decl_buffer((8,), "float32", "B")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    i = tir.Var("i", "int32")
    body = tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.BufferStore(b_buf, a_buf[i] + tir.const(1, "float32"), [i]))
    expected = tir.PrimFunc([a, b], body, buffer_map={a: a_buf, b: b_buf}).with_attr("global_symbol", "add_one")
    assert_structural_equal(add_one, expected)
    x = np.random.rand(8).astype("float32")
    _, y = _run(add_one, x, np.zeros(8, "float32"))
    np.testing.assert_allclose(y, x + 1)


def test_match_buffer_symbolic_shape_let_and_if():
    @T.prim_func
    def clip(a: T.handle, b: T.handle, lo: T.float32):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in T.parallel(n):
            x = A[i] * T.float32(2)
            if x < lo:
                B[i] = lo
            else:
                B[i] = T.max(x, lo)

    assert isinstance(clip.body, tir.For) and clip.body.kind == tir.ForKind.PARALLEL
    assert isinstance(clip.body.body, tir.LetStmt)
    f = kiln.build(clip, target="llvm")
    x = np.random.randn(13).astype("float32")
    y = kiln.nd.empty((13,), "float32")
    f(kiln.nd.array(x), y, 0.25)
    np.testing.assert_allclose(y.numpy(), np.maximum(x * 2, 0.25), rtol=1e-6)


def test_allocate_grid_and_intrinsics():
    @T.prim_func
    def softplus_rows(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"tir.noalias": True})
        acc = T.allocate([1], "float32", "local")
        acc_buf = T.Buffer((1,), "float32", data=acc, scope="local")
        for i in range(4):
            acc_buf[0] = T.float32(0)
            for j in range(6):
                acc_buf[0] = acc_buf[0] + T.log(T.float32(1) + T.exp(A[i, j]))
            B[i] = T.Select(acc_buf[0] > T.float32(100), T.float32(100), acc_buf[0])

    assert isinstance(softplus_rows.body, tir.Allocate)
    x = np.random.randn(4, 6).astype("float32")
    _, y = _run(softplus_rows, x, np.zeros(4, "float32"))
    np.testing.assert_allclose(y, np.minimum(np.log1p(np.exp(x)).sum(1), 100), rtol=1e-5)


def test_matmul_block_with_init_runs():
    @T.prim_func
    def matmul(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, [16, 8])
        B = T.match_buffer(b, [12, 8])
        C = T.match_buffer(c, [16, 12])
        for i, j, k in T.grid(16, 12, 8):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]

    root = matmul.body
    assert isinstance(root, tir.BlockRealize) and root.block.name_hint == "root"
    update = root.block.body.body.body.body.block
    # as TVM's region detector: a block with init does not list the buffer it writes among its reads
    assert [r.buffer.name for r in update.reads] == ["A", "B"]
    assert [int(iv.iter_type) for iv in update.iter_vars] == [0, 0, 2]
    a = np.random.rand(16, 8).astype("float32")
    b = np.random.rand(12, 8).astype("float32")
    for target in ("llvm", "c"):
        *_, c = _run(matmul, a, b, np.full((16, 12), 7, "float32"), target=target)
        np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)


def test_block_alloc_buffer_predicate_and_explicit_regions():
    @T.prim_func
    def two_stage(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
        B = T.alloc_buffer((10,), "float32")
        for io, ii in T.grid(3, 4):
            with T.block("B"):
                vi = T.axis.spatial(10, io * 4 + ii)
                T.where(io * 4 + ii < 10)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(3)
        for i in range(10):
            with T.block("C"):
                vi = T.axis.spatial(10, i)
                C[vi] = B[vi] + T.float32(1)

    assert two_stage.body.block.alloc_buffers[0].name == "B"
    x = np.random.rand(10).astype("float32")
    _, y = _run(two_stage, x, np.zeros(10, "float32"))
    np.testing.assert_allclose(y, x * 3 + 1, rtol=1e-6)


def test_inner_loop_region_is_relaxed():
    @T.prim_func
    def rowsum(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("row"):
                vi = T.axis.spatial(4, i)
                B[vi] = T.float32(0)
                for k in range(8):
                    B[vi] = B[vi] + A[vi, k]

    block = rowsum.body.block.body.body.block
    (a_read,) = [r for r in block.reads if r.buffer.name == "A"]
    assert int(a_read.region[1].min) == 0 and int(a_read.region[1].extent) == 8
    x = np.random.rand(4, 8).astype("float32")
    _, y = _run(rowsum, x, np.zeros(4, "float32"))
    np.testing.assert_allclose(y, x.sum(1), rtol=1e-5)


def test_ir_module_class_and_closure_values():
    n = 6

    @I.ir_module
    class Module:
        @T.prim_func
        def scale(A: T.Buffer((n,), "float32")):
            for i in T.serial(n):
                A[i] = A[i] * T.float32(2)

        @T.prim_func(private=True)
        def helper(A: T.Buffer((n,), "float32")):
            for i in T.vectorized(n):
                A[i] = T.float32(0)

    assert sorted(gv.name_hint for gv in Module.get_global_vars()) == ["helper", "scale"]
    assert Module["scale"].attrs["global_symbol"] == "scale"
    assert "global_symbol" not in Module["helper"].attrs


def test_python_if_is_decided_while_parsing():
    relu = True

    @T.prim_func
    def act(A: T.Buffer((4,), "float32")):
        for i in range(4):
            if relu:
                A[i] = T.max(A[i], T.float32(0))
            else:
                A[i] = A[i]

    assert isinstance(act.body.body, tir.BufferStore)
    assert isinstance(act.body.body.value, tir.Max)


def test_errors_name_the_line():
    with pytest.raises(TIRError, match="not defined"):
        @T.prim_func
        def bad(A: T.Buffer((4,), "float32")):
            A[0] = undefined_name  # noqa: F821

    with pytest.raises(TIRError, match="type annotation"):
        @T.prim_func
        def bad2(A):
            pass


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_function_returning_a_value(target):
    @T.prim_func
    def add_i8(x: T.int8, y: T.int8) -> T.int8:
        T.evaluate(T.ret(x + y, dtype="int8"))

    @T.prim_func
    def div_f32(x: T.float32, y: T.float32) -> T.float32:
        T.evaluate(T.ret(x / y))

    @T.prim_func
    def less(x: T.int32, y: T.int32) -> T.bool:
        T.evaluate(T.ret(x < y))

    rng = np.random.default_rng(0)
    f = kiln.build(add_i8, target=target)
    for x, y in rng.integers(-128, 128, size=(8, 2)):
        assert f(int(x), int(y)) == (int(x) + int(y) + 128) % 256 - 128  # int8 arithmetic wraps
    assert f(127, 1) == -128  # int8 wraps, as numpy's int8 does
    g = kiln.build(div_f32, target=target)
    assert g(1.0, 4.0) == 0.25
    h = kiln.build(less, target=target)
    assert h(1, 2) is True and h(3, 2) is False


def test_meta_var_binds_a_python_value():
    @T.prim_func
    def fill(a: T.handle):
        n = T.meta_var(6)
        A = T.match_buffer(a, (n,), "int32")
        for i in range(n):
            A[i] = i * n

    assert int(fill.buffer_map[fill.params[0]].shape[0]) == 6
    assert isinstance(fill.body, tir.For)  # no LetStmt for n
    np.testing.assert_array_equal(_run(fill, np.zeros(6, "int32"))[0], np.arange(6) * 6)


def test_if_then_else_dtype_call_packed_and_target():
    @T.prim_func
    def pick(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"target": T.target("llvm")})
        for i in range(4):
            B[i] = T.if_then_else(i < 2, A[i], 0, dtype="float32")

    assert str(pick.attrs["target"]).startswith("llvm")
    x = np.random.rand(4).astype("float32")
    _, y = _run(pick, x, np.ones(4, "float32"))
    np.testing.assert_allclose(y, np.where(np.arange(4) < 2, x, 0))
    call = T.tvm_call_packed("my.func", T.int32(1))
    assert call.op.name == "tir.tvm_call_packed" and call.args[0].value == "my.func"
