"""Linear inequalities solved by Fourier-Motzkin elimination (TVM's ``arith.solve_linear_inequalities``,
``solve_linear_inequality.cc``).

Every relation is normalized to ``e <= 0`` (or ``e == 0``). Variables are eliminated in order: the relations with
``x`` are split by the sign of its coefficient into upper bounds ``a * x <= U`` and lower bounds ``b * x >= L``
(an equation gives one of each; a variable's range two more); every pair gives the relation ``a * L <= b * U``
without ``x`` for the next variable; and ``x``'s own bounds, scaled to one common coefficient, are kept as its
:class:`IntGroupBounds` (redundant ones dropped, a bound that is both lower and upper an equality). The result is
read back as conditions, as ranges (each variable's best range given the later ones), or as a deskewed system
whose variables start at zero.
"""

import math
from dataclasses import dataclass, field

from ..ir.node import IGNORE, Node
from ..tir import expr as E
from ..tir import op as _op
from ..tir.stmt_functor import substitute
from .int_solver import IntConstraints, IntConstraintsTransform


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IntGroupBounds(Node):
    """Bounds of ``coef * x``: each of ``lower`` at most, each of ``equal`` exactly, each of ``upper`` at least
    (TVM's ``arith.IntGroupBounds``)."""

    coef: E.PrimExpr
    lower: tuple
    equal: tuple
    upper: tuple
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    type_key = "arith.IntGroupBounds"

    def __post_init__(self):
        for name in ("lower", "equal", "upper"):
            object.__setattr__(self, name, tuple(E.convert(e) for e in getattr(self, name)))
        object.__setattr__(self, "coef", E.convert(self.coef))

    @staticmethod
    def from_range(rng):
        """The bounds ``min <= x <= min + extent - 1``."""
        from .analyzer import Analyzer

        one = _op.const(1, rng.min.dtype)
        if _op.is_const_int(rng.extent, 1):
            return IntGroupBounds(one, (), (rng.min,), ())
        last = Analyzer().simplify(_op.subtract(_op.add(rng.min, rng.extent), 1))
        return IntGroupBounds(one, (rng.min,), (), (last,))

    def with_range(self, rng):
        """These bounds and those of ``rng`` (scaled by the coefficient)."""
        from .analyzer import Analyzer

        ana = Analyzer()
        if _op.is_const_int(rng.extent, 1):
            return IntGroupBounds(self.coef, self.lower, (ana.simplify(_op.multiply(rng.min, self.coef)),)
                                  + self.equal, self.upper)
        last = _op.subtract(_op.add(rng.min, rng.extent), 1)
        return IntGroupBounds(self.coef, (ana.simplify(_op.multiply(rng.min, self.coef)),) + self.lower, self.equal,
                              (ana.simplify(_op.multiply(last, self.coef)),) + self.upper)

    def substitute(self, vmap):
        """The bounds with variables replaced."""
        return IntGroupBounds(substitute(self.coef, vmap), [substitute(e, vmap) for e in self.lower],
                              [substitute(e, vmap) for e in self.equal], [substitute(e, vmap) for e in self.upper])

    def find_best_range(self, vranges=None):
        """The narrowest Range of ``x`` these bounds give with ``vranges`` known, or None when unbounded."""
        from .analyzer import Analyzer
        from .int_set import eval_set

        vranges = dict(vranges or {})
        ana = Analyzer()
        for v, r in vranges.items():
            ana.bind(v, r)
        lowers, uppers = list(self.equal) + list(self.lower), list(self.equal) + list(self.upper)
        if len(lowers) == 1 and len(uppers) == 1 and _op.is_const_int(self.coef, 1):
            return E.Range(ana.simplify(lowers[0]), ana.simplify(_op.add(uppers[0], 1)))
        best_lower = best_over = None
        coef = self.coef
        for low in lowers:
            for upp in uppers:
                over = None
                s1 = eval_set(ana.simplify(_op.floordiv(_op.subtract(upp, low), coef), 3), vranges, ana)
                if s1.has_upper_bound():
                    over = ana.simplify(s1._max, 3)
                low_div = ana.simplify(_op.floordiv(_op.subtract(_op.add(low, coef), 1), coef), 3)
                s2 = eval_set(ana.simplify(_op.subtract(_op.floordiv(upp, coef), low_div), 3), vranges, ana)
                if s2.has_upper_bound():
                    over2 = ana.simplify(s2._max, 3)
                    over = over2 if over is None or ana.can_prove(_op.less(_op.subtract(over2, over), 0)) else over
                if over is not None and (best_over is None or
                                         ana.can_prove(_op.less(_op.subtract(over, best_over), 0))):
                    best_lower, best_over = low_div, over
        if best_lower is None:
            return None
        return E.Range.from_min_extent(best_lower, ana.simplify(_op.add(best_over, 1)))


def _normalize(cond, ana):
    """``cond`` with each comparison as ``e <= 0`` / ``e == 0`` (``a < b`` is ``a - b + 1 <= 0`` on integers)."""
    kind = type(cond)
    if kind in (E.And, E.Or):
        return kind(_normalize(cond.a, ana), _normalize(cond.b, ana))
    if kind is E.Not:
        return E.Not(_normalize(cond.a, ana))
    flip = {E.GT: E.LT, E.GE: E.LE}
    if kind in flip:
        kind, a, b = flip[kind], cond.b, cond.a
    elif kind in (E.LT, E.LE, E.EQ, E.NE):
        a, b = cond.a, cond.b
    else:
        return cond
    zero = _op.const(0, a.dtype)
    if kind is E.LT and a.dtype.startswith(("int", "uint")):
        return E.LE(ana.simplify(_op.add(_op.subtract(a, b), 1)), zero)
    return kind(ana.simplify(_op.subtract(a, b)), zero)


def _add_inequality(found, new, ana):
    from ..ir import structural_equal

    if ana.can_prove(new) or any(structural_equal(e, new) for e in found):
        return
    if isinstance(new, E.LE):
        keep = []
        for e in found:
            if isinstance(e, E.LE) and ana.can_prove(_op.less_equal(_op.subtract(new.a, e.a), 0)):
                return  # a weaker (or equal) bound is already there
            if not (isinstance(e, E.LE) and ana.can_prove(_op.less_equal(_op.subtract(e.a, new.a), 0))):
                keep.append(e)
        found[:] = keep
    found.append(new)


def _prune(bounds, ana, redundant, dominated):
    out = []
    for b in bounds:
        if any(ana.can_prove(redundant(o, b)) for o in out):
            continue
        out = [o for o in out if not ana.can_prove(dominated(o, b))]
        out.append(b)
    return out


def _solve(system):
    """Fourier-Motzkin over ``system``'s variables: ({var: IntGroupBounds}, other relations)."""
    from ..ir import structural_equal
    from .analyzer import Analyzer
    from .detect_linear import detect_linear_equation

    ana = Analyzer()
    for v, r in system.ranges.items():
        ana.bind(v, r)
    current, rest = [], []
    for rel in system.relations:
        _add_inequality(current, _normalize(ana.simplify(rel), ana), ana)
    bounds = {}
    for var in system.variables:
        nxt, pos, neg = [], [], []
        if var in system.ranges:
            rng = system.ranges[var]
            neg.append((-1, ana.simplify(rng.min)))
            pos.append((1, ana.simplify(_op.subtract(0, _op.subtract(_op.add(rng.min, rng.extent), 1)))))
        for rel in current:
            if isinstance(rel, E.LE | E.EQ):
                coef = detect_linear_equation(rel.a, [var])
                if coef and isinstance(coef[0], E.IntImm):
                    c, rest_expr = coef[0].value, coef[1]
                    if c == 0:
                        _add_inequality(nxt, rel, ana)
                    elif isinstance(rel, E.LE):
                        (pos if c > 0 else neg).append((c, rest_expr))
                    else:  # c * x + r == 0: both c * x + r <= 0 and -c * x - r <= 0
                        neg_rest = _op.subtract(_op.const(0, rest_expr.dtype), rest_expr)
                        pos.append((c, rest_expr) if c > 0 else (-c, neg_rest))
                        neg.append((-c, neg_rest) if c > 0 else (c, rest_expr))
                    continue
            rest.append(rel)
        for cp, rp in pos:  # cp * x + rp <= 0 and cn * x + rn <= 0 (cn < 0) give cp * rn - cn * rp... <= 0
            for cn, rn in neg:
                g = math.gcd(cp, -cn)
                new = E.LE(_op.subtract(_op.multiply(_op.const(cp // g, var.dtype), rn),
                                        _op.multiply(_op.const(cn // g, var.dtype), rp)), _op.const(0, var.dtype))
                _add_inequality(nxt, _normalize(ana.simplify(new), ana), ana)
        lcm = 1
        for c, _ in pos + neg:
            lcm = lcm * abs(c) // math.gcd(lcm, abs(c))
        uppers = [ana.simplify(_op.multiply(_op.const(-lcm // c, var.dtype), r)) for c, r in pos]
        lowers = [ana.simplify(_op.multiply(_op.const(-lcm // c, var.dtype), r)) for c, r in neg]
        uppers = _prune(uppers, ana, lambda o, b: _op.less_equal(_op.subtract(o, b), 0),
                        lambda o, b: _op.greater_equal(_op.subtract(o, b), 0))
        lowers = _prune(lowers, ana, lambda o, b: _op.greater_equal(_op.subtract(o, b), 0),
                        lambda o, b: _op.less_equal(_op.subtract(o, b), 0))
        equal = []
        for u in list(uppers):
            match = next((lo for lo in lowers if structural_equal(lo, u)), None)
            if match is not None:
                equal.append(match)
                lowers.remove(match)
                uppers.remove(u)
        equal.sort(key=_size)
        bounds[var] = IntGroupBounds(_op.const(lcm, var.dtype), lowers, equal, uppers)
        current = nxt
    others = []
    for e in current:
        e = ana.simplify(e)
        if _op.is_const_int(e, 0):
            others = [_op.const(False)]
            break
        if not _op.is_const_int(e, 1):
            others.append(e)
    return bounds, others + rest


def _size(e):
    from ..tir.stmt_functor import children

    n, stack = 0, [e]
    while stack:
        n += 1
        stack.extend(children(stack.pop()))
    return n


def as_conditions(variables, bounds, relations):
    """The solved system as a list of conditions: ``coef * x (== | >= | <=) bound`` for each variable's bounds, then
    the other relations."""
    out = []
    for v in variables:
        b = bounds[v]
        lhs = _op.multiply(b.coef, v)
        out += [_op.equal(lhs, r) for r in b.equal] + [_op.greater_equal(lhs, r) for r in b.lower]
        out += [_op.less_equal(lhs, r) for r in b.upper]
    return out + list(relations)


def _system(equations, variables, ranges):
    if isinstance(equations, IntConstraints):
        return equations
    return IntConstraints(variables, ranges, equations)


def solve_inequalities_as_condition(variables, ranges=None, relations=None):
    """The solved system as conditions (TVM's ``arith._ffi_api.SolveInequalitiesAsCondition``); also takes one
    :class:`IntConstraints`."""
    system = _system(relations, variables, ranges) if relations is not None else variables
    bounds, others = _solve(system)
    return as_conditions(system.variables, bounds, others)


def solve_inequalities_to_range(equations, variables=None, ranges=None):
    """The solved system with each variable's best range (the later variables' known), and the conditions those
    ranges do not already imply; ``{false}`` when a range is empty."""
    from .analyzer import Analyzer

    system = _system(equations, variables, ranges)
    bounds, others = _solve(system)
    vranges = dict(system.ranges)
    res_ranges = {}
    for var in reversed(system.variables):
        ana = Analyzer()
        for v, r in vranges.items():
            ana.bind(v, r)
        b = bounds[var]
        if _op.is_const_int(b.coef, 1) and b.equal:
            best = E.Range(b.equal[0], ana.simplify(_op.add(b.equal[0], 1)))
        else:
            if var in vranges:
                b = b.with_range(vranges[var])
            best = b.find_best_range(vranges)
            if best is not None and ana.can_prove(_op.greater_equal(_op.subtract(0, best.extent), 0)):
                return IntConstraints((), {}, (_op.const(False),))
        if best is not None:
            res_ranges[var] = best
            vranges[var] = best
    ana = Analyzer()
    for v, r in vranges.items():
        ana.bind(v, r)
    relations = [c for c in as_conditions(system.variables, bounds, others) if not ana.can_prove(c)]
    return IntConstraints(system.variables, res_ranges, relations)


def solve_inequalities_deskew_range(equations, variables=None, ranges=None):
    """The solved system with each variable shifted to start at zero (``x = x.shifted + min``), as an
    :class:`IntConstraintsTransform`; a variable with one value is replaced by it."""
    from .analyzer import Analyzer

    system = _system(equations, variables, ranges)
    bounds, others = _solve(system)
    ana = Analyzer()
    vranges = dict(system.ranges)
    for v, r in vranges.items():
        ana.bind(v, r)
    src_to_dst, dst_to_src, new_vars, new_ranges = {}, {}, [], {}
    for var in reversed(system.variables):
        b = bounds[var].substitute(src_to_dst)
        if _op.is_const_int(b.coef, 1) and b.equal:
            src_to_dst[var] = b.equal[0]
            continue
        if var in vranges:
            b = b.with_range(vranges[var])
        best = b.find_best_range(vranges)
        if best is None:
            src_to_dst[var] = dst_to_src[var] = var
            new_vars.append(var)
        elif _op.is_const_int(best.extent, 1):
            src_to_dst[var] = best.min
        elif ana.can_prove(_op.greater_equal(_op.subtract(0, best.extent), 0)):
            return IntConstraintsTransform(system, IntConstraints((), {}, (_op.const(False),)), {}, {})
        else:
            shifted = E.Var(var.name_hint + ".shifted", var.dtype)
            src_to_dst[var] = _op.add(shifted, best.min)
            dst_to_src[shifted] = ana.simplify(_op.subtract(var, substitute(best.min, dst_to_src)))
            rng = E.Range.from_min_extent(_op.const(0, var.dtype), best.extent)
            new_vars.append(shifted)
            new_ranges[shifted] = vranges[shifted] = rng
            ana.bind(shifted, rng)
    relations = []
    for cond in as_conditions(system.variables, bounds, others):
        cond = ana.simplify(substitute(cond, src_to_dst))
        if not _op.is_const_int(cond, 1):
            relations.append(cond)
    dst = IntConstraints(new_vars[::-1], new_ranges, relations)
    return IntConstraintsTransform(system, dst, src_to_dst, dst_to_src)


def solve_linear_inequalities(equations, variables=None, ranges=None, deskew_range=False):
    """Solve linear inequalities (TVM's ``arith.solve_linear_inequalities``): an :class:`IntConstraints` with
    each variable's best range, or with ``deskew_range`` an :class:`IntConstraintsTransform` to variables that
    start at zero.

    Examples
    --------
    >>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    >>> sol = solve_linear_inequalities([x + y >= 10, x - y >= 2, x <= 6], [x, y])
    >>> int(sol.ranges[x].min), int(sol.ranges[y].min)
    (6, 4)
    """
    solver = solve_inequalities_deskew_range if deskew_range else solve_inequalities_to_range
    return solver(equations, variables, ranges)
