"""``tir.Simplify``: simplify every expression of a PrimFunc with the arith rewrite simplifier, using what the
statement structure tells about variables.

A loop binds its variable to ``[min, min + extent)``; an ``IfThenElse`` simplifies its then-branch under the condition
and its else-branch under its negation (and keeps only one branch when the condition is decided); a ``LetStmt``
binds its variable (substituted when the value is a constant or a variable, and the binding is dropped once nothing
uses it); an ``AssertStmt``'s condition holds in its body. Statements left without effect are removed by
``tir.RemoveNoOp``, not here.
"""

from dataclasses import dataclass

from ...arith import Analyzer, ConstIntBound
from ...ir.transform import PassInfo, register_pass
from .. import expr as E
from .. import op as _op
from .. import stmt as S
from ..analysis import stmt_contains
from ..functor import StmtExprMutator
from .function_pass import PrimFuncPass


class StmtSimplifier(StmtExprMutator):
    """Simplifies the expressions of a statement with an :class:`~kiln.arith.Analyzer` that follows the scopes."""

    def __init__(self, analyzer=None):
        self.analyzer = analyzer or Analyzer()

    def visit_expr(self, expr):
        return self.analyzer.simplify(expr)

    def visit_for(self, op):
        lo, extent = self.visit_expr(op.min), self.visit_expr(op.extent)
        self.analyzer.bind(op.loop_var, E.Range.from_min_extent(lo, extent), allow_override=True)
        body = self.visit_stmt(op.body)
        return op.with_fields(min=lo, extent=extent, body=body)

    def visit_if_then_else(self, op):
        cond = self.visit_expr(op.condition)
        if isinstance(cond, E.IntImm):
            if cond.value:
                return self.visit_stmt(op.then_case)
            return self.visit_stmt(op.else_case) if op.else_case is not None else S.Evaluate(_op.const(0))
        with self.analyzer.constraint_scope(cond):
            then_case = self.visit_stmt(op.then_case)
        else_case = None
        if op.else_case is not None:
            with self.analyzer.constraint_scope(_op.logical_not(cond)):
                else_case = self.visit_stmt(op.else_case)
        return op.with_fields(condition=cond, then_case=then_case, else_case=else_case)

    def visit_let_stmt(self, op):
        value = self.visit_expr(op.value)
        if isinstance(value, E.IntImm | E.Var) and value.dtype == op.var.dtype:
            self.analyzer.bind(op.var, value)  # substituted in the body
        elif value.dtype in ("int32", "int64"):
            self.analyzer.update(op.var, self.analyzer.const_int_bound(value), override=True)
        body = self.visit_stmt(op.body)
        if not stmt_contains(body, lambda n: n is op.var):  # the binding was substituted everywhere, or unused
            return body
        return op.with_fields(value=value, body=body)

    def visit_assert_stmt(self, op):
        cond = self.visit_expr(op.condition)
        with self.analyzer.constraint_scope(cond):
            body = self.visit_stmt(op.body)
        return op.with_fields(condition=cond, body=body)

    def visit_attr_stmt(self, op):
        if op.attr_key == "thread_extent" and isinstance(op.node, E.IterVar):
            self.analyzer.bind(op.node.var, E.Range.from_min_extent(0, op.value), allow_override=True)
        return super().visit_attr_stmt(op)


def simplify_prim_func(func, analyzer=None):
    """Return ``func`` with its body simplified (``func`` itself when nothing changed)."""
    ana = analyzer or Analyzer()
    for buf in func.buffer_map.values():  # symbolic shape dimensions are non-negative
        for dim in buf.shape:
            if isinstance(dim, E.Var):
                ana.update(dim, ConstIntBound(0, ana.const_int_bound(dim).max_value))
    return func.with_body(StmtSimplifier(ana).visit_stmt(func.body))


@register_pass("tir.Simplify")
@dataclass(frozen=True)
class Simplify(PrimFuncPass):
    """Simplify the expressions of every PrimFunc (TVM's ``tir.transform.Simplify``).

    Examples
    --------
    >>> mod = tir.transform.Simplify()(mod)   # doctest: +SKIP
    """

    info = PassInfo(0, "tir.Simplify")

    def transform_function(self, func, mod, ctx):
        return simplify_prim_func(func)
