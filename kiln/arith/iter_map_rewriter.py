"""Rewriting index expressions into iterator maps (TVM's ``IterMapRewriter``, ``src/arith/iter_affine_map.cc``).

An index expression is rewritten bottom-up: each input iterator becomes a split of its own mark; ``+``, ``-`` and a
product by a non-iterator keep a sum of splits; ``floordiv``/``floormod`` by a non-iterator first fuse the dividend
into one split (:mod:`kiln.arith.iter_map_fuse`) and then take a digit of it. Where a divisor does not divide the
split's extent the mark is padded: a first pass over all indices collects, per mark, the least common multiple of
its divisors and the largest left padding; the second pass rewrites every use of the mark against the one padded
mark, so that ``(i-1) % 8`` and ``(i-1) // 8`` stay digits of the same iterator. Anything else that uses an input
iterator (a product of two iterators, a ``max``, a load) is an error and leaves detection empty.
The driver is :mod:`kiln.arith.iter_map_detect`.
"""

from ..tir import expr as E
from ..tir import op as _op
from ..tir.analysis import undefined_vars
from .iter_affine_map import (
    IterMapExpr,
    IterMapToExpr,
    IterMark,
    IterSplitExpr,
    IterSumExpr,
)
from .iter_map_fuse import FuseMixin, ekey, to_sum
from .polynomial import poly_divisible, poly_quotient, prove_equal

_INDEX_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _is_index(dtype):
    return dtype in _INDEX_DTYPES


def _is_int(e, value):
    return isinstance(e, E.IntImm) and e.value == value


def _fold(kind, a, b):
    """TVM's TryConstFold on two rewritten operands: constants, and the identities with 0 and 1."""
    ca = a.value if isinstance(a, E.IntImm) else None
    cb = b.value if isinstance(b, E.IntImm) else None
    if ca is not None and cb is not None:
        return {E.Add: _op.add, E.Sub: _op.subtract, E.Mul: _op.multiply, E.FloorDiv: _op.floordiv,
                E.FloorMod: _op.floormod}[kind](a, b)
    if kind is E.Add:
        return b if ca == 0 else a if cb == 0 else None
    if kind is E.Sub:
        return a if cb == 0 else None
    if kind is E.Mul:
        if ca == 1 or cb == 0:
            return b
        return a if cb == 1 or ca == 0 else None
    if kind is E.FloorDiv:
        return a if ca == 0 or cb == 1 else None
    if kind is E.FloorMod:
        if ca == 0:
            return a
        return _op.const(0, a.dtype) if cb == 1 else None
    return None


def _lcm_approx(a, b, ana):
    """An approximate least common multiple of two (symbolic * constant) expressions."""
    import math

    def split(e):
        if isinstance(e, E.IntImm):
            return _op.const(1, e.dtype), e.value
        if isinstance(e, E.Mul) and isinstance(e.b, E.IntImm):
            return e.a, e.b.value
        if isinstance(e, E.Mul) and isinstance(e.a, E.IntImm):
            return e.b, e.a.value
        return e, 1

    (s1, c1), (s2, c2) = split(a), split(b)
    lcm = _op.const(c1 * c2 // math.gcd(c1, c2) if c1 and c2 else 0, a.dtype)
    if prove_equal(ana, s1, s2) or poly_divisible(s1, s2) or ana.can_prove_equal(_op.floormod(s1, s2), 0):
        return _op.multiply(s1, lcm)
    if poly_divisible(s2, s1) or ana.can_prove_equal(_op.floormod(s2, s1), 0):
        return _op.multiply(s2, lcm)
    return _op.multiply(_op.multiply(s1, s2), lcm)


class _Padding:
    __slots__ = ("factor", "left", "padded", "right")

    def __init__(self, dtype):
        self.factor = _op.const(1, dtype)
        self.left = _op.const(0, dtype)
        self.right = _op.const(0, dtype)
        self.padded = None


class IterMapRewriter(FuseMixin):
    """Rewrites index expressions into IterSumExprs of marks of the input iterators; see the module docstring."""

    def __init__(self, analyzer, input_iters, level, simplify_trivial, errors):
        self.ana = analyzer
        self.level = level
        self.errors = errors
        self.var_map = {}
        self.input_marks = []
        self.sum_fuse_map = {}
        self.flattened_map = {}
        self.constrained = []
        self.padded_map = {}  # mark key -> _Padding
        self.padded_origin = {}  # padded mark key -> original mark
        self.update_padding = False
        self.requires_padding = False
        self.padding_predicate = _op.const(False)
        for var, rng in input_iters.items():
            rng = _range_as(rng, var.dtype)
            if simplify_trivial and _is_int(rng.extent, 1):
                self.var_map[id(var)] = IterSumExpr((), rng.min)
            elif _is_int(rng.min, 0):
                mark = IterMark(var, rng.extent)
                self.var_map[id(var)] = IterSplitExpr(mark, 1, mark.extent, 1)
                self.input_marks.append(mark)
            else:
                mark = IterMark(_op.subtract(var, rng.min), rng.extent)
                self.var_map[id(var)] = IterSumExpr((IterSplitExpr(mark, 1, mark.extent, 1),), rng.min)
                self.input_marks.append(mark)

    # ---- entry points
    def rewrite(self, expr):
        """``expr`` as a sum of at most one fused split plus a base (errors are logged, not raised)."""
        return self.normalize_with_offset(to_sum(self.mutate(expr)))

    def rewrite_and_update_padding(self, expr):
        """:meth:`rewrite` in the first pass, collecting the padding each mark needs."""
        self.update_padding = True
        try:
            return self.rewrite(expr)
        finally:
            self.update_padding = False

    def rewrite_constraint(self, expr, lo, hi):
        """Fuse a constrained expression ``lo <= expr < hi`` into a mark of the constrained extent."""
        return self.normalize_on_bound(to_sum(self.mutate(expr)), lo, hi)

    def rewrite_to_normalized_sum(self, expr):
        """``expr`` as a sum of splits ordered by scale (see ``normalize_to_sum``)."""
        return self.normalize_to_sum(to_sum(self.mutate(expr)))

    # ---- the rewrite
    def visit(self, expr):
        """Rewrite a child that must not become an iterator expression (an operand of an unsupported node)."""
        out = self.mutate(expr)
        if isinstance(out, IterMapExpr):
            self.errors.append(f"{expr} cannot be used as an iterator here")
            return expr
        return out

    def mutate(self, expr):
        """Rewrite ``expr`` bottom-up into an iterator-map expression where it is one (see the module docstring)."""
        kind = type(expr)
        if isinstance(expr, E.Var):
            return self.var_map.get(id(expr), expr)
        if kind in (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod) and _is_index(expr.dtype):
            a, b = self.mutate(expr.a), self.mutate(expr.b)
            folded = _fold(kind, a, b)
            if folded is not None:
                return folded
            if not isinstance(a, IterMapExpr) and not isinstance(b, IterMapExpr):
                return expr if a is expr.a and b is expr.b else kind(a, b)
            return getattr(self, "_" + kind.__name__.lower())(expr, a, b)
        if isinstance(expr, IterMapExpr | E.IntImm | E.FloatImm | E.StringImm):
            return expr
        # any other node: an input iterator inside it cannot be expressed as an iterator map
        for v in undefined_vars(expr):
            if id(v) in self.var_map:
                self.errors.append(f"{expr} uses the iterator {v.name_hint} in a way an iterator map cannot express")
                break
        return expr

    def _add(self, expr, a, b, sign=1):
        args = list(to_sum(a).args)
        base = to_sum(a).base
        if isinstance(b, IterMapExpr):
            rhs = to_sum(b)
            for split in rhs.args:
                self._add_split(args, split, sign)
            base = _op.add(base, rhs.base) if sign > 0 else _op.subtract(base, rhs.base)
        else:
            base = _op.add(base, b) if sign > 0 else _op.subtract(base, b)
        return IterSumExpr(tuple(args), base)

    def _sub(self, expr, a, b):
        return self._add(expr, a, b, -1)

    @staticmethod
    def _add_split(args, split, sign):
        for i, cur in enumerate(args):
            if cur.source is split.source and ekey(cur.lower_factor) == ekey(split.lower_factor) and \
                    ekey(cur.extent) == ekey(split.extent):
                f = _op.add if sign > 0 else _op.subtract
                args[i] = split.with_fields(scale=f(cur.scale, split.scale))
                return
        if sign < 0:
            split = split.with_fields(scale=_op.subtract(_op.const(0, split.scale.dtype), split.scale))
        args.append(split)

    def _mul(self, expr, a, b):
        if isinstance(a, IterMapExpr) and isinstance(b, IterMapExpr):
            self.errors.append(f"the product of two iterators cannot be an iterator map: {expr}")
            return expr
        if not isinstance(a, IterMapExpr):
            a, b = b, a
        if isinstance(a, IterSumExpr):
            return IterSumExpr(tuple(s.with_fields(scale=_op.multiply(s.scale, b)) for s in a.args),
                               _op.multiply(a.base, b))
        return a.with_fields(scale=_op.multiply(a.scale, b))

    def _floordiv(self, expr, a, b):
        return self._division(expr, a, b, self._split_floordiv)

    def _floormod(self, expr, a, b):
        return self._division(expr, a, b, self._split_floormod)

    def _division(self, expr, a, b, split_fn):
        if isinstance(b, IterMapExpr):
            self.errors.append(f"the divisor of {expr} may not be an iterator")
            return expr
        dividend = self._preprocess_dividend(a, expr.a)
        if dividend is None:
            return expr
        out = split_fn(dividend.args[0], dividend.base, b)
        return expr if out is None else out

    def _preprocess_dividend(self, dividend, original):
        if isinstance(dividend, IterSplitExpr):
            return IterSumExpr((dividend,), _op.const(0, dividend.dtype))
        if not dividend.args:
            return None
        if len(dividend.args) == 1:
            return dividend
        fused = self.try_fuse(dividend, self.level, True)
        if fused is None:
            self.errors.append(f"the dividend {original} cannot be written as one fused iterator")
            return None
        return fused

    # ---- digits of a split
    def can_prove_divisible(self, lhs, rhs):
        """Whether ``rhs`` provably divides ``lhs`` (iterator-map operands are converted to expressions first)."""
        if isinstance(rhs, E.IntImm) and rhs.value == 0:
            return False
        if isinstance(lhs, E.IntImm) and isinstance(rhs, E.IntImm):
            return lhs.value % rhs.value == 0
        conv = IterMapToExpr(self.ana)
        dividend, divisor = conv.convert(lhs), conv.convert(rhs)
        return poly_divisible(dividend, divisor) or self.ana.can_prove_equal(dividend, divisor) or \
            self.ana.can_prove(_op.equal(_op.floormod(dividend, divisor), 0))

    def _split_floordiv(self, lhs, base, rhs):
        """``(lhs + base) // rhs`` as a split, or None."""
        if _is_int(rhs, 1):
            return lhs if _is_int(base, 0) else IterSumExpr((lhs,), base)
        dtype = rhs.dtype
        if not _is_int(lhs.scale, 1):
            if self.can_prove_divisible(lhs.scale, rhs) and _is_int(base, 0):
                return lhs.with_fields(scale=_op.floordiv(lhs.scale, rhs))
            if self.can_prove_divisible(lhs.scale, rhs) and self.can_prove_divisible(base, rhs):
                return IterSumExpr((lhs.with_fields(scale=_op.floordiv(lhs.scale, rhs)),), _op.floordiv(base, rhs))
            if self.can_prove_divisible(rhs, lhs.scale) and _is_int(base, 0):
                rhs = _op.floordiv(rhs, lhs.scale)
            elif self.can_prove_divisible(rhs, lhs.scale) and self.can_prove_divisible(base, lhs.scale):
                base, rhs = _op.floordiv(base, lhs.scale), _op.floordiv(rhs, lhs.scale)
            else:
                self.errors.append(f"the scale {lhs.scale} of a dividend and the divisor {rhs} do not divide")
                return None
            lhs = lhs.with_fields(scale=_op.const(1, dtype))
        padded, left_pad = self._pad_dividend(lhs, base, rhs)
        if padded is None:
            return None
        simplify = self.ana.simplify
        if self.can_prove_divisible(padded.extent, rhs):
            new = IterSplitExpr(padded.source, _op.multiply(padded.lower_factor, rhs),
                                _exact_div(simplify, padded.extent, rhs), padded.scale)
        elif _is_int(padded.lower_factor, 1) and self._eq(padded.extent, padded.source.extent):
            new = IterSplitExpr(padded.source, rhs, simplify(_ceildiv(padded.extent, rhs)), padded.scale)
        else:
            new = IterSplitExpr(IterMark(padded, padded.extent), rhs, simplify(_ceildiv(padded.extent, rhs)),
                                _op.const(1, dtype))
        new_base = self.ana.simplify(_op.floordiv(_op.subtract(base, left_pad), rhs), 6)
        return new if _is_int(new_base, 0) else IterSumExpr((new,), new_base)

    def _split_floormod(self, lhs, base, rhs):
        """``(lhs + base) % rhs`` as a split, or None."""
        if _is_int(rhs, 1):
            return _op.const(0, lhs.dtype)
        if not _is_int(lhs.scale, 1):
            if self.can_prove_divisible(lhs.scale, rhs) and self.can_prove_divisible(base, rhs):
                return _op.const(0, lhs.dtype)
            if self.can_prove_divisible(rhs, lhs.scale) and _is_int(base, 0):
                rhs = _op.floordiv(rhs, lhs.scale)
            elif self.can_prove_divisible(rhs, lhs.scale) and self.can_prove_divisible(base, lhs.scale):
                rhs, base = _op.floordiv(rhs, lhs.scale), _op.floordiv(base, lhs.scale)
            else:
                self.errors.append(f"the scale {lhs.scale} of a dividend and the modulus {rhs} do not divide")
                return None
        padded, _ = self._pad_dividend(lhs, base, rhs)
        if padded is None:
            return None
        return IterSplitExpr(padded.source, padded.lower_factor, rhs, padded.scale)

    def _pad_dividend(self, split, base, divisor):
        """``split + base`` padded so that ``divisor`` divides it: (the split over the padded mark, the left
        padding), or (None, None) when the mark's padding does not fit this use."""
        ana = self.ana
        left_pad = ana.simplify(_op.floormod(base, divisor))
        right_edge = _op.add(left_pad, split.extent)
        right_pad = _op.const(0, divisor.dtype) if self.can_prove_divisible(right_edge, divisor) else \
            ana.simplify(_op.floormod(_op.subtract(_op.const(0, divisor.dtype), right_edge), divisor))
        mark = split.source
        if self.update_padding:
            info = self.padded_map.setdefault(ekey(mark), _Padding(divisor.dtype))
            info.factor = _lcm_approx(info.factor, _op.multiply(divisor, split.lower_factor), ana)
            if _is_int(left_pad, 0) and _is_int(right_pad, 0):
                return split, _op.const(0, divisor.dtype)
            self.requires_padding = True
            info.left = _op.maximum(info.left, _op.multiply(left_pad, split.lower_factor))
            extent = ana.simplify(_op.add(_op.add(left_pad, split.extent), right_pad))
            return split.with_fields(extent=extent), left_pad
        info = self.padded_map.get(ekey(mark))
        if info is None:
            return split, left_pad
        if _is_int(info.left, 0) and self.can_prove_divisible(mark.extent, info.factor):
            return split, left_pad
        if info.padded is None:
            mark_left = info.left
            if not self.can_prove_divisible(mark_left, split.lower_factor):
                self.errors.append(f"incompatible left padding {mark_left} on {split}")
                return None, None
            left_pad = _op.floordiv(mark_left, split.lower_factor)
            edge = _op.add(mark.extent, mark_left)
            zero = _op.const(0, edge.dtype)
            mark_right = zero if self.can_prove_divisible(edge, info.factor) else \
                _op.floormod(_op.subtract(zero, edge), info.factor)
            info.right = mark_right
            info.padded = IterMark(IterSumExpr((IterSplitExpr(mark, 1, mark.extent, 1),), mark_left),
                                   ana.simplify(_op.add(edge, mark_right)))
            self.padded_origin[ekey(info.padded)] = mark
            src, f = info.padded.source, info.factor
            left_pred = _op.logical_and(_op.not_equal(mark_left, 0), _op.logical_and(
                _op.equal(_op.floordiv(src, f), 0), _op.less(_op.floormod(src, f), mark_left)))
            right_pred = _op.logical_and(_op.not_equal(mark_right, 0), _op.logical_and(
                _op.equal(_op.floordiv(src, f), _op.floordiv(edge, f)),
                _op.greater_equal(_op.floormod(src, f), _op.floormod(edge, f))))
            self.padding_predicate = _op.logical_or(self.padding_predicate, _op.logical_or(left_pred, right_pred))
        return split.with_fields(source=info.padded,
                                 extent=_op.floordiv(info.padded.extent, split.lower_factor)), left_pad


def _exact_div(simplify, a, b):
    """``a // b`` where ``b`` divides ``a``: the polynomial quotient when there is one (``c1 * c0 // c0`` is
    ``c1``), else the simplifier's."""
    quotient = poly_quotient(a, b) if not isinstance(a, E.IntImm) else None
    return simplify(_op.floordiv(a, b)) if quotient is None else quotient


def _range_as(rng, dtype):
    """A range with constant ends in ``dtype`` (the iterator's): ``Range(0, 8)`` of an int64 loop variable."""
    if rng.min.dtype == dtype and rng.extent.dtype == dtype:
        return rng
    lo, ext = (_op.cast(e, dtype) if isinstance(e, E.IntImm) else e for e in (rng.min, rng.extent))
    return E.Range.from_min_extent(lo, ext)


def _ceildiv(a, b):
    return _op.floordiv(_op.subtract(_op.add(a, b), 1), b)
