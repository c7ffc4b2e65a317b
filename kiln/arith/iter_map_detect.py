"""Detecting an iterator map (TVM's ``DetectIterMap``): the predicate read as bounds, the constraints fused from the
smallest up, the indices rewritten twice when the first pass found padding (:mod:`kiln.arith.iter_map_rewriter`),
then every mark checked for independent digits.

A predicate is read as bounds ``lo <= e < hi`` (TVM's ``MatchBoundConstraints``): a bound on a single input
iterator narrows its range; a bound on a larger expression is fused first, into a mark of the constrained extent,
which the later fusions find again.
"""

from ..tir import expr as E
from ..tir import op as _op
from ..tir.analysis import undefined_vars
from .iter_affine_map import IterMapLevel, IterMapResult
from .iter_map_rewriter import IterMapRewriter, _is_index, _is_int


def _bound_constraints(pred, doms):
    """Read ``pred`` (a conjunction of comparisons) as bounds: narrows ``doms`` for single iterators and returns
    ``[(expr, lower or None, upper or None)]`` for the rest; None when ``pred`` is not such a conjunction."""
    from .analyzer import Analyzer

    out, parts, stack = [], [], [pred]
    while stack:  # the conjunction's comparisons, right to left as TVM peels them
        p = stack.pop()
        if isinstance(p, E.And):
            stack.extend((p.a, p.b))
        else:
            parts.append(p)
    by_id = {id(v): v for v in doms}

    def uses_iter(e):
        return any(id(v) in by_id for v in undefined_vars(e))

    for p in parts:
        if type(p) not in (E.LT, E.LE, E.GT, E.GE):
            return None
        lhs, rhs = p.a, p.b
        if not (_is_index(lhs.dtype) and _is_index(rhs.dtype)):
            return None
        if not (uses_iter(lhs) or uses_iter(rhs)):
            continue
        greater, equal = type(p) in (E.GT, E.GE), type(p) in (E.LE, E.GE)
        if isinstance(lhs, E.IntImm) or not uses_iter(lhs):
            at_left = True
        elif isinstance(rhs, E.IntImm) or not uses_iter(rhs):
            at_left = False
        else:  # move the iterator-free terms to the right
            at_left = False
            terms = _signed_terms(_op.subtract(lhs, rhs), uses_iter)
            zero = _op.const(0, lhs.dtype)
            lhs, rhs = zero, zero
            for e, sign in terms[0]:
                lhs = _op.add(lhs, e) if sign else _op.subtract(lhs, e)
            for e, sign in terms[1]:
                rhs = _op.subtract(rhs, e) if sign else _op.add(rhs, e)
            ana = Analyzer()
            lhs, rhs = ana.simplify(lhs), ana.simplify(rhs)
        lo = hi = None
        if greater:
            if at_left:
                hi, it = (_op.add(lhs, 1) if equal else lhs), rhs
            else:
                lo, it = (rhs if equal else _op.add(rhs, 1)), lhs
        elif at_left:
            lo, it = (lhs if equal else _op.add(lhs, 1)), rhs
        else:
            hi, it = (_op.add(rhs, 1) if equal else rhs), lhs
        if isinstance(it, E.Var):
            var = by_id.get(id(it))
            if var is not None:
                rng = doms[var]
                low, high = rng.min, _op.add(rng.min, rng.extent)
                low = low if lo is None else _op.maximum(low, lo)
                high = high if hi is None else _op.minimum(high, hi)
                doms[var] = E.Range(low, high)
        else:
            out.append((it, lo, hi))
    return out


def _signed_terms(expr, uses_iter):
    """The terms of a sum of differences, as ``[iterator terms, other terms]`` of ``(term, positive)``."""
    terms: list = [[], []]
    stack = [(expr, True)]
    while stack:
        e, sign = stack.pop()
        if isinstance(e, E.Add):
            stack.extend(((e.b, sign), (e.a, sign)))
        elif isinstance(e, E.Sub):
            stack.extend(((e.b, not sign), (e.a, sign)))
        else:
            terms[0 if uses_iter(e) else 1].append((e, sign))
    return terms


def _complexity(e):
    from ..tir.stmt_functor import post_order_visit

    count = [0]

    def visit(_):
        count[0] += 1

    post_order_visit(e, visit)
    return count[0]


def sanity_check(doms):
    """No iterator's range uses an iterator."""
    ids = {id(v) for v in doms}
    return not any(id(v) in ids for rng in doms.values() for e in (rng.min, rng.extent) for v in undefined_vars(e))


def detect(indices, doms, predicate, level, simplify_trivial):
    """:func:`kiln.arith.detect_iter_map` on converted arguments."""
    from .analyzer import Analyzer

    result = IterMapResult()
    if not sanity_check(doms):
        result.errors.append("invalid iterators: an iterator's range uses another iterator")
        return result
    doms = dict(doms)
    constraints = []
    if not _is_int(predicate, 1):
        constraints = _bound_constraints(predicate, doms)
        if constraints is None:
            result.errors.append("could not read the predicate as bounds on the input iterators")
            return result
    # smaller constraints first: a constraint's fused parts must be known before the constraints containing them
    constraints.sort(key=lambda c: _complexity(c[0]))
    rewriter = IterMapRewriter(Analyzer(), doms, level, simplify_trivial, result.errors)
    for expr, lo, hi in constraints:
        rewriter.rewrite_constraint(expr, lo, hi)
        if result.errors:
            return result
    if not rewriter.check_constraints():
        result.errors.append("invalid constraints: two constraints overlap without nesting")
        return result
    rewritten = []
    allow_padding = level != IterMapLevel.Bijective
    if allow_padding:
        for value in indices:
            rewritten.append(rewriter.rewrite_and_update_padding(value))
            if result.errors:
                return result
    if not allow_padding or rewriter.requires_padding:
        rewritten = []
        for value in indices:
            rewritten.append(rewriter.rewrite(value))
            if result.errors:
                return result
    result.padding_predicate = rewriter.padding_predicate
    if not rewriter.check_mapping(rewritten, level):
        result.errors.append("the index mapping is not bijective" if level == IterMapLevel.Bijective else
                             "the mapped indices are not independent")
        return result
    result.indices = rewritten
    return result


def normalize_to_sum(index, doms):
    """:func:`kiln.arith.normalize_to_iter_sum` on converted arguments."""
    from ..error import TIRError
    from .analyzer import Analyzer

    if not sanity_check(doms):
        raise TIRError("arith.normalize_to_iter_sum: an iterator's range uses another iterator")
    rewriter = IterMapRewriter(Analyzer(), doms, IterMapLevel.NoCheck, True, [])
    return rewriter.rewrite_to_normalized_sum(index)
