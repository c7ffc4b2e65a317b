"""Deducing the bound of one variable from a comparison (TVM's ``arith.deduce_bound``, ``bound_deducer.cc``).

``deduce_bound(x, cond, hint_map, relax_map)``: for ``cond`` a comparison in which ``x`` occurs exactly once, the
set of ``x`` for which ``cond`` holds whatever values the ``relax_map`` variables take. The comparison is turned
into ``expr (>= | <= | ==) result`` with ``x`` inside ``expr``; both sides are relaxed over ``relax_map`` (the
smallest ``expr`` against the largest ``result`` for ``>=``...); then the operations on the path from the root of
``expr`` down to ``x`` are undone one by one, each moving its other operand into ``result``: ``+``/``-`` subtract
or add it, ``*`` divides (rounding toward the bound's inside; a negative factor flips the comparison; an inexact
``==`` fails), ``//`` multiplies back. The signs of factors come from ``hint_map``. Anything else on the path
(``min``, ``%``, a load, ``x`` as a divisor) makes the result the empty set.
"""

from ..tir import expr as E
from ..tir import op as _op
from .int_set import _NEG_INF, _POS_INF, IntervalSet, eval_set
from .polynomial import poly_quotient

_GREATER, _LESS, _EQUAL = "greater", "less", "equal"
_REVERSE = {_GREATER: _LESS, _LESS: _GREATER, _EQUAL: _EQUAL}


class _Fail(Exception):
    pass


def _children(e):
    from ..tir.stmt_functor import children

    return children(e)


def _path(target, expr):
    """The nodes from ``expr`` down to ``target`` (identity), or [] when ``target`` does not occur."""
    stack = [(expr, [expr])]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        for c in reversed(_children(node)):
            stack.append((c, path + [c]))
    return []


def _occurrences(target, expr):
    count, stack = 0, [expr]
    while stack:
        node = stack.pop()
        count += node is target
        stack.extend(_children(node))
    return count


def _neg(x):
    return _op.subtract(_op.const(0, x.dtype), x)


class _Deducer:
    def __init__(self, target, cond, hint_map, relax_map, analyzer):
        self.target, self.hints, self.relax, self.ana = target, hint_map, relax_map, analyzer
        self.comp, self.expr, self.result = self._transform(cond)

    def _transform(self, cond):
        kind = type(cond)
        if kind not in (E.LT, E.LE, E.GT, E.GE, E.EQ) or _occurrences(self.target, cond) != 1:
            raise _Fail
        at_right = not _path(self.target, cond.a)
        expr, other = (cond.b, cond.a) if at_right else (cond.a, cond.b)
        if kind is E.EQ:
            return _EQUAL, expr, other
        greater = (kind in (E.GT, E.GE)) != at_right  # expr > other, expr >= other
        strict = kind in (E.LT, E.GT)
        if greater:
            return _GREATER, expr, _op.add(other, 1) if strict else other
        return _LESS, expr, _op.subtract(other, 1) if strict else other

    def _relax(self):
        a = eval_set(self.expr, self.relax, self.ana)
        b = eval_set(self.result, self.relax, self.ana)
        if a.is_everything() or b.is_everything():
            raise _Fail
        if self.comp == _EQUAL and not (b.is_single_point() and a.is_single_point()):
            raise _Fail
        self.expr = a._min if self.comp == _GREATER else a._max
        self.result = b._max if self.comp == _GREATER else b._min
        if self.expr is None or self.result is None:
            raise _Fail

    def _sign(self, e):
        if e.dtype.startswith("uint"):
            return 1
        s = eval_set(e, self.hints, self.ana)
        if s.has_lower_bound() and self.ana.can_prove(_op.greater(s._min, 0)):
            return 1
        if s.has_upper_bound() and self.ana.can_prove(_op.less(s._max, 0)):
            return -1
        return 0

    def deduce(self):
        self._relax()
        path = _path(self.target, self.expr)
        if not path:
            raise _Fail
        for node, nxt in zip(path, path[1:], strict=False):
            self._undo(node, nxt)
        return self.ana.simplify(self.result)

    def _undo(self, node, nxt):
        kind = type(node)
        if kind is E.Add:
            self.result = _op.subtract(self.result, node.b if node.a is nxt else node.a)
        elif kind is E.Sub:
            if node.a is nxt:
                self.result = _op.add(self.result, node.b)
            else:
                self.result = _neg(_op.subtract(self.result, node.a))
                self.comp = _REVERSE[self.comp]
        elif kind is E.Mul:
            operand = node.b if node.a is nxt else node.a
            sign = self._sign(operand)
            if sign == 0:
                raise _Fail
            if sign < 0:
                self.comp = _REVERSE[self.comp]
            quotient = poly_quotient(self.result, operand)  # b * a == b: the symbolic quotient 1
            divided = quotient is not None or self.ana.can_prove(_op.equal(_op.floormod(self.result, operand), 0))
            self.result = quotient if quotient is not None else _op.floordiv(self.result, operand)  # rounds down
            if not divided:
                if self.comp == _GREATER:
                    self.result = _op.add(self.result, 1)
                elif self.comp == _EQUAL:
                    raise _Fail  # no integer solution
        elif kind is E.FloorDiv:
            if node.b is nxt or self.ana.can_prove_equal(node.b, 0):
                raise _Fail
            divisor = node.b
            sign = self._sign(divisor)
            if sign == 0:
                raise _Fail
            if sign < 0:
                self.comp = _REVERSE[self.comp]
                divisor, self.result = _neg(divisor), _neg(self.result)
            if self.comp == _GREATER:
                self.result = _op.multiply(self.result, divisor)
            elif self.comp == _EQUAL:
                raise _Fail  # x // 6 == 4 is a range, not a one-sided bound
            else:
                self.result = _op.subtract(_op.add(_op.multiply(self.result, divisor), divisor), 1)
            if sign < 0:
                self.result = _op.add(_op.subtract(self.result, divisor), 1)
        else:
            raise _Fail


def deduce_bound(var, cond, hint_map, relax_map):
    """The IntervalSet of ``var`` for which ``cond`` holds (see the module docstring); the empty set (``[pos_inf,
    neg_inf]``) when it cannot be deduced.

    Parameters
    ----------
    var : Var
        The variable to bound.
    cond : PrimExpr
        A comparison using ``var`` once.
    hint_map : dict of Var to IntervalSet
        Ranges of the other variables, used for the signs of factors.
    relax_map : dict of Var to IntervalSet
        Variables the bound must hold for every value of.

    Examples
    --------
    >>> a, b = tir.Var("a", "int32"), tir.Var("b", "int32")
    >>> str(deduce_bound(a, a * 4 + b < 20, {}, {b: IntervalSet(0, 3)}).max_value)
    '4'
    """
    from .analyzer import Analyzer

    try:
        deducer = _Deducer(var, E.convert(cond), dict(hint_map), dict(relax_map), Analyzer())
        result = deducer.deduce()
    except _Fail:
        return IntervalSet(_POS_INF, _NEG_INF)
    if deducer.comp == _EQUAL:
        return IntervalSet(result, result)
    return IntervalSet(result, _POS_INF) if deducer.comp == _GREATER else IntervalSet(_NEG_INF, result)

