"""Tests of kiln/tir/transform/loop_partition.py."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.ir.transform import PassContext
from kiln.tir.stmt_functor import post_order_visit
from kiln.tir.transform import LoopPartition, Simplify


def _loops(stmt):
    loops = []
    post_order_visit(stmt, lambda n: loops.append(n) if isinstance(n, tir.For) else None)
    return loops


def _likely_count(stmt):
    found = []
    post_order_visit(stmt, lambda n: found.append(n)
                     if isinstance(n, tir.Call) and n.op.name == "tir.likely" else None)
    return len(found)


def _tail_tiles(helpers, hint):
    """``for t in 4: for i in 3: if likely(t*3 + i < 10): B[t*3 + i] = A[t*3 + i] * 2`` (a split of 10 by 3), the
    tile loop hinted or not."""
    A, B = tir.decl_buffer((10,), "float32", "A"), tir.decl_buffer((10,), "float32", "B")
    t, i = tir.Var("t", "int32"), tir.Var("i", "int32")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    index = t * 3 + i
    store = tir.IfThenElse(tir.likely(tir.LT(index, tir.const(10))), tir.BufferStore(B, A[index] * 2.0, [index]))
    loop = tir.For(t, 0, 4, tir.ForKind.SERIAL, tir.For(i, 0, 3, tir.ForKind.SERIAL, store))
    if hint:
        loop = tir.AttrStmt(t, "pragma_loop_partition_hint", 1, loop)
    return helpers.make_func([a, b], loop, {a: A, b: B})


def test_a_hinted_loop_peels_its_last_tile(helpers):
    before = _tail_tiles(helpers, hint=True)
    after = helpers.run_pass(Simplify(), helpers.run_pass(LoopPartition(), before))
    tiles = [loop for loop in _loops(after.body) if loop.loop_var.name_hint == "t"]
    assert len(tiles) == 1 and (tiles[0].min.value, tiles[0].extent.value) == (0, 3)
    assert _likely_count(tiles[0]) == 0  # whole tiles run unguarded
    assert _likely_count(after.body) == 1  # the peeled last tile keeps its guard
    assert "pragma_loop_partition_hint" not in str(after)
    helpers.assert_same_results(before, after)


def test_only_hinted_loops_are_partitioned_unless_configured(helpers):
    before = _tail_tiles(helpers, hint=False)
    assert helpers.run_pass(LoopPartition(), before).body is before.body
    with PassContext(config={"tir.LoopPartition": {"partition_const_loop": True}}):
        after = helpers.run_pass(LoopPartition(), before)
    assert [loop.extent.value for loop in _loops(after.body) if loop.loop_var.name_hint == "t"] == [3]
    helpers.assert_same_results(before, after)


def test_conditions_the_interior_cannot_settle_leave_the_loop_alone(helpers):
    A, B = tir.decl_buffer((8,), "float32", "A"), tir.decl_buffer((8,), "float32", "B")
    t = tir.Var("t", "int32")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    odd = tir.IfThenElse(tir.EQ(tir.floormod(t, 2), tir.const(1)), tir.BufferStore(B, A[t], [t]))
    loop = tir.AttrStmt(t, "pragma_loop_partition_hint", 1, tir.For(t, 0, 8, tir.ForKind.SERIAL, odd))
    before = helpers.make_func([a, b], loop, {a: A, b: B})
    after = helpers.run_pass(LoopPartition(), before)
    assert isinstance(after.body, tir.For) and after.body.extent.value == 8  # only the hint is gone
    helpers.assert_same_results(before, after)


def _padded_blur(width, tile):
    """A 3-tap sum over a zero-padded row, computed in tiles of ``tile`` columns whose loop is hinted."""
    A = te.placeholder((width,), name="A")
    padded = te.compute((width + 2,), lambda i: te.if_then_else(te.all(i >= 1, i <= width), A[i - 1], 0.0), name="P")
    k = te.reduce_axis((0, 3), name="k")
    B = te.compute((width,), lambda i: te.sum(padded[i + k], axis=k), name="B")
    s = te.create_schedule(B.op)
    s[padded].compute_inline()
    outer, inner = s[B].split(B.op.axis[0], factor=tile)
    s[B].pragma(outer, "loop_partition_hint")
    return s, [A, B]


@pytest.mark.parametrize("width, tile", [(13, 4), (16, 4), (26, 7), (5, 7)])
def test_padded_tiles_peel_the_edges_and_compute_the_same(width, tile):
    s, args = _padded_blur(width, tile)
    lowered = kiln.lower(s, args, name="f")["f"]
    interior = [loop for loop in _loops(lowered.body) if loop.loop_var.name_hint.endswith("outer")]
    if width > 2 * tile:  # the tiles between the first and the last read no padding and run past no edge
        assert interior and "if_then_else" not in str(interior[0]) and _likely_count(interior[0]) == 0
    f = kiln.build(s, args, "llvm")
    a = np.random.default_rng(0).uniform(-1, 1, width).astype("float32")
    b = kiln.nd.empty((width,), "float32")
    f(kiln.nd.array(a), b)
    padded = np.pad(a, 1)
    np.testing.assert_allclose(b.numpy(), padded[:-2] + padded[1:-1] + padded[2:], rtol=1e-6)


def test_an_unknown_config_option_is_named(helpers):
    with PassContext(config={"tir.LoopPartition": {"partition_all": True}}), \
            pytest.raises(kiln.error.KilnError, match="partition_all"):
        helpers.run_pass(LoopPartition(), _tail_tiles(helpers, hint=True))
