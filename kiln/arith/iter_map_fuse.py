"""Fusing a sum of splits into one iterator, and checking that splits of a mark are independent: the half of the
iterator-map detector (:mod:`kiln.arith.iter_map_rewriter`) that works on already-rewritten sums.

A sum ``x1*c1 + x2*c2 + ... + xn*cn`` is one fused iterator when, taken from the smallest scale up, each scale is
the previous scale times the previous split's extent: ``(x1*s1 + ... + xn) * cn`` is then ``IterSplit(IterMark(...),
scale=cn)``. The constraints of a predicate (``j*2 + k < 9``) fuse first and are found again, whole, inside larger
sums, where they stand for their own mark of the constrained extent. Splits of one mark that are consecutive digits
(``(x // 8) % 4 * 2 + (x // 4) % 2``) combine into one digit first.
"""

from ..tir import expr as E
from ..tir import op as _op
from .iter_affine_map import IterMapLevel, IterMark, IterSplitExpr, IterSumExpr
from .polynomial import prove_equal


def ekey(e):
    """A hashable key equal for two expressions equal node by node, variables and marks' variables by identity
    (TVM's ExprDeepEqual / StructuralEqual without free-variable mapping)."""
    if isinstance(e, E.IntImm):
        return ("int", e.dtype, e.value)
    if isinstance(e, E.Var):
        return ("var", id(e))
    if isinstance(e, IterMark):
        return ("mark", ekey(e.source), ekey(e.extent))
    if isinstance(e, IterSplitExpr):
        return ("split", ekey(e.source), ekey(e.lower_factor), ekey(e.extent), ekey(e.scale))
    if isinstance(e, IterSumExpr):
        return ("sum", tuple(ekey(a) for a in e.args), ekey(e.base))
    if isinstance(e, E.PrimExpr):
        return (type(e).__name__,) + tuple(ekey(v) for v in e.fields().values())
    if isinstance(e, tuple | list):
        return tuple(ekey(v) for v in e)
    if isinstance(e, str | int | float | bool) or e is None:
        return e
    return ("obj", id(e))


def split_key(s, check_scale=True):
    """The key of a split: its mark by identity, its factors by value (the scale optionally)."""
    return (id(s.source), ekey(s.lower_factor), ekey(s.extent), ekey(s.scale) if check_scale else None)


def sum_key(s):
    """The key of a sum in the fuse tables: its splits (sources by identity) and base."""
    return (tuple(split_key(a) for a in s.args), ekey(s.base))


def split_equal(a, b, check_scale=True):
    """Whether two splits take the same digit of the same mark (with the same scale if ``check_scale``)."""
    return split_key(a, check_scale) == split_key(b, check_scale)


def mul_factors(value):
    """The leaves of a product tree, left to right."""
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, E.Mul):
            stack.extend((v.b, v.a))
        else:
            out.append(v)
    return out


def mul_and_normalize(lhs, rhs):
    """``lhs * rhs`` as a product of the symbolic factors (in order) times one constant."""
    cscale, res = 1, _op.const(1, lhs.dtype)
    for v in mul_factors(lhs) + mul_factors(rhs):
        if isinstance(v, E.IntImm):
            cscale *= v.value
        else:
            res = _op.multiply(res, v)
    return _op.multiply(res, _op.const(cscale, res.dtype)) if cscale != 1 else res


def to_sum(expr):
    """``expr`` as an IterSumExpr: a split alone, or a plain expression as the base of an empty sum."""
    if isinstance(expr, IterSumExpr):
        return expr
    if isinstance(expr, IterSplitExpr):
        return IterSumExpr((expr,), _op.const(0, expr.dtype))
    return IterSumExpr((), expr)


class FuseMixin:
    """Fusion, combination and split checks of :class:`IterMapRewriter` (needs ``ana``, ``errors``,
    ``sum_fuse_map`` (sum key -> (flattened sum, mark, offset)), ``flattened_map`` (structured sum key ->
    flattened sum), ``constrained`` (flattened sums of constraints) and ``padded_origin``)."""

    def _eq(self, a, b):
        return prove_equal(self.ana, a, b)

    # ---- independence of the splits of one mark
    def try_normalize_splits(self, mark, splits, level):
        """The splits of ``mark`` from outermost to innermost when they are non-overlapping digits of it (covering
        it fully for a bijective map), else an empty list."""
        used = [False] * len(splits)
        iters = []
        expected = _op.const(1, mark.source.dtype)
        for _ in range(len(splits)):
            j = next((j for j, s in enumerate(splits) if not used[j] and self._eq(s.lower_factor, expected)),
                     len(splits))
            if j == len(splits):
                if level == IterMapLevel.Bijective:
                    return []
                j = self._skip_lower_factor(splits, used, expected)  # a missing middle digit is fine here
                if j == len(splits):
                    return []
            used[j] = True
            iters.append(splits[j])
            expected = _op.multiply(splits[j].lower_factor, splits[j].extent)
        origin = self.padded_origin.get(ekey(mark))
        full = self._eq(expected, mark.extent)
        divides = full or self.can_prove_divisible(mark.extent, expected)
        if level == IterMapLevel.Bijective:
            if origin is not None:
                return self._fail("a bijective mapping may not pad its iterators")
            if not full:
                return self._fail("the iterations do not traverse the full iteration space")
        elif origin is None:
            if not divides:
                return self._fail("the lower factor does not divide the extent of the iteration space")
        elif level == IterMapLevel.Surjective:
            before = origin.extent
            if full:
                if len(splits) != 1:
                    return self._fail("dependent iterations on a padded iteration space")
                if self._eq(splits[0].extent, expected) and not self.ana.can_prove(_op.greater_equal(before, expected)):
                    return self._fail("a split of the whole padded space is not surjective")
            elif divides:
                if not self.ana.can_prove(_op.greater_equal(before, expected)):
                    return self._fail("the extent before padding is less than the lower factor")
            else:
                return self._fail("the lower factor does not divide the extent of the iteration space")
        return iters[::-1]

    def _fail(self, message):
        self.errors.append(message)
        return []

    def _skip_lower_factor(self, splits, used, expected):
        res = len(splits)
        for i, s in enumerate(splits):
            if used[i]:
                continue
            if not self.can_prove_divisible(s.lower_factor, expected):
                return len(splits)
            if res == len(splits) or self.can_prove_divisible(splits[res].lower_factor, s.lower_factor):
                res = i
        return res

    def check_mapping(self, bindings, level):
        """Whether every mark the bindings use is split into independent digits (and, for a bijective map, every
        input iterator is used)."""
        visited, order, mark_splits = set(), [], {}

        def collect(mark):
            if id(mark) in visited:
                return
            visited.add(id(mark))
            order.append(mark)
            if isinstance(mark.source, IterSumExpr):
                for s in mark.source.args:
                    collect(s.source)
                    mark_splits.setdefault(id(s.source), []).append(s)

        for b in bindings:
            for s in b.args:
                collect(s.source)
                mark_splits.setdefault(id(s.source), []).append(s)
        for mark in order:
            if not self.try_normalize_splits(mark, mark_splits.get(id(mark), []), level):
                return False
        if level == IterMapLevel.Bijective:
            return all(id(m) in visited or _op.is_const_int(m.extent, 1) for m in self.input_marks)
        return True

    def check_constraints(self):
        """Two constraints' flattened sums either nest or are disjoint."""
        flat = self.constrained
        for i, a in enumerate(flat):
            for b in flat[i + 1:]:
                state = 0
                for arg in a.args:
                    found = any(split_equal(arg, other) for other in b.args)
                    if state == 0:
                        state = 1 if found else -1
                    elif (state == -1) == found:
                        return False
        return True

    # ---- searching a sum's splits
    def find_base_iter(self, expr, skip, match_source, rbegin=-1):
        """The split with the smallest constant scale (a unit-extent one on ties), else the fewest factors."""
        args = expr.args
        rbegin = len(args) - 1 if rbegin == -1 else rbegin
        base, min_scale = -1, 0
        for i in range(rbegin, -1, -1):
            if skip[i] or (match_source is not None and args[i].source is not match_source):
                continue
            if isinstance(args[i].scale, E.IntImm):
                v = args[i].scale.value
                if base == -1 or v < min_scale:
                    base, min_scale = i, v
                elif v == min_scale and _op.is_const_int(args[i].extent, 1) and \
                        not _op.is_const_int(args[base].extent, 1):
                    base = i
        min_size = 0
        for i in range(rbegin, -1, -1):
            if skip[i] or (match_source is not None and args[i].source is not match_source):
                continue
            size = len(mul_factors(args[i].scale))
            if base == -1 or size < min_size:
                base, min_size = i, size
        return base

    @staticmethod
    def first_unit_extent(expr):
        """The position of the first split of extent 1 (the length when there is none)."""
        return next((i for i, a in enumerate(expr.args) if _op.is_const_int(a.extent, 1)), len(expr.args))

    def find_exact_scale(self, expr, skip, scale, match_source, rbegin=-1, first_unit=0):
        """The split with exactly ``scale`` (a unit-extent one first), searching from the right; -1 if none."""
        rbegin = len(expr.args) - 1 if rbegin == -1 else rbegin
        matched = -1
        for j in range(rbegin, -1, -1):
            a = expr.args[j]
            if skip[j] or (match_source is not None and a.source is not match_source):
                continue
            if self._eq(a.scale, scale):
                if _op.is_const_int(a.extent, 1):
                    return j
                if matched == -1:
                    matched = j
                if j <= first_unit:
                    return matched
        return matched

    def find_smaller_closest(self, expr, skip, scale):
        """The split whose non-negative scale is at most ``scale`` and closest to it: (index, its scale)."""
        matched, matched_scale = -1, None
        for j in range(len(expr.args) - 1, -1, -1):
            if skip[j]:
                continue
            cur = expr.args[j].scale
            if self.ana.can_prove(_op.greater_equal(_op.subtract(scale, cur), 0)) and \
                    self.ana.can_prove(_op.greater_equal(cur, 0)):
                if matched == -1 or self.ana.can_prove(_op.less(_op.subtract(matched_scale, cur), 0)):
                    matched, matched_scale = j, cur
        return matched, matched_scale

    # ---- combining and fusing
    def try_combine_same_source(self, expr):
        """Merge consecutive digits of one mark: ``((x // (c*s)) % m) * s*t + ((x // c) % s) * t`` is
        ``(x // c) % (m*s) * t``. None when no mark appears twice."""
        if len(expr.args) <= 1:
            return None
        hits = {}
        for a in expr.args:
            hits[id(a.source)] = hits.get(id(a.source), 0) + 1
        if all(n == 1 for n in hits.values()):
            return None
        visited = [False] * len(expr.args)
        out = []
        first_unit = self.first_unit_extent(expr)
        rend = len(expr.args) - 1
        while rend >= 0:
            if visited[rend]:
                rend -= 1
                continue
            if hits[id(expr.args[rend].source)] == 1:
                out.append(expr.args[rend])
                visited[rend] = True
                rend -= 1
                continue
            idx = self.find_base_iter(expr, visited, expr.args[rend].source, rend)
            visited[idx] = True
            rhs = expr.args[idx]
            while True:
                lhs_scale = mul_and_normalize(rhs.extent, rhs.scale)
                idx = self.find_exact_scale(expr, visited, lhs_scale, rhs.source, rend, first_unit)
                if idx == -1:
                    break
                lhs = expr.args[idx]
                if not self._eq(lhs.lower_factor, mul_and_normalize(rhs.lower_factor, rhs.extent)):
                    break
                visited[idx] = True
                rhs = rhs.with_fields(extent=mul_and_normalize(lhs.extent, rhs.extent))
            out.append(rhs)
        return expr.with_fields(args=tuple(out[::-1]))

    def try_fuse(self, expr, level, allow_early_skip):
        """``expr`` as one split (of a new or known fused mark) plus a base, or None."""
        combined = self.try_combine_same_source(expr)
        if combined is not None:
            expr = combined
            if len(expr.args) <= 1 and allow_early_skip:
                return expr
        args, dtype = expr.args, expr.dtype
        visited = [False] * len(args)
        base_index = self.find_base_iter(expr, visited, None)
        if base_index == -1:
            return None
        base_scale = args[base_index].scale
        flattened, grouped = [], []
        extra_base = _op.const(0, dtype)
        tail_extent = _op.const(0, dtype)
        expected = base_scale
        first_unit = self.first_unit_extent(expr)
        i = 0
        while i < len(args):
            exact = True
            pos = base_index if i == 0 else self.find_exact_scale(expr, visited, expected, None, -1, first_unit)
            matched_scale = expected
            if pos == -1:
                exact = False
                if level != IterMapLevel.Bijective and _op.is_const_int(base_scale, 1):
                    pos, matched_scale = self.find_smaller_closest(expr, visited, expected)
            if pos == -1:
                return None
            # the longest constraint whose innermost split is this one
            constraint = None
            for c in self.constrained:
                if split_equal(args[pos], c.args[-1], False) and (constraint is None or
                                                                   len(constraint.args) < len(c.args)):
                    constraint = c
            if constraint is not None:
                for carg in reversed(constraint.args):
                    k = next((k for k, a in enumerate(args) if not visited[k] and split_equal(a, carg, False)
                              and self._eq(_op.multiply(carg.scale, matched_scale), a.scale)), len(args))
                    if k == len(args):
                        return None
                    visited[k] = True
                    flattened.append(args[k])
                _, cmark, coffset = self.sum_fuse_map[sum_key(constraint)]
                grouped.append(IterSplitExpr(cmark, 1, cmark.extent, _op.floordiv(matched_scale, base_scale)))
                extra_base = _op.add(extra_base, _op.multiply(coffset, matched_scale))
                if not exact:
                    tail_extent = _op.add(tail_extent, _op.subtract(expected, matched_scale))
                expected = mul_and_normalize(cmark.extent, matched_scale)
                i += len(constraint.args)
            else:
                visited[pos] = True
                arg = args[pos]
                arg = arg.with_fields(scale=self.ana.simplify(_op.floordiv(arg.scale, base_scale)))
                flattened.append(arg)
                grouped.append(arg)
                if not exact:
                    tail_extent = _op.add(tail_extent, _op.subtract(expected, matched_scale))
                expected = mul_and_normalize(args[pos].extent, matched_scale)
                i += 1
        zero = _op.const(0, dtype)
        flattened_form = IterSumExpr(tuple(flattened[::-1]), zero)
        structured_form = IterSumExpr(tuple(grouped[::-1]), zero)
        known = self.sum_fuse_map.get(sum_key(flattened_form))
        if known is not None:
            _, mark, offset = known
            if not self._eq(extra_base, _op.multiply(offset, base_scale)):
                return None  # the same iterators with an inconsistent offset
            return IterSumExpr((IterSplitExpr(mark, 1, mark.extent, base_scale),), _op.add(expr.base, extra_base))
        mark = IterMark(structured_form, _op.add(_op.div(expected, base_scale), tail_extent))
        self.sum_fuse_map[sum_key(flattened_form)] = (flattened_form, mark, extra_base)
        self.flattened_map[sum_key(structured_form)] = flattened_form
        return IterSumExpr((IterSplitExpr(mark, 1, mark.extent, base_scale),), _op.add(expr.base, extra_base))

    # ---- normal forms of a rewritten sum
    def normalize_with_offset(self, expr):
        """``expr`` fused into one split plus a base, or unchanged with an error logged."""
        if not expr.args:
            return expr
        fused = self.try_fuse(expr, self.level, True)
        if fused is None:
            self.errors.append(f"could not normalize the iterators of {expr}")
            return expr
        return fused

    def normalize_on_bound(self, expr, lo, hi):
        """Fuse a constrained sum ``lo <= expr < hi`` into a mark whose extent is the constrained one."""
        base = expr.base
        if not _op.is_const_int(base, 0):
            expr = expr.with_fields(base=_op.const(0, expr.dtype))
            lo = None if lo is None else _op.subtract(lo, base)
            hi = None if hi is None else _op.subtract(hi, base)
        fused = self.try_fuse(expr, self.level, False)
        if fused is not None and _op.is_const_int(fused.args[0].scale, 1):
            split = fused.args[0]
            structured = split.source.source
            flattened = self.flattened_map[sum_key(structured)]
            _, mark, offset = self.sum_fuse_map[sum_key(flattened)]
            iter_min, iter_max = offset, _op.add(offset, mark.extent)
            delta = _op.const(0, expr.dtype)
            if lo is not None:
                delta = _op.subtract(lo, iter_min)
                iter_min = _op.maximum(lo, iter_min)
            if hi is not None:
                # prefer the predicate's bound when it is provably tighter (symbolic cases)
                iter_max = hi if self.ana.can_prove(_op.less_equal(hi, iter_max)) else _op.minimum(hi, iter_max)
            if not _op.is_const_int(delta, 0):
                self.flattened_map.pop(sum_key(structured), None)
                structured = structured.with_fields(base=_op.subtract(structured.base, delta))
                self.flattened_map[sum_key(structured)] = flattened
            mark = IterMark(structured, _op.subtract(iter_max, iter_min))
            self.sum_fuse_map[sum_key(flattened)] = (flattened, mark, iter_min)
            self.constrained.append(flattened)
            return IterSumExpr((split,), base)
        self.errors.append("could not normalize the iterators using the constraints given")
        return expr

    def normalize_to_sum(self, expr):
        """Combine digits, write each scale as (symbolic product) * constant, order by that constant (largest
        first), then by the number of symbolic factors."""
        if not expr.args:
            return expr
        combined = self.try_combine_same_source(expr)
        if combined is not None:
            expr = combined
            if not expr.args:
                return expr
        items = []
        for split in expr.args:
            cscale, count, res = 1, 0, _op.const(1, split.dtype)
            for v in mul_factors(split.scale):
                if isinstance(v, E.IntImm):
                    cscale *= v.value
                else:
                    res = _op.multiply(res, v)
                    count += 1
            if cscale != 1:
                res = _op.multiply(res, _op.const(cscale, res.dtype))
            items.append((cscale, count, split.with_fields(scale=res)))
        items.sort(key=lambda t: (-t[0], -t[1]))  # stable, as TVM's stable_sort
        from .iter_affine_map import normalize_iter_map_to_expr

        return IterSumExpr(tuple(t[2] for t in items), normalize_iter_map_to_expr(expr.base))
