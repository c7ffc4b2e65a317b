"""Dividing a detected iterator map into an outer and an inner subspace (TVM's ``SubspaceDivide``), and inverting
one (TVM's ``InverseAffineIterMap``).

Division passes messages up the map: each split learns that it is ``Y * extent(X) + X`` with ``Y`` over the outer
iterators and ``X`` over the inner ones. A split of an input iterator is wholly inner or wholly outer. A sum is
divisible when, read from its innermost split out, it is a run of inner splits followed by a run of outer splits;
a split of a fused mark is divisible when the mark's digits split at the boundary between its inner and outer
extents. A sum whose extent is constrained (smaller than the product of its parts) must be wholly inner or wholly
outer, and its bound joins that side's predicate.

The inverse walks the map from the outputs back to the inputs: a sum passes ``output - base`` to its splits (the
digits ``(v // scale) % extent``), a split passes ``value * lower_factor`` to its mark's source, and the values
reaching one input iterator add up.
"""

from ..tir import expr as E
from ..tir import op as _op
from .iter_affine_map import IterMapToExpr, IterMark, IterSplitExpr, IterSumExpr
from .polynomial import prove_equal


class _Division:
    """``outer * inner_extent + inner``; ``kind`` is "inner", "outer" or "mixed"."""

    __slots__ = ("inner", "inner_extent", "kind", "outer", "outer_extent")

    def __init__(self, outer, outer_extent, inner, inner_extent, kind="mixed"):
        self.outer, self.outer_extent = outer, outer_extent
        self.inner, self.inner_extent = inner, inner_extent
        self.kind = kind

    @staticmethod
    def make_inner(it, extent):
        return _Division(IterSumExpr((), _op.const(0, it.dtype)), _op.const(1, it.dtype), it, extent, "inner")

    @staticmethod
    def make_outer(it, extent):
        return _Division(it, extent, IterSumExpr((), _op.const(0, it.dtype)), _op.const(1, it.dtype), "outer")

    @staticmethod
    def as_split(expr, extent):
        if isinstance(expr, IterSplitExpr):
            return expr
        return IterSplitExpr(IterMark(expr, extent), 1, extent, 1)


class _Failure(Exception):
    """The bindings cannot be divided."""


class SubspaceDivider:
    """Message passing of :func:`subspace_divide` (see the module docstring)."""

    def __init__(self, analyzer, mark_splits, sub_iters):
        self.ana = analyzer
        self.mark_splits = mark_splits  # id(mark) -> splits of it
        self.sub_iters = {id(v) for v in sub_iters}
        self.split_map = {}  # id(split) -> _Division
        self.keep = []
        self.outer_preds = _op.const(True)
        self.inner_preds = _op.const(True)

    def divide_sum(self, expr, mark_extent):
        dtype = expr.dtype
        one, zero = _op.const(1, dtype), _op.const(0, dtype)
        if not expr.args:
            return _Division(IterSumExpr((), zero), one, IterSumExpr((), expr.base), one)
        if len(expr.args) == 1:
            if not _op.is_const_int(expr.args[0].scale, 1):
                raise _Failure
            res = self.divide_split(expr.args[0])
            if not _op.is_const_int(expr.base, 0):
                res = _add_base(res, expr.base)
            return res
        extent = one
        outer_args, inner_args = [], []
        inner, scale_is_one = True, False
        for arg in reversed(expr.args):
            if _op.is_const_int(arg.scale, 1):
                scale_is_one = True
            div = self.divide_split(arg)
            if div.kind == "inner":
                if not inner:
                    raise _Failure
                new_arg = _Division.as_split(div.inner, div.inner_extent)
                inner_args.append(new_arg)
            elif div.kind == "outer":
                new_arg = _Division.as_split(div.outer, div.outer_extent)
                outer_args.append(new_arg)
                inner = False
            else:
                raise _Failure
            extent = _op.multiply(extent, new_arg.extent)
        if not scale_is_one:
            raise _Failure
        outer_mark = _mark_from(outer_args, zero)
        inner_mark = _mark_from(inner_args, expr.base)
        if not prove_equal(self.ana, extent, mark_extent):
            conv = IterMapToExpr(self.ana)
            if not inner_args:
                self.outer_preds = _op.logical_and(self.outer_preds,
                                                   _op.less(conv.convert(outer_mark.source), mark_extent))
                return _Division.make_outer(outer_mark.source, mark_extent)
            if not outer_args:
                self.inner_preds = _op.logical_and(self.inner_preds,
                                                   _op.less(conv.convert(inner_mark.source), mark_extent))
                return _Division.make_inner(inner_mark.source, mark_extent)
            raise _Failure
        return _Division(outer_mark.source, outer_mark.extent, inner_mark.source, inner_mark.extent)

    def divide_split(self, expr):
        found = self.split_map.get(id(expr))
        if found is not None:
            return found
        splits = self.mark_splits[id(expr.source)]
        source = expr.source.source
        if isinstance(source, E.Var):
            kind = _Division.make_inner if id(source) in self.sub_iters else _Division.make_outer
            for s in splits:
                self.split_map[id(s)] = kind(s, s.extent)
                self.keep.append(s)
        elif isinstance(source, IterSumExpr):
            mark_div = self.divide_sum(source, expr.source.extent)
            if len(splits) == 1:
                return mark_div
            outer_mark = IterMark(mark_div.outer, mark_div.outer_extent)
            inner_mark = IterMark(mark_div.inner, mark_div.inner_extent)
            boundary = mark_div.kind == "outer"
            used = [False] * len(splits)
            inner_iters, outer_iters = [], []
            expected = _op.const(1, source.dtype)
            for _ in splits:
                j = next((j for j, s in enumerate(splits)
                          if not used[j] and prove_equal(self.ana, s.lower_factor, expected)), None)
                if j is None:
                    raise _Failure
                used[j] = True
                (outer_iters if boundary else inner_iters).append(splits[j])
                expected = _op.multiply(expected, splits[j].extent)
                if prove_equal(self.ana, expected, mark_div.inner_extent):
                    boundary = True
            if not boundary:
                raise _Failure
            for s in inner_iters:
                self.split_map[id(s)] = _Division.make_inner(s.with_fields(source=inner_mark), s.extent)
                self.keep.append(s)
            for s in outer_iters:
                new = s.with_fields(source=outer_mark,
                                    lower_factor=_op.floordiv(s.lower_factor, outer_iters[0].lower_factor))
                self.split_map[id(s)] = _Division.make_outer(new, s.extent)
                self.keep.append(s)
        else:
            raise _Failure
        return self.split_map[id(expr)]


def _add_base(div, base):
    res = _Division(div.outer, div.outer_extent, div.inner, div.inner_extent, div.kind)
    if isinstance(div.inner, IterSplitExpr):
        res.inner = IterSumExpr((div.inner,), base)
    else:
        res.inner = IterSumExpr(div.inner.args, _op.add(div.inner.base, base))
    return res


def _mark_from(args, base):
    """A mark of ``args`` (innermost first) re-scaled as consecutive digits, plus ``base``."""
    res, extent = [], _op.const(1, base.dtype)
    for a in args:
        res.append(a.with_fields(scale=extent))
        extent = _op.multiply(extent, a.extent)
    return IterMark(IterSumExpr(tuple(res[::-1]), base), extent)


def collect_mark_splits(sums):
    """``id(mark) -> [splits of it]`` over every mark the sums reach."""
    visited, mark_splits = set(), {}

    def collect(mark):
        if id(mark) in visited:
            return
        visited.add(id(mark))
        if isinstance(mark.source, IterSumExpr):
            for s in mark.source.args:
                collect(s.source)
                mark_splits.setdefault(id(s.source), []).append(s)

    for b in sums:
        for s in b.args:
            collect(s.source)
            mark_splits.setdefault(id(s.source), []).append(s)
    return mark_splits


def subspace_divide(bindings, doms, sub_iters, predicate, level, simplify_trivial):
    """:func:`kiln.arith.subspace_divide` on converted arguments."""
    from .analyzer import Analyzer
    from .iter_map_detect import detect, sanity_check

    if not sanity_check(doms):
        return []
    maps = detect(bindings, doms, predicate, level, simplify_trivial).indices
    if not maps:
        return []
    divider = SubspaceDivider(Analyzer(), collect_mark_splits(maps), sub_iters)
    results = []
    try:
        for expr in maps:
            res = divider.divide_sum(expr, _op.const(0, expr.dtype))
            results.append([IterMark(res.outer, res.outer_extent), IterMark(res.inner, res.inner_extent)])
    except _Failure:
        return []
    zero = IterSumExpr((), _op.const(0, "int32"))
    results.append([IterMark(zero, divider.outer_preds), IterMark(zero, divider.inner_preds)])
    return results


def inverse_affine_iter_map(iter_map, outputs):
    """:func:`kiln.arith.inverse_affine_iter_map` on converted arguments."""
    from ..error import TIRError
    from .analyzer import Analyzer

    if len(iter_map) != len(outputs):
        raise TIRError(f"arith.inverse_affine_iter_map: {len(iter_map)} sums but {len(outputs)} outputs")
    for k, expr in enumerate(iter_map):
        if not isinstance(expr, IterSumExpr):
            raise TIRError(f"arith.inverse_affine_iter_map: iter_map[{k}] is a {type(expr).__name__}, expected an "
                           "IterSumExpr (as detect_iter_map returns)")
    ana = Analyzer()
    order, seen = [], set()

    def visit(node):  # post order; the reverse is a topological order from the outputs
        stack = [(node, False)]
        while stack:
            n, done = stack.pop()
            if done:
                order.append(n)
                continue
            if id(n) in seen:
                continue
            seen.add(id(n))
            stack.append((n, True))
            if isinstance(n, IterSumExpr):
                stack.extend((c, False) for c in reversed(n.args))
            elif isinstance(n.source.source, IterSplitExpr | IterSumExpr):
                stack.append((n.source.source, False))

    for expr in iter_map:
        visit(expr)
    order.reverse()
    backprop = {id(n): _op.const(0, n.dtype) for n in order}
    for expr, out in zip(iter_map, outputs, strict=True):
        backprop[id(expr)] = out
    inverse, keys = {}, {}
    for node in order:
        if isinstance(node, IterSumExpr):
            value = _op.subtract(backprop[id(node)], node.base)
            if len(node.args) == 1:
                src = node.args[0]
                backprop[id(src)] = _op.multiply(_op.add(backprop[id(src)], value), src.scale)
                continue
            expected = node.args[-1].scale if node.args else None
            for a in reversed(node.args):
                if not prove_equal(ana, a.scale, expected):
                    raise TIRError(f"arith.inverse_affine_iter_map: {node} is not a fused iterator")
                expected = _op.multiply(expected, a.extent)
            for i in range(len(node.args), 0, -1):
                split = node.args[i - 1]
                part = _op.floordiv(value, split.scale)
                if i > 1:  # the outermost digit needs no modulus
                    part = _op.floormod(part, split.extent)
                backprop[id(split)] = _op.add(backprop[id(split)], part)
        else:
            value = _op.multiply(backprop[id(node)], node.lower_factor)
            source = node.source.source
            if isinstance(source, IterSumExpr):
                backprop[id(source)] = _op.add(backprop[id(source)], value)
            elif isinstance(source, E.Var):
                keys[id(source)] = source
                inverse[id(source)] = _op.add(inverse[id(source)], value) if id(source) in inverse else value
            else:
                raise TIRError(f"arith.inverse_affine_iter_map: the mark source {source} is not a variable or sum")
    return {keys[k]: v for k, v in inverse.items()}
