"""Tests of kiln/tir/transform/unroll_loop.py."""

import pytest

from kiln import tir, transform
from kiln.error import KilnError
from kiln.ir import assert_structural_equal
from kiln.tir.analysis import verify_well_formed
from kiln.tir.transform import UnrollLoop


def _func(helpers, kind, extent=4, inner=False):
    A = tir.decl_buffer((16,), "int32", "A")
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    a = tir.Var("a", "handle")
    store = tir.BufferStore(A, A[i] + i, [i])
    body = tir.For(j, 0, 2, tir.ForKind.SERIAL, tir.BufferStore(A, A[i * 2 + j] + j, [i * 2 + j])) if inner else store
    return helpers.make_func([a], tir.For(i, 0, extent, kind, body), {a: A}), A, i, a


def test_unrolled_kind_is_unrolled_explicitly(helpers):
    before, A, _i, _a = _func(helpers, tir.ForKind.UNROLLED)
    after = helpers.run_pass(UnrollLoop(), before)
    expected = tir.stmt_seq(*(tir.BufferStore(A, tir.Add(A[k], tir.const(k)), [k]) for k in range(4)))
    assert_structural_equal(after.body, expected)
    helpers.assert_same_results(before, after)


def test_auto_unroll_through_config(helpers):
    before, *_ = _func(helpers, tir.ForKind.SERIAL)
    assert helpers.run_pass(UnrollLoop(), before) is before  # auto_max_step defaults to 0: nothing to do
    with transform.PassContext(config={"tir.UnrollLoop": {"auto_max_step": 16, "explicit_unroll": True}}):
        after = helpers.run_pass(UnrollLoop(), before)
    assert isinstance(after.body, tir.SeqStmt) and len(after.body) == 4
    with transform.PassContext(config={"tir.UnrollLoop": {"auto_max_step": 2}}):
        assert helpers.run_pass(UnrollLoop(), before) is before  # 4 steps > 2
    with transform.PassContext(config={"tir.UnrollLoop": {"auto_max_step": 16, "explicit_unroll": False}}):
        marked = helpers.run_pass(UnrollLoop(), before)
    assert marked.body.kind == tir.ForKind.UNROLLED
    helpers.assert_same_results(before, after)


def test_unknown_option_and_non_constant_extent(helpers):
    before, *_ = _func(helpers, tir.ForKind.SERIAL)
    with transform.PassContext(config={"tir.UnrollLoop": {"auto_max_steps": 16}}), \
            pytest.raises(KilnError, match="auto_max_steps"):
        helpers.run_pass(UnrollLoop(), before)
    n = tir.Var("n", "int32")
    dynamic, _A, _i, _a = _func(helpers, tir.ForKind.UNROLLED, extent=n)
    after = helpers.run_pass(UnrollLoop(), dynamic)
    assert after.body.kind == tir.ForKind.SERIAL


def test_copies_get_their_own_inner_variables(helpers):
    before, *_ = _func(helpers, tir.ForKind.UNROLLED, inner=True)
    after = helpers.run_pass(UnrollLoop(), before)
    loops = list(after.body.seq)
    assert len(loops) == 4 and len({id(loop.loop_var) for loop in loops}) == 4
    assert verify_well_formed(after)
    helpers.assert_same_results(before, after)
