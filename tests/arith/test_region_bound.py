"""Region bounds checked by enumeration: every point of a lower (strict) bound is touched and every touched point
lies in it; an upper bound holds every touched point; union_lower_bound joins only sets without a gap."""

import itertools

import pytest

from kiln import arith, ir, tir
from kiln.arith.int_set import IntervalSet, neg_inf, pos_inf, union_lower_bound
from kiln.tir.evaluator import evaluate_expr

i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
DOM = {i: ir.Range(0, 8), j: ir.Range(0, 4)}
REGIONS = [
    [(i * 4 + j, 1)],
    [(i, 3), (j * 2, 2)],
    [(tir.floordiv(i, 2), 1), (tir.floormod(i, 2) * 4 + j, 1)],
    [(i * 4, 2)],  # gaps: stride 4, extent 2
    [(i * j, 1)],  # not an iterator map (a product of iterators)
    [(20 - j * 4, 6)],  # negative scale
]


def _touched(region):
    pts = [set() for _ in region]
    for vi, vj in itertools.product(range(8), range(4)):
        for d, (lo, ext) in enumerate(region):
            start = int(evaluate_expr(lo, {i: vi, j: vj}))
            pts[d].update(range(start, start + ext))
    return pts


def _ends(s):
    return int(arith.Analyzer().simplify(s.min_value)), int(arith.Analyzer().simplify(s.max_value))


@pytest.mark.parametrize("region", REGIONS, ids=[str(r) for r in REGIONS])
def test_bounds_against_enumeration(region):
    ranges = [ir.Range.from_min_extent(lo, ext) for lo, ext in region]
    touched = _touched(region)
    lower = arith.estimate_region_lower_bound(ranges, DOM, True)
    if lower is not None:
        for s, pts in zip(lower, touched, strict=True):
            lo, hi = _ends(s)
            assert set(range(lo, hi + 1)) == pts  # strict: exactly the touched points
    for s, pts in zip(arith.estimate_region_upper_bound(ranges, DOM, True), touched, strict=True):
        lo, hi = _ends(s)
        assert lo <= min(pts) and max(pts) <= hi


def test_gaps_and_overlaps_have_no_lower_bound():
    for region in (REGIONS[3], REGIONS[4]):
        ranges = [ir.Range.from_min_extent(lo, ext) for lo, ext in region]
        assert arith.estimate_region_lower_bound(ranges, DOM, True) is None


def test_predicate_narrows_the_strict_bound():
    ranges = [ir.Range.from_min_extent(i * 4 + j, 1)]
    (s,) = arith.estimate_region_strict_bound(ranges, DOM, i * 4 + j < 30)
    assert _ends(s) == (0, 29)


def test_union_lower_bound_joins_only_touching_sets():
    a, b, c = IntervalSet(0, 4), IntervalSet(5, 9), IntervalSet(20, 30)
    assert _ends(union_lower_bound([a, b])) == (0, 9)
    assert _ends(union_lower_bound([a, c])) == (0, 4)  # the gap [5, 19] would be claimed
    both = union_lower_bound([IntervalSet(neg_inf(), 0), IntervalSet(1, pos_inf()), IntervalSet(pos_inf(), neg_inf())])
    assert both.min_value.same_as(neg_inf()) and both.max_value.same_as(pos_inf())
    assert union_lower_bound([IntervalSet(pos_inf(), neg_inf())]).is_nothing()
