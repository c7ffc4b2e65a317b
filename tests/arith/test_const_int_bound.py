"""Tests of kiln/arith/const_int_bound.py."""

from kiln import arith, tir
from kiln.arith import ConstIntBound

x, y = tir.Var("x", "int32"), tir.Var("y", "int32")


def _bound(expr, **ranges):
    ana = arith.Analyzer()
    for name, (lo, ext) in ranges.items():
        ana.bind({"x": x, "y": y}[name], tir.Range.from_min_extent(lo, ext))
    b = ana.const_int_bound(expr)
    return b.min_value, b.max_value


def test_leaves_and_dtypes():
    assert _bound(tir.const(5)) == (5, 5)
    assert _bound(x) == (-(2**31), 2**31 - 1)
    assert _bound(tir.SizeVar("n", "int32"))[0] == 0
    assert _bound(tir.Var("b", "bool")) == (0, 1)
    assert _bound(tir.Var("u", "uint8")) == (0, 255)
    f = tir.Var("f", "float32")
    assert _bound(f) == (ConstIntBound.NEG_INF, ConstIntBound.POS_INF)


def test_arithmetic():
    assert _bound(x + y, x=(0, 8), y=(-2, 4)) == (-2, 8)
    assert _bound(x - y, x=(0, 8), y=(-2, 4)) == (-1, 9)
    assert _bound(x * y, x=(0, 8), y=(-2, 4)) == (-14, 7)
    assert _bound(x * -3, x=(0, 8)) == (-21, 0)


def test_division():
    assert _bound(tir.floordiv(x, 4), x=(-5, 20)) == (-2, 3)
    assert _bound(tir.floormod(x, 4), x=(-5, 20)) == (0, 3)
    assert _bound(tir.floormod(x, 8), x=(8, 4)) == (0, 3)
    assert _bound(tir.floormod(x, 16), x=(0, 8)) == (0, 7)
    assert _bound(tir.truncdiv(x, 4), x=(-5, 20)) == (-1, 3)
    assert _bound(tir.truncmod(x, 4), x=(-5, 20)) == (-3, 3)
    assert _bound(tir.floordiv(x, y), x=(0, 10), y=(1, 4)) == (0, 9)


def test_min_max_select_cast():
    assert _bound(tir.min(x, y), x=(0, 8), y=(3, 10)) == (0, 7)
    assert _bound(tir.max(x, y), x=(0, 8), y=(3, 10)) == (3, 12)
    assert _bound(tir.Select(x < 3, x, y), x=(0, 8), y=(3, 10)) == (0, 12)
    assert _bound(tir.Cast("int64", x), x=(0, 8)) == (0, 7)
    assert _bound(tir.Cast("int8", x), x=(0, 1000)) == (-128, 127)


def test_vectors_and_let():
    assert _bound(tir.Ramp(x, 2, 4), x=(0, 4)) == (0, 9)
    v = tir.Var("v", "int32")
    assert _bound(tir.Let(v, x * 2, v + 1), x=(0, 4)) == (1, 7)


def test_update_intersects():
    ana = arith.Analyzer()
    ana.update(x, ConstIntBound(0, 10))
    ana.update(x, ConstIntBound(5, 20))
    assert ana.const_int_bound(x) == ConstIntBound(5, 10)
    ana.update(x, ConstIntBound(-1, 1), override=True)
    assert ana.const_int_bound(x) == ConstIntBound(-1, 1)
    assert ana.const_int_bound_is_bound(x) and not ana.const_int_bound_is_bound(y)


def test_types_that_wrap_have_no_narrower_bound_past_their_range():
    """uint8 and int8 arithmetic wraps (kiln.tir.dtype_semantics): a sum that may pass 255 may be anything, while
    int32, whose overflow is undefined, keeps its clamped bound (issue #10)."""
    ana = arith.Analyzer()
    u = tir.Var("u", "uint8")
    ana.bind(u, tir.Range.from_min_extent(tir.const(0, "uint8"), tir.const(101, "uint8")))
    assert (ana.const_int_bound(u + tir.const(200, "uint8")).min_value,
            ana.const_int_bound(u + tir.const(200, "uint8")).max_value) == (0, 255)
    assert (ana.const_int_bound(u + tir.const(100, "uint8")).min_value,
            ana.const_int_bound(u + tir.const(100, "uint8")).max_value) == (100, 200)
    assert _bound(x + tir.const(2**31 - 1), x=(0, 8)) == (2**31 - 1, 2**31 - 1)


def test_a_cast_that_may_wrap_has_the_whole_target_range():
    """uint64 -> int64 wraps past 2**63 - 1 (so floormod of it cannot become C's %): issue #10's take(mode=wrap)."""
    u = tir.Var("u", "uint64")
    assert _bound(tir.Cast("int64", u)) == (ConstIntBound.NEG_INF, ConstIntBound.POS_INF)
    assert _bound(tir.Cast("int64", tir.Var("w", "uint32"))) == (0, 2**32 - 1)
