"""Tests of kiln/tir/transform/flatten_buffer.py."""

import kiln
from kiln import tir
from kiln.ir import PrimType, assert_structural_equal
from kiln.tir.transform import FlattenBuffer


def test_two_dimensional_accesses_become_one_dimensional(helpers):
    A = tir.decl_buffer((4, 8), "float32", "A")
    B = tir.decl_buffer((4, 8), "float32", "B")
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    body = tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.For(j, 0, 8, tir.ForKind.SERIAL,
                                                        tir.BufferStore(B, A[i, j] + 1.0, [i, j])))
    before = helpers.make_func([a, b], body, {a: A, b: B})
    after = helpers.run_pass(FlattenBuffer(), before)
    Af, Bf = A.get_flattened_buffer(), B.get_flattened_buffer()
    assert Af.data is A.data and [s.value for s in Af.shape] == [32]
    store = after.body.body.body
    assert isinstance(store, tir.BufferStore) and len(store.indices) == 1 and store.buffer.data is B.data
    expected_body = tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.For(j, 0, 8, tir.ForKind.SERIAL,
                                                                 tir.BufferStore(Bf, Af[i * 8 + j] + 1.0, [i * 8 + j])))
    assert_structural_equal(after.body, expected_body)
    assert after.buffer_map[a] is A  # the packed API checks callers against the original shapes
    helpers.assert_same_results(before, after)


def test_vector_index_strides_and_allocate(helpers):
    A = tir.decl_buffer((4, 8), "float32", "A")
    B = tir.decl_buffer((4, 4), "float32", "B", strides=(4, 1))  # explicit strides take the strided path
    data = tir.Var("T", tir.PointerType(PrimType("float32"), "local"))
    T = tir.decl_buffer((2, 4), "float32", "T", data=data)
    i = tir.Var("i", "int32")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    ramp = tir.Ramp(tir.const(0), 1, 4)
    body = tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.Allocate(data, "float32", [2, 4], True, tir.stmt_seq(
        tir.BufferStore(T, A[i, tir.Ramp(tir.const(4), 1, 4)], [1, ramp]),
        tir.BufferStore(B, T[1, ramp], [i, ramp]))))
    before = helpers.make_func([a, b], body, {a: A, b: B})
    after = helpers.run_pass(FlattenBuffer(), before)
    alloc = after.body.body
    assert [e.value for e in alloc.extents] == [8]
    first, second = alloc.body.seq
    assert_structural_equal(first.indices[0], tir.Ramp(tir.const(4), 1, 4))
    assert_structural_equal(first.value.indices[0], tir.Ramp(i * 8 + 4, 1, 4))
    assert_structural_equal(second.indices[0], tir.Ramp(i * 4, 1, 4))
    helpers.assert_same_results(before, after)


def test_axis_separators_keep_one_physical_axis_per_group():
    buf = tir.decl_buffer((2, 3, 4), "float32", "B", axis_separators=[2])
    i, j, k = (tir.Var(n, "int32") for n in "ijk")
    store = tir.BufferStore(buf, tir.const(1.0, "float32"), [i, j, k])
    body = tir.For(i, 0, 2, tir.ForKind.SERIAL, tir.For(j, 0, 3, tir.ForKind.SERIAL,
                                                         tir.For(k, 0, 4, tir.ForKind.SERIAL, store)))
    handle = tir.Var("B_handle", "handle")
    func = tir.PrimFunc([handle], body, buffer_map={handle: buf})
    flat = FlattenBuffer()(kiln.IRModule({"main": func}))["main"]
    found = []
    tir.stmt_functor.post_order_visit(flat.body, lambda n: found.append(n) if isinstance(n, tir.BufferStore) else None)
    (new,) = found
    assert [int(d) for d in new.buffer.shape] == [6, 4] and len(new.indices) == 2
    assert_structural_equal(new.indices[0], i * 3 + j) and new.indices[1] is k
