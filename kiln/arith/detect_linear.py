"""``detect_linear_equation`` and ``detect_clip_bound`` (TVM's ``arith.DetectLinearEquation`` and
``arith.DetectClipBound``).

``detect_linear_equation(e, [v0, .., vn-1])`` writes ``e`` as ``c0 * v0 + ... + cn-1 * vn-1 + base``: the variables
are taken one at a time, each split off the base left by the previous ones; a coefficient may be any expression of
the other variables that come before it, but not of itself or of later ones (then, or when some ``vi`` occurs other
than linearly, the answer is ``[]``).

``detect_clip_bound(cond, vars)`` reads a conjunction of comparisons, each of which names exactly one of ``vars`` with
coefficient +1 or -1 (after the condition is simplified), as lower and upper bounds of the variables:
``[min0, max0, min1, max1, ...]``, with None for a side no comparison bounds, or ``[]`` when some conjunct is not of
that form.
"""

from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir import op as _op
from ..tir.stmt_functor import post_order_visit


class _NotLinear(Exception):
    """The expression is not linear in the variable."""


def _uses(expr, var):
    found = []
    post_order_visit(expr, lambda e: found.append(e) if e is var else None)
    return bool(found)


def _combine(build, a, b, neg_b=False):
    """``build(a, b)`` where either side may be absent (None stands for zero)."""
    if b is None:
        return a
    if a is None:
        return _op.multiply(b, -1) if neg_b else b
    return build(a, b)


def _split(e, var):
    """``(coeff, base)`` with ``e == coeff * var + base``; None stands for a zero part."""
    kind = type(e)
    if e is var:  # the coefficient is signed (128 - c has coefficient -1 for an unsigned c)
        t = _dt.DataType.parse(var.dtype)
        return E.IntImm(f"int{t.bits}" if t.is_integer() else var.dtype, 1), None
    if kind in (E.Add, E.Sub):
        ca, ba = _split(e.a, var)
        cb, bb = _split(e.b, var)
        if kind is E.Add:
            return _combine(_op.add, ca, cb), _combine(_op.add, ba, bb)
        return _combine(_op.subtract, ca, cb, True), _combine(_op.subtract, ba, bb, True)
    if kind is E.Mul:
        ca, ba = _split(e.a, var)
        cb, bb = _split(e.b, var)
        if ca is not None:
            ca, ba, cb, bb = cb, bb, ca, ba
        if ca is not None:
            raise _NotLinear
        if ba is None:
            return None, None
        return (None if cb is None else _op.multiply(ba, cb)), (None if bb is None else _op.multiply(ba, bb))
    if _uses(e, var):
        raise _NotLinear
    return None, e


def _zero(var):
    return E.IntImm(var.dtype, 0)


def detect_linear_equation(expr, var_list):
    """The coefficients of ``expr`` in the variables and its remaining base: ``[c0, ..., cn-1, base]``, or ``[]``
    when ``expr`` is not linear in them.

    Examples
    --------
    >>> a, b = tir.Var("a", "int32"), tir.Var("b", "int32")
    >>> [str(c) for c in detect_linear_equation(a * 4 + b * 6 + 7, [a])]
    ['4', 'b * 6 + 7']
    """
    from .analyzer import Analyzer

    base = E.convert(expr)
    coeffs = []
    for var in var_list:
        try:
            coeff, rest = _split(base, var)
        except _NotLinear:
            return []
        coeffs.append(coeff if coeff is not None else _zero(var))
        base = rest if rest is not None else _zero(var)
    for i in range(1, len(coeffs)):
        if any(_uses(coeffs[i - 1], v) for v in var_list[i:]):
            return []
    ana = Analyzer()
    return [ana.simplify(c) for c in coeffs] + [ana.simplify(base)]


def _conjuncts(cond):
    if isinstance(cond, E.And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    return [cond]


def _clip_one(cond, bounds, ana):
    """Record the bound ``cond`` puts on its one variable of ``bounds``; False when it is not such a comparison."""
    named = []
    post_order_visit(cond, lambda e: named.append(e) if isinstance(e, E.Var) and id(e) in bounds else None)
    if not named or any(v is not named[0] for v in named):
        return False
    var = named[0]
    kind = type(cond)
    if kind not in (E.LT, E.LE, E.GT, E.GE, E.EQ) or not _dt.DataType.parse(cond.a.dtype).is_int():
        return False
    one = E.IntImm(cond.a.dtype, 1)
    # the canonical form: nonneg >= 0 (== 0 for EQ)
    nonneg = {E.LT: lambda: cond.b - cond.a - one, E.LE: lambda: cond.b - cond.a, E.GT: lambda: cond.a - cond.b - one,
              E.GE: lambda: cond.a - cond.b, E.EQ: lambda: cond.a - cond.b}[kind]()
    try:
        coeff, base = _split(nonneg, var)
    except _NotLinear:
        return False
    base = base if base is not None else _zero(var)
    coeff = ana.simplify(coeff) if coeff is not None else None
    lo = hi = None
    if isinstance(coeff, E.IntImm) and coeff.value == 1:  # var + base >= 0: var >= -base
        lo = _op.multiply(base, -1) if not isinstance(base, E.IntImm) else E.IntImm(base.dtype, -base.value)
        hi = lo if kind is E.EQ else None
    elif isinstance(coeff, E.IntImm) and coeff.value == -1:  # base - var >= 0: var <= base
        hi = base
        lo = hi if kind is E.EQ else None
    if lo is None and hi is None:
        return False
    entry = bounds[id(var)]
    if lo is not None:
        entry[0] = lo if entry[0] is None else _op.maximum(entry[0], lo)
    if hi is not None:
        entry[1] = hi if entry[1] is None else _op.minimum(entry[1], hi)
    return True


def detect_clip_bound(cond, var_list):
    """Lower and upper bounds of each variable that the conjunction ``cond`` states: ``[min0, max0, ...]`` (None
    where unbounded), or ``[]`` when a conjunct is not a comparison of one of them with coefficient +-1.

    Examples
    --------
    >>> a, b = tir.Var("a", "int32"), tir.Var("b", "int32")
    >>> [str(x) for x in detect_clip_bound(tir.all(a < b * 6, a - 1 > 0), [a])]
    ['2', 'b * 6 - 1']
    """
    from .analyzer import Analyzer

    ana = Analyzer()
    bounds = {id(v): [None, None] for v in var_list}
    for c in _conjuncts(ana.simplify(cond)):
        if not _clip_one(c, bounds, ana):
            return []
    out = []
    for v in var_list:
        for x in bounds[id(v)]:
            out.append(None if x is None else ana.simplify(x))
    return out
