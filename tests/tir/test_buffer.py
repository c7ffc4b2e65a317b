"""Buffer's TVM API: ``access_ptr``, ``offset_of`` (with split indices merged back), ``get_flattened_buffer`` with
axis separators, and vector loads and stores that must match the element type."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import TIRError
from kiln.ir import structural_equal


def test_access_ptr_masks_offset_and_extent():
    m, n = te.size_var("m"), te.size_var("n")
    buf = tir.decl_buffer((m, n), "float32", name="A")
    ptr = buf.access_ptr("rw")
    assert ptr.op.name == "tir.tvm_access_ptr" and ptr.dtype == "handle"
    assert ptr.args[0].op.name == "tir.type_annotation" and ptr.args[0].dtype == "float32"
    assert ptr.args[1] is buf.data
    assert ptr.args[4].value == tir.Buffer.READ | tir.Buffer.WRITE == 3
    assert buf.access_ptr("w").args[4].value == tir.Buffer.WRITE
    assert buf.access_ptr(tir.Buffer.READ).args[4].value == 1
    assert structural_equal(ptr.args[3], m * n)
    shifted = buf.access_ptr("r", offset=10)
    assert shifted.args[2].value == 10 and structural_equal(shifted.args[3], m * n - 10)
    assert buf.access_ptr("r", offset=10, extent=5).args[3].value == 5
    strided = tir.decl_buffer((m, n), "float32", strides=[n + 1, 1])
    assert structural_equal(strided.access_ptr("r").args[3], strided.strides[0] * m)
    assert buf.access_ptr("r", ptr_type="int64").dtype == "int64"
    vec = tir.decl_buffer((64,), "float32").access_ptr("r", content_lanes=4)
    assert vec.args[0].dtype == "float32x4" and vec.args[3].value == 16
    with pytest.raises(TIRError, match="access mask"):
        buf.access_ptr("x")


def test_offset_of_is_the_simplified_element_offset():
    m, n = te.size_var("m"), te.size_var("n")
    buf = tir.decl_buffer((m, n), "float32", elem_offset=100)
    (offset,) = buf.offset_of([2, 3])
    assert structural_equal(offset, n * 2 + 103)
    with pytest.raises(TIRError, match="2-dimensional"):
        buf.offset_of([1])


def test_offset_of_merges_split_indices():
    m, n, s = te.size_var("m"), te.size_var("n"), te.size_var("s")
    k0, k1 = te.size_var("k0"), te.size_var("k1")
    idxd, idxm = tir.indexdiv, tir.indexmod
    strided = tir.decl_buffer((m, n), "float32", strides=(s, 1))
    # (x // s, x % s) over rows of stride s is x itself
    x = idxm(k0, k1)
    assert structural_equal(strided.offset_of((idxd(x, s), idxm(x, s) + idxd(k0, k1) * k1)),
                            strided.offset_of((0, k0)))
    # a flat index cut by reshapes into (1, 14, 14, 1024)
    buf = tir.decl_buffer((1, 14, 14, 1024))
    i, j, k = te.size_var("i"), te.size_var("j"), te.size_var("k")
    flat = i * 50176 + j * 28672 + k
    split = (idxd(idxd(idxd(flat, 1024), 14), 14), idxm(idxd(idxd(flat, 1024), 14), 14),
             idxm(idxd(flat, 1024), 14), idxm(flat, 1024))
    assert structural_equal(buf.offset_of(split), buf.offset_of((0, 0, 0, flat)))


def test_offset_of_numerically_matches_row_major_order():
    rng = np.random.default_rng(0)
    buf = tir.decl_buffer((3, 5, 7), "float32", axis_separators=[1])
    for _ in range(20):
        idx = [int(rng.integers(0, d)) for d in (3, 5, 7)]
        outer, inner = (o.value for o in buf.offset_of(idx))
        assert (outer, inner) == (idx[0], idx[1] * 7 + idx[2])


def test_flattened_buffer():
    buf = tir.decl_buffer([16, 32])
    flat = buf.get_flattened_buffer()
    assert flat.data is buf.data and [d.value for d in flat.shape] == [512]
    one = tir.decl_buffer([16])
    assert one.get_flattened_buffer() is one
    sep = tir.decl_buffer([4, 16, 32], axis_separators=[2]).get_flattened_buffer()
    assert [d.value for d in sep.shape] == [64, 32] and list(sep.axis_separators) == [1]
    n = te.size_var("n")
    strided = tir.decl_buffer([4, 8], strides=[n, 1]).get_flattened_buffer()
    assert structural_equal(strided.shape[0], n * 4) and strided.strides == ()
    with pytest.raises(TIRError, match="axis separators"):
        tir.decl_buffer([4, 16], axis_separators=[2]).get_flattened_buffer()


def test_vector_access_must_match_the_element_type():
    buf = tir.decl_buffer((4, 16), "int8")
    load = buf.vload([0, 0], "int8x16")
    assert load.dtype == "int8x16" and isinstance(load.indices[-1], tir.Ramp)
    assert buf.vload([2, 3]).indices[0].value == 2
    with pytest.raises(TIRError, match="cannot load float32"):
        buf.vload([0, 0], "float32x4")
    with pytest.raises(TIRError, match="cannot store"):
        buf.vstore([0, 0], tir.const(1.0, "float32"))


def test_auto_broadcast_buffers_broadcast_at_run_time():
    m = [te.size_var(f"m{i}") for i in range(3)]
    n = [te.size_var(f"n{i}") for i in range(3)]
    o = [te.size_var(f"o{i}") for i in range(3)]
    A, B = te.placeholder(m, name="A"), te.placeholder(n, name="B")
    C = te.compute(o, lambda i, j, k: A[i, j, k] * B[i, j, k], name="C")
    Ab = tir.decl_buffer(A.shape, A.dtype, name="Ab", buffer_type="auto_broadcast")
    Bb = tir.decl_buffer(B.shape, B.dtype, name="Bb", buffer_type="auto_broadcast")
    assert len(Ab.strides) == 3 and all(isinstance(s, tir.Var) for s in Ab.strides)
    s = te.create_schedule(C.op)
    f = kiln.build(s, [A, B, C], target="llvm", binds={A: Ab, B: Bb})
    rng = np.random.default_rng(1)
    for a_shape, b_shape in (((2, 4, 3), (2, 1, 1)), ((2, 4, 3), (2, 4, 3)), ((1, 4, 3), (2, 4, 1))):
        a = rng.standard_normal(a_shape).astype("float32")
        b = rng.standard_normal(b_shape).astype("float32")
        out_shape = np.broadcast_shapes(a_shape, b_shape)
        c = kiln.nd.array(np.zeros(out_shape, "float32"))
        f(kiln.nd.array(a), kiln.nd.array(b), c)
        np.testing.assert_allclose(c.numpy(), a * b, rtol=1e-6)


def test_strided_buffers_bind_their_strides():
    n = te.size_var("n")
    A = te.placeholder((n, 4), name="A")
    B = te.compute((n, 4), lambda i, j: A[i, j] + 1.0, name="B")
    row = te.size_var("row")
    Ab = tir.decl_buffer(A.shape, A.dtype, name="Ab", strides=[row, 1])
    s = te.create_schedule(B.op)
    f = kiln.build(s, [A, B], target="llvm", binds={A: Ab})
    a = np.random.default_rng(2).standard_normal((3, 4)).astype("float32")
    b = kiln.nd.array(np.zeros((3, 4), "float32"))
    f(kiln.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a + 1.0, rtol=1e-6)
