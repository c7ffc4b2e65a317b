"""TVM's ``CanonicalSimplifier`` (``Analyzer.canonical_simplify``): index arithmetic collected into the canonical
forms of :mod:`kiln.arith.canonical_form` and printed back in their fixed order.

It extends the rewrite simplifier (:class:`kiln.arith.pattern_simplify.PatternSimplifier`), as TVM's does: ``+``,
``-``, ``*``, the four divisions, casts and ``<`` of int32/int64 build forms from their operands' forms, every other
node goes through the rewrite rules, and whatever leaves a visit is normalized back into an expression. Division by a
positive constant splits a sum into the part the constant divides and the rest; a division or remainder of one split
term narrows its factors, which is how ``x / 6 * 6 + x % 6 / 3 * 3 + x % 3`` becomes ``x``.
"""

from math import gcd

from ..tir import expr as E
from ..tir import op as _op
from .canonical_form import FLOOR, TRUNC, SplitExpr, SumExpr, mod_impl
from .const_int_bound import POS_INF
from .linear import expr_key
from .pattern import make_const, try_const_fold
from .pattern_simplify import PatternSimplifier
from .rules.common import LT_, is_index_type

_CANONICAL = (SumExpr, SplitExpr)


def _normalize(e):
    return e.normalize() if isinstance(e, _CANONICAL) else e


def _unpack_mul(e, out):
    if type(e) is E.Mul:
        _unpack_mul(e.a, out)
        _unpack_mul(e.b, out)
    else:
        out.append(e)
    return out


def mul_and_normalize(a, b):
    """The product of ``a`` and ``b`` with its constant factors gathered at the end (TVM's ``MulAndNormalize``)."""
    scale, res = 1, make_const(1, a.dtype)
    for f in _unpack_mul(a, []) + _unpack_mul(b, []):
        if type(f) is E.IntImm:
            scale *= f.value
        else:
            res = _op.multiply(res, f)
    return _op.multiply(res, make_const(scale, res.dtype)) if scale != 1 else res


class CanonicalSimplifier(PatternSimplifier):
    """TVM's canonical simplifier; use through :meth:`kiln.arith.Analyzer.canonical_simplify`."""

    def __call__(self, expr):
        return self.visit_expr(E.convert(expr))

    def visit_expr(self, expr):
        return _normalize(super().visit_expr(expr))

    def canonical_mutate(self, expr):
        """Visit without normalizing: the result may be a canonical form."""
        return PatternSimplifier.visit_expr(self, expr)

    def _literal_constraints(self):
        return []  # TVM enters constraints into the rewrite simplifier only

    # ---- conversions
    def to_split(self, e):
        if isinstance(e, SplitExpr):
            return e
        if isinstance(e, SumExpr):
            if e.base == 0 and len(e.args) == 1:
                return e.args[0]
            e = e.normalize()
        return SplitExpr(e)

    def to_sum(self, e):
        if isinstance(e, SumExpr):
            return e
        if type(e) is E.IntImm:
            return SumExpr(e.dtype, [], e.value)
        return SumExpr(e.dtype, [self.to_split(e)])

    def convert_div_mode(self, e, mode):
        if e.div_mode == mode:
            return e
        if not e.div_mode_compatible(mode):
            e = self.to_split(e.normalize())
        e = e.copy()
        e.div_mode = mode
        return e

    # ---- sums and products
    def _operands(self, op):
        return self.canonical_mutate(op.a), self.canonical_mutate(op.b)

    def visit_add(self, op):
        return self._add_sub(op, 1)

    def visit_sub(self, op):
        return self._add_sub(op, -1)

    def _add_sub(self, op, sign):
        if not is_index_type(op.dtype):
            return PatternSimplifier._arith(self, op)
        a, b = self._operands(op)
        folded = try_const_fold(type(op), a, b)
        if folded is not None:
            return folded
        ret = self.to_sum(a).copy()
        if type(b) is E.IntImm:
            ret.base += sign * b.value
        elif isinstance(b, SumExpr):
            ret.add_sum(b, sign)
        else:
            ret.add_split(self.to_split(b), sign)
        return ret

    def visit_mul(self, op):
        if not is_index_type(op.dtype):
            return PatternSimplifier._arith(self, op)
        a, b = self._operands(op)
        folded = try_const_fold(E.Mul, a, b)
        if folded is not None:
            return folded
        if type(a) is E.IntImm:
            a, b = b, a
        if type(b) is E.IntImm:
            ret = a.copy() if isinstance(a, SumExpr) else self.to_split(a).copy()
            if isinstance(ret, SumExpr):
                ret.mul_to_self(b.value)
            else:
                ret.scale *= b.value
            return ret
        ret = mul_and_normalize(_normalize(a), _normalize(b))
        if type(ret) is E.Mul and ret.a is op.a and ret.b is op.b:
            return op
        return ret

    # ---- division
    @staticmethod
    def _separate(psum, coeff):
        """``psum`` split into the terms ``coeff`` divides and the rest."""
        div, rest = SumExpr(psum.dtype), SumExpr(psum.dtype)
        (div if psum.base % coeff == 0 else rest).base = psum.base
        for a in psum.args:
            (div if a.scale % coeff == 0 else rest).args.append(a.copy())
        return div, rest

    def split_div_const(self, lhs, cval, mode):
        lhs = self.convert_div_mode(lhs, mode).copy()
        if lhs.scale % cval == 0:
            lhs.scale //= cval
            return lhs
        if cval % lhs.scale == 0:
            scaled = cval // lhs.scale
            if lhs.upper_factor == POS_INF or lhs.upper_factor % (lhs.lower_factor * scaled) == 0:
                lhs.scale = 1
                lhs.lower_factor *= scaled
                return lhs
            if lhs.upper_factor <= lhs.lower_factor * scaled:
                return self.to_split(make_const(0, lhs.dtype))
            lhs.index = mod_impl(lhs.index, make_const(lhs.upper_factor, lhs.dtype), mode)
            lhs.upper_factor = POS_INF
            lhs.scale = 1
            lhs.lower_factor *= scaled
            return lhs
        lhs = self.to_split(lhs.normalize()).copy()
        lhs.lower_factor *= cval
        lhs.div_mode = mode
        return lhs

    def split_mod_const(self, lhs, cval, mode):
        lhs = self.convert_div_mode(lhs, mode).copy()
        if lhs.scale % cval == 0:
            lhs.scale = 0
            return lhs
        if cval % lhs.scale == 0:
            new_upper = lhs.lower_factor * (cval // lhs.scale)
            if lhs.upper_factor == POS_INF or lhs.upper_factor % new_upper == 0:
                if new_upper < lhs.upper_factor and lhs.upper_factor != POS_INF:
                    updated = self.to_split(self.visit_expr(mod_impl(lhs.index, make_const(new_upper, lhs.dtype),
                                                                     mode))).copy()
                    if lhs.lower_factor != 1:
                        ret = self.split_div_const(updated, lhs.lower_factor, mode)
                        ret.scale *= lhs.scale
                        return ret
                    updated.scale *= lhs.scale
                    return updated
                lhs.upper_factor = new_upper
                return lhs
            if new_upper % lhs.upper_factor == 0:
                return lhs
        lhs = self.to_split(lhs.normalize()).copy()
        lhs.div_mode = mode
        lhs.upper_factor = cval
        return lhs

    def _const_divisor(self, a, b):
        return b.value if type(b) is E.IntImm and b.value > 0 else None

    def visit_div(self, op):
        return self._division(op, TRUNC)

    def visit_floor_div(self, op):
        return self._division(op, FLOOR)

    def _division(self, op, mode):
        if not is_index_type(op.dtype):
            return PatternSimplifier._arith(self, op)
        a, b = self._operands(op)
        folded = try_const_fold(type(op), a, b)
        if folded is not None:
            return folded
        cval = self._const_divisor(a, b)
        if cval is not None:
            if cval == 1:
                return a
            if isinstance(a, SumExpr):
                lhs, extra = self._separate(a, cval)
                if extra.is_zero():
                    lhs.divide_by(cval)
                    return lhs
                if mode == FLOOR or (self.can_prove_ge(lhs.normalize(), 0) and
                                     self.can_prove_ge(extra.normalize(), 0)):
                    lhs.divide_by(cval)
                    temp = extra.normalize()
                    if type(temp) is E.IntImm:
                        lhs.base += temp.value // cval if mode == FLOOR else _tdiv(temp.value, cval)
                    elif mode == TRUNC and self.try_compare(temp, make_const(cval, temp.dtype)) != LT_:
                        lhs.add_split(self.split_div_const(self.to_split(temp), cval, mode), 1)
                    elif mode == FLOOR and not (self.try_compare(temp, make_const(cval, temp.dtype)) == LT_
                                                and self.can_prove_ge(temp, 0)):
                        lhs.add_split(self.split_div_const(self.to_split(temp), cval, mode), 1)
                    return lhs
            else:
                bound = self.bound(_normalize(a))
                if bound.min_value >= 0 and bound.max_value < cval:
                    return make_const(0, op.dtype)
            return self.split_div_const(self.to_split(a), cval, mode)
        a, b = _normalize(a), _normalize(b)
        simplified = prod_div_simplify(a, b)
        if simplified is not None:
            return (_op.truncdiv if mode == TRUNC else _op.floordiv)(simplified[0], simplified[1])
        if a is op.a and b is op.b:
            return op
        return type(op)(a, b)

    def visit_mod(self, op):
        return self._modulo(op, TRUNC)

    def visit_floor_mod(self, op):
        return self._modulo(op, FLOOR)

    def _modulo(self, op, mode):
        if not is_index_type(op.dtype):
            return PatternSimplifier._arith(self, op)
        a, b = self._operands(op)
        folded = try_const_fold(type(op), a, b)
        if folded is not None:
            return folded
        cval = self._const_divisor(a, b)
        if cval is not None:
            if isinstance(a, SumExpr):
                return self._mod_sum(a, cval, mode, b)
            else:
                bound = self.bound(_normalize(a))
                if bound.min_value >= 0 and bound.max_value < cval:
                    return a
            return self.split_mod_const(self.to_split(a), cval, mode)
        a, b = _normalize(a), _normalize(b)
        simplified = prod_div_simplify(a, b)
        if simplified is not None:
            lhs, rhs, scale = simplified
            return _op.multiply((_op.truncmod if mode == TRUNC else _op.floormod)(lhs, rhs), scale)
        if a is op.a and b is op.b:
            return op
        return type(op)(a, b)

    def _mod_sum(self, psum, cval, mode, divisor):
        lhs, extra = self._separate(psum, cval)
        if mode == TRUNC:
            if extra.is_zero():
                return make_const(0, psum.dtype)
            if self.can_prove_ge(lhs.normalize(), 0) and self.can_prove_ge(extra.normalize(), 0):
                temp = extra.normalize()
                if type(temp) is E.IntImm:
                    return _op.truncmod(temp, divisor)
                if self.try_compare(temp, make_const(cval, temp.dtype)) == LT_:
                    return temp
                psum = extra
            bound = self.bound(psum.normalize())
            new_base = _tmod(psum.base, cval)
            if bound.min_value >= 0 and bound.min_value - psum.base + new_base >= 0:
                psum = psum.copy()
                psum.base = new_base
            return self.split_mod_const(self.to_split(psum), cval, mode)
        temp = extra.normalize()
        if type(temp) is E.IntImm:
            return _op.floormod(temp, divisor)
        if self.try_compare(temp, make_const(cval, temp.dtype)) == LT_ and self.can_prove_ge(temp, 0):
            return temp
        psum = extra.copy()
        psum.base = psum.base % cval
        return self.split_mod_const(self.to_split(psum), cval, mode)

    def visit_reduce(self, op):
        from ..tir.expr_reduce import Reduce
        from .canonical_reduce import simplify_reduce

        ret = PatternSimplifier.visit_reduce(self, op)
        return simplify_reduce(self, ret) if type(ret) is Reduce else ret

    # ---- casts and comparisons
    def visit_cast(self, op):
        if not is_index_type(op.dtype):
            return PatternSimplifier.visit_cast(self, op)
        value = self.canonical_mutate(op.value)
        if isinstance(value, _CANONICAL):
            form = value.copy()
            if form.can_push_cast(op.dtype, self.analyzer):
                form.push_cast(op.dtype)
                return form
        return PatternSimplifier.visit_cast(self, op)

    def visit_lt(self, op):
        form = self.canonical_mutate(_op.subtract(op.a, op.b))
        if isinstance(form, SumExpr):
            g, scaled = form.base, False
            for a in form.args:
                if abs(a.scale) > 1:
                    scaled = True
                    g = gcd(g, abs(a.scale)) if g else abs(a.scale)
            g = abs(g)
            if scaled and g > 1:
                divisible, extra = self._separate(form, g)
                dtype = divisible.dtype
                rest = extra.normalize()
                if self.analyzer.can_prove(_op.less(rest, make_const(g, dtype))) and \
                        self.analyzer.can_prove(_op.greater(rest, make_const(-g, dtype))):
                    divisible.divide_by(g)
                    return PatternSimplifier.visit_expr(self, E.LT(divisible.normalize(), make_const(0, dtype)))
                if len(extra.args) == 1 and extra.args[0].upper_factor != POS_INF and \
                        extra.args[0].upper_factor % (g * extra.args[0].lower_factor) == 0:
                    divisible.divide_by(g)
                    split = extra.args[0]
                    lower = g * split.lower_factor
                    term = _op.floormod(_op.floordiv(split.index, lower), split.upper_factor // lower)
                    return PatternSimplifier.visit_expr(
                        self, E.LT(_op.add(divisible.normalize(), term), make_const(0, dtype)))
        return PatternSimplifier.visit_lt(self, op)


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _tmod(a, b):
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def prod_div_simplify(lhs, rhs):
    """Cancel factors shared by two products (TVM's ``ProdDivSimplify``): ``(new_lhs, new_rhs, common)`` with
    ``lhs == new_lhs * common`` and ``rhs == new_rhs * common``, or None when nothing cancels."""
    if type(rhs) is E.IntImm:
        return None
    lhs_prods, lscale = [], 1
    for f in _unpack_mul(lhs, []):
        if type(f) is E.IntImm:
            lscale *= f.value
        else:
            lhs_prods.append(f)
    new_rhs, common, rscale, eliminated = make_const(1, rhs.dtype), make_const(1, rhs.dtype), 1, 0
    for f in _unpack_mul(rhs, []):
        if type(f) is E.IntImm:
            rscale *= f.value
            continue
        for i, p in enumerate(lhs_prods):
            if p is not None and expr_key(p) == expr_key(f):
                lhs_prods[i] = None
                eliminated += 1
                common = _op.multiply(common, f)
                break
        else:
            new_rhs = _op.multiply(new_rhs, f)
    g = gcd(lscale, rscale) or 1
    if eliminated == 0 and g == 1:
        return None
    new_lhs = make_const(1, lhs.dtype)
    for p in lhs_prods:
        if p is not None:
            new_lhs = _op.multiply(new_lhs, p)
    return (_op.multiply(new_lhs, make_const(lscale // g, lhs.dtype)),
            _op.multiply(new_rhs, make_const(rscale // g, rhs.dtype)),
            _op.multiply(common, make_const(g, rhs.dtype)))
