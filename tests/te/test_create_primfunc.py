"""te.create_prim_func: tensor expressions to a PrimFunc of blocks (kiln/te/create_primfunc.py), built and run
against numpy, and compared with the TVMScript that spells the same function."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.script import tir as T


def _run(func, *arrays):
    mod = kiln.build(func, target="llvm")
    nds = [kiln.nd.array(a) for a in arrays]
    mod(*nds)
    return [x.numpy() for x in nds]


def _blocks(func):
    found = []
    tir.stmt_functor.post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.Block) else None)
    return found


def test_reduction_then_elementwise_runs_and_allocates_the_intermediate():
    A = te.placeholder((8, 6), name="A")
    B = te.placeholder((5, 6), name="B")
    k = te.reduce_axis((0, 6), "k")
    C = te.compute((8, 5), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
    D = te.compute((8, 5), lambda i, j: C[i, j] * 2.0 + 1.0, name="D")
    func = te.create_prim_func([A, B, D])
    root = func.body.block
    assert root.name_hint == "root" and [b.name for b in root.alloc_buffers] == ["C"]
    c_block = next(b for b in _blocks(func) if b.name_hint == "C")
    assert [iv.iter_type for iv in c_block.iter_vars] == [tir.IterVar.DataPar, tir.IterVar.DataPar,
                                                         tir.IterVar.CommReduce]
    assert c_block.init is not None
    # a reduction does not list the buffer it accumulates into among its reads, as TVM
    assert [r.buffer.name for r in c_block.reads] == ["A", "B"] and [w.buffer.name for w in c_block.writes] == ["C"]
    rng = np.random.default_rng(0)
    a, b = rng.random((8, 6), dtype="float32"), rng.random((5, 6), dtype="float32")
    out = _run(func, a, b, np.zeros((8, 5), "float32"))[2]
    np.testing.assert_allclose(out, (a @ b.T) * 2 + 1, rtol=1e-5)


def test_same_script_as_tvmscript_spells_it():
    A = te.placeholder((16, 16), name="A")
    B = te.compute((16, 16), lambda x, y: A[x, y] + 1.0, name="B")

    @T.prim_func
    def expected(a: T.handle, b: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A = T.match_buffer(a, (16, 16))
        B = T.match_buffer(b, (16, 16))
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + 1.0

    kiln.ir.assert_structural_equal(te.create_prim_func([A, B]), expected)


def test_block_names_are_made_unique_and_found_by_a_schedule():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2.0, name="f")
    C = te.compute((4,), lambda i: B[i] + 1.0, name="f")
    func = te.create_prim_func([A, C])
    assert [b.name_hint for b in _blocks(func)] == ["f", "f_1", "root"]
    s = tir.Schedule(func, debug_mask="all")
    assert s.get(s.get_block("f_1")).name_hint == "f_1"
    assert [s.get(lp).extent.value for lp in s.get_loops(s.get_block("f"))] == [4]


def test_multi_output_reduction_uses_temporaries():
    idx = te.placeholder((6, 7), name="idx", dtype="int32")
    val = te.placeholder((6, 7), name="val")
    argmax = te.comm_reducer(lambda x, y: (tir.Select(x[1] >= y[1], x[0], y[0]), tir.Select(x[1] >= y[1], x[1], y[1])),
                             lambda t0, t1: (tir.const(-1, t0), tir.min_value(t1)), name="argmax")
    k = te.reduce_axis((0, 7), "k")
    mi, mv = te.compute((6,), lambda i: argmax((idx[i, k], val[i, k]), axis=k), name="m")
    func = te.create_prim_func([idx, val, mi, mv])
    rng = np.random.default_rng(1)
    v = rng.random((6, 7), dtype="float32")
    ids = np.tile(np.arange(7, dtype="int32"), (6, 1))
    out = _run(func, ids, v, np.zeros(6, "int32"), np.zeros(6, "float32"))
    np.testing.assert_array_equal(out[2], v.argmax(axis=1))
    np.testing.assert_allclose(out[3], v.max(axis=1))


def test_extern_body_reads_its_inputs_buffers():
    def body(ins, outs):
        i = tir.Var("i", "int32")
        return tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.BufferStore(outs[0], ins[0][i] * 3.0, [i]))

    X = te.placeholder((8,), name="X")
    pre = te.compute((8,), lambda i: X[i] + 1.0, name="pre")
    Y = te.extern((8,), [pre], body, name="Y", in_buffers=[tir.decl_buffer((8,), "float32", "P")],
                  out_buffers=[tir.decl_buffer((8,), "float32", "Yb")])
    func = te.create_prim_func([X, Y])
    x = np.random.default_rng(2).random(8, dtype="float32")
    np.testing.assert_allclose(_run(func, x, np.zeros(8, "float32"))[1], (x + 1) * 3, rtol=1e-6)


def test_layout_free_placeholders_become_a_function_attribute():
    A = te.placeholder((4, 4), name="A")
    W = te.placeholder((4, 4), name="W")
    k = te.reduce_axis((0, 4), "k")
    C = te.compute((4, 4), lambda i, j: te.sum(A[i, k] * W[k, j], axis=k), name="C",
                   attrs={"layout_free_placeholders": [W]})
    func = te.create_prim_func([A, W, C])
    assert [int(x) for x in func.attrs["layout_free_buffers"]] == [1]
    assert "layout_free_placeholders" not in _blocks(func)[0].annotations


def test_unsupported_operation_is_a_type_error():
    from dataclasses import dataclass

    @dataclass(frozen=True, slots=True, eq=False, repr=False)
    class Other(te.Operation):
        def _output_shapes(self):
            return ((4,),)

        def _output_dtypes(self):
            return ("float32",)

    X = Other("X").output(0)
    Y = te.compute((4,), lambda i: X[i] + 1.0, name="Y")
    with pytest.raises(TypeError, match="Unsupported Operation: Other"):
        te.create_prim_func([X, Y])


def test_index_dtype_override_int64_rewrites_every_index_and_still_runs():
    A = te.placeholder((6, 4), name="A")
    B = te.placeholder((4,), name="B", dtype="int32")
    C = te.compute((6, 4), lambda i, j: A[i, B[j]] + 1.0, name="C")
    func = te.create_prim_func([A, B, C], index_dtype_override="int64")
    assert all(s.dtype == "int64" for buf in func.buffer_map.values() for s in buf.shape)
    loop = func.body.block.body
    assert loop.loop_var.dtype == loop.min.dtype == loop.extent.dtype == "int64"
    block = _blocks(func)[0]
    assert all(iv.var.dtype == "int64" for iv in block.iter_vars)
    rng = np.random.default_rng(3)
    a, b = rng.random((6, 4), dtype="float32"), rng.permutation(4).astype("int32")
    np.testing.assert_allclose(_run(func, a, b, np.zeros((6, 4), "float32"))[2], a[:, b] + 1, rtol=1e-6)


def test_bounds_checks_within_the_block_domain_simplify_away():
    A = te.placeholder((4, 10), name="A")
    k = te.reduce_axis((0, 10), name="k")
    B = te.compute((4,), lambda i: te.sum(tir.Select(k < 10, A[i, tir.min(k, 9)], 0.0), axis=k), name="B")
    script = te.create_prim_func([A, B]).script()
    assert "Select" not in script and "T.min" not in script
    a = np.random.default_rng(5).random((4, 10), dtype="float32")
    func = te.create_prim_func([A, B])
    np.testing.assert_allclose(_run(func, a, np.zeros(4, "float32"))[1], a.sum(axis=1), rtol=1e-5)
