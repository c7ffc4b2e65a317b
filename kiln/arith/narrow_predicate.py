"""``narrow_predicate_expression`` (TVM's ``arith.NarrowPredicateExpression``): from a condition that mentions free
parameters with known ranges, a condition without them that implies the original.

Each free parameter is replaced by the end of its range that makes the condition hardest to meet. The walk tracks
whether the subexpression being visited should be as large as possible (the left side of ``a < b``) or as small as
possible (its right side); ``a - b``, ``!a`` and the mirrored comparisons flip this. ``a == b`` becomes ``a <= b &&
b <= a`` and ``a != b`` becomes ``a < b || b < a`` first. Where a comparison depends on something that cannot be
bounded by a monotone substitution (a ``floormod``, a buffer load, a division by a range that reaches zero) the
comparison is replaced by the constant that keeps the implication: false where it must hold, true under a negation.
"""

from ..error import TIRError
from ..tir import expr as E
from ..tir import op as _op
from ..tir.functor import ExprMutator

_MAXIMIZE, _MINIMIZE = "max", "min"


def _opposite(ctx):
    return _MINIMIZE if ctx == _MAXIMIZE else _MAXIMIZE


class _Narrower(ExprMutator):
    def __init__(self, free_parameters):
        super().__init__()
        self.free = {id(v): (v, rng) for v, rng in free_parameters.items()}
        self.contexts = [_MAXIMIZE]
        self.unknown = False

    def _in(self, ctx, expr):
        self.contexts.append(ctx)
        try:
            return self.visit_expr(expr)
        finally:
            self.contexts.pop()

    def _ordered(self, op, a_ctx, b_ctx):
        """Visit ``op.a`` and ``op.b`` in the given contexts; a comparison over something unknown becomes a
        constant: false when the comparison should be made hard to meet, true when easy."""
        ctx = self.contexts[-1]
        a = self._in(a_ctx, op.a)
        b = self._in(b_ctx, op.b)
        if self.unknown and op.dtype == "bool":
            self.unknown = False
            return E.IntImm("bool", ctx == _MINIMIZE)
        if a is op.a and b is op.b:
            return op
        return type(op)(a, b)

    def visit_lt(self, op):
        ctx = self.contexts[-1]
        return self._ordered(op, ctx, _opposite(ctx))

    visit_le = visit_sub = visit_lt

    def visit_gt(self, op):
        ctx = self.contexts[-1]
        return self._ordered(op, _opposite(ctx), ctx)

    visit_ge = visit_gt

    def visit_eq(self, op):
        return _op.logical_and(self.visit_expr(E.LE(op.a, op.b)), self.visit_expr(E.LE(op.b, op.a)))

    def visit_ne(self, op):
        return _op.logical_or(self.visit_expr(E.LT(op.a, op.b)), self.visit_expr(E.LT(op.b, op.a)))

    def visit_not(self, op):
        return _op.logical_not(self._in(_opposite(self.contexts[-1]), op.a))

    def visit_floor_mod(self, op):
        self.unknown = True  # not monotone in its operands: no end of a range bounds it
        return super().visit_floor_mod(op)

    def visit_floor_div(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if isinstance(b, E.IntImm) and b.value == 0:
            self.unknown = True  # a range reaching zero: the substituted divisor would divide by zero
            return E.IntImm(op.dtype, 0)
        return _op.floordiv(a, b)

    def visit_buffer_load(self, op):
        self.unknown = True
        return op

    def visit_var(self, op):
        entry = self.free.get(id(op))
        if entry is None:
            return op
        rng = entry[1]
        if self.contexts[-1] == _MINIMIZE:
            return rng.min
        return _op.subtract(_op.add(rng.min, rng.extent), 1)


def narrow_predicate_expression(expr, free_parameters):
    """A condition without the variables of ``free_parameters`` (a dict ``Var -> Range``) that implies ``expr``.

    Parameters
    ----------
    expr : PrimExpr
        A boolean condition.
    free_parameters : dict of Var to Range
        The variables to remove and the ranges they take.

    Returns
    -------
    PrimExpr
        A condition free of those variables: where it holds, ``expr`` holds for every value in the ranges.

    Examples
    --------
    >>> i, n = tir.Var("i", "int32"), tir.Var("n", "int32")
    >>> str(narrow_predicate_expression(i < n, {n: tir.Range(0, 8)}))
    'i < 0'
    """
    expr = E.convert(expr)
    if expr.dtype != "bool":
        raise TIRError(f"narrow_predicate_expression: expected a boolean condition, got {expr.dtype} ({expr})")
    return _Narrower(dict(free_parameters)).visit_expr(expr)
