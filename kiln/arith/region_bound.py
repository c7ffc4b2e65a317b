"""Bounds of the region a loop nest touches (TVM's ``arith.estimate_region_{lower,strict,upper}_bound``).

A region is one Range per dimension, its minimum an index expression of the loop variables and its extent a
constant. When the minima together form an iterator map (``detect_iter_map``, surjective) each dimension's touched
set is exact: a sum ``base + split * scale`` with the split over ``[0, e)`` touches ``[base, base + extent +
(e - 1) * scale)`` (mirrored for a negative scale) provided the stride does not exceed the extent, so no gap is
left. The strict (and lower) bound is None when that fails; the upper bound falls back per dimension, and finally to
interval evaluation.
"""

from ..tir import expr as E
from ..tir import op as _op
from .int_set import _NEG_INF, _POS_INF, IntervalSet, eval_set


def _from_min_extent(lo, extent):
    return IntervalSet(lo, _op.subtract(_op.add(lo, extent), 1))


def _eval_iter_sum(sum_expr, extent, ana):
    """The set ``sum_expr + [0, extent)`` touches, or None when it has gaps."""
    nothing = IntervalSet(_POS_INF, _NEG_INF)
    if ana.can_prove(_op.equal(extent, 0)):
        return nothing
    if not sum_expr.args:
        return _from_min_extent(sum_expr.base, extent)
    split = sum_expr.args[0]
    if ana.can_prove(_op.equal(split.extent, 0)):
        return nothing
    if not ana.can_prove(_op.greater_equal(extent, split.scale)):
        return None
    span = _op.multiply(_op.subtract(split.extent, 1), split.scale)
    if ana.can_prove(_op.less(split.scale, 0)):
        return _from_min_extent(_op.add(sum_expr.base, span), _op.subtract(extent, span))
    return _from_min_extent(sum_expr.base, _op.add(extent, span))


def _args(region, var_dom, predicate):
    from .iter_affine_map import _domains

    region = [r if isinstance(r, E.Range) else E.Range.from_min_extent(*r) for r in region]
    pred = _op.const(True) if predicate is None else E.convert(predicate)
    return region, _domains(var_dom), pred


def estimate_region_strict_bound(region, var_dom, predicate=None):
    """The exact IntervalSet each dimension of ``region`` covers while ``var_dom``'s variables sweep their ranges
    under ``predicate``; None when the minima are not an iterator map or a dimension has gaps."""
    from .analyzer import Analyzer
    from .iter_affine_map import IterMapLevel
    from .iter_map_detect import detect

    region, doms, pred = _args(region, var_dom, predicate)
    if not all(isinstance(r.extent, E.IntImm | E.FloatImm) for r in region):
        return None  # a dynamic extent is not handled (as in TVM)
    sums = detect([r.min for r in region], doms, pred, IterMapLevel.Surjective, True).indices
    if not sums:
        return None
    ana = Analyzer()
    out = []
    for s, r in zip(sums, region, strict=True):
        touched = _eval_iter_sum(s, r.extent, ana)
        if touched is None:
            return None
        out.append(touched)
    return out


def estimate_region_lower_bound(region, var_dom, predicate=None):
    """A region every point of which is touched (here the strict bound), or None (TVM's
    ``arith.estimate_region_lower_bound``)."""
    return estimate_region_strict_bound(region, var_dom, predicate)


def estimate_region_upper_bound(region, var_dom, predicate=None):
    """A region holding every point touched: the strict bound when there is one, else per dimension the iterator
    map of its minimum alone, else interval evaluation (TVM's ``arith.estimate_region_upper_bound``)."""
    from .analyzer import Analyzer
    from .iter_affine_map import IterMapLevel
    from .iter_map_detect import detect

    strict = estimate_region_strict_bound(region, var_dom, predicate)
    if strict is not None:
        return strict
    region, doms, pred = _args(region, var_dom, predicate)
    ana = Analyzer()
    out = []
    for r in region:
        sums = detect([r.min], doms, pred, IterMapLevel.Surjective, True).indices
        if sums:
            touched = _eval_iter_sum(sums[0], r.extent, ana)
            if touched is not None:
                out.append(touched)
                continue
        last = _op.subtract(_op.add(r.min, r.extent), 1)
        out.append(IntervalSet(eval_set(r.min, doms, ana)._min, eval_set(last, doms, ana)._max))
    return out
