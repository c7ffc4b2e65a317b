"""Tests of kiln/tir/transform/storage_rewrite.py."""

from kiln import tir
from kiln.ir import PrimType
from kiln.tir.analysis import stmt_contains
from kiln.tir.stmt_functor import post_order_visit
from kiln.tir.transform import StorageRewrite


def _local(name, n, dtype="float32"):
    data = tir.Var(name, tir.PointerType(PrimType(dtype), "local"))
    return data, tir.decl_buffer((n,), dtype, name, data=data)


def _allocs(stmt):
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, tir.Allocate) else None)
    return found


def _chain(helpers, overlap=False, dtypes=("float32", "float32")):
    """A -> t1 -> t2 -> t3 -> B, each temporary of 8 elements; with ``overlap`` the last stage reads t1 too."""
    A = tir.decl_buffer((8,), "float32", "A")
    B = tir.decl_buffer((8,), "float32", "B")
    d1, t1 = _local("t1", 8, dtypes[0])
    d2, t2 = _local("t2", 8, dtypes[1])
    d3, t3 = _local("t3", 8, dtypes[0])
    i = tir.Var("i", "int32")

    def loop(dst, value):
        return tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.BufferStore(dst, value(i), [i]))

    cast = (lambda e: tir.Cast(t2.dtype, e)) if dtypes[1] != "float32" else (lambda e: e)
    back = (lambda e: tir.Cast("float32", e)) if dtypes[1] != "float32" else (lambda e: e)
    seq = tir.stmt_seq(
        loop(t1, lambda k: A[k] * 2.0),
        loop(t2, lambda k: cast(t1[7 - k] + 1.0)),
        loop(t3, lambda k: back(t2[k]) * 3.0),
        loop(B, lambda k: t3[k] + (t1[k] if overlap else 0.0)),
    )
    body = tir.Allocate(d1, "float32" if dtypes[0] == "float32" else dtypes[0], [8], True,
                        tir.Allocate(d2, dtypes[1], [8], True, tir.Allocate(d3, dtypes[0], [8], True, seq)))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    return helpers.make_func([a, b], body, {a: A, b: B})


def test_non_overlapping_allocations_share(helpers):
    before = _chain(helpers)
    after = helpers.run_pass(StorageRewrite(), before)
    allocs = _allocs(after.body)
    assert len(allocs) == 2  # t3 reuses t1's memory (t1 is dead once t2 is computed)
    helpers.assert_same_results(before, after)


def test_overlapping_lifetimes_do_not_share(helpers):
    before = _chain(helpers, overlap=True)
    after = helpers.run_pass(StorageRewrite(), before)
    assert after is before and len(_allocs(after.body)) == 3
    helpers.assert_same_results(before, after)


def test_dtypes_do_not_mix_and_nothing_to_do_keeps_identity(helpers):
    before = _chain(helpers, dtypes=("float32", "int32"))
    after = helpers.run_pass(StorageRewrite(), before)
    assert sorted(a.dtype for a in _allocs(after.body)) == ["float32", "int32"]
    helpers.assert_same_results(before, after)
    single = helpers.run_pass(StorageRewrite(), _chain(helpers, overlap=True))
    again = helpers.run_pass(StorageRewrite(), single)
    assert again is single


def test_unused_allocation_is_dropped(helpers):
    A = tir.decl_buffer((4,), "float32", "A")
    d, _t = _local("unused", 16)
    i = tir.Var("i", "int32")
    a = tir.Var("a", "handle")
    body = tir.Allocate(d, "float32", [16], True, tir.For(i, 0, 4, tir.ForKind.SERIAL,
                                                          tir.BufferStore(A, A[i] + 1.0, [i])))
    before = helpers.make_func([a], body, {a: A})
    after = helpers.run_pass(StorageRewrite(), before)
    assert not stmt_contains(after.body, lambda n: isinstance(n, tir.Allocate))
    helpers.assert_same_results(before, after)
