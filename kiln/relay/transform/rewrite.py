"""A table-driven local rewriter: the driver behind SimplifyExpr, CanonicalizeOps and SimplifyInference.

A rule is a named module-level function ``rule(call) -> Expr | None`` registered for operator names; it returns the
replacement or None for "no match". ``rewrite(expr, rules)`` visits the expression bottom-up (iteratively, through the
memoized ExprMutator) and applies the rules of each call's operator until none matches, so rewrites compose to a
fixpoint. Replacements are typed on the spot (only their new nodes are inferred), so rules can read
``checked_type`` of anything they see.
"""

from ...ir.op import Op
from ...ir.registry import Registry, op_table
from ..expr import Call, TupleGetItem
from ..expr_functor import ExprMutator
from .infer_type import KeepTyped, TypeInferencer, global_typer


def RuleTable():  # noqa: N802  (reads as the table type it makes)
    """Rewrite rules by operator name (``"TupleGetItem"`` for field accesses), several per name, in registration
    order: an :func:`~kiln.ir.registry.op_table` refusing names that are no operator.

    Examples
    --------
    >>> rules = RuleTable()
    >>> @rules.register("multiply")
    ... def simplify_mul_one(call):
    ...     '''x * 1 -> x when the shapes agree.'''
    """
    return op_table("rewrite rule", multiple=True, extra_keys=("TupleGetItem",))


class _Rewriter(ExprMutator):
    def __init__(self, table, max_steps, typer):
        super().__init__()
        self.table = table
        self.typer = typer
        self.max_steps = max_steps

    def _typed(self, expr):
        return self.typer.visit(expr)

    def _apply(self, expr):
        for _ in range(self.max_steps):
            if isinstance(expr, Call) and isinstance(expr.op, Op):
                rules = self.table.get(expr.op.name, ())
            elif isinstance(expr, TupleGetItem):
                rules = self.table.get("TupleGetItem", ())
            else:
                return expr
            for rule in rules:
                replacement = rule(expr)
                if replacement is not None and replacement is not expr:
                    expr = self._typed(self.visit_children_again(replacement))
                    break
            else:
                return expr
        return expr

    def visit_children_again(self, expr):
        """A replacement may contain fresh nodes built over already rewritten inputs; rewrite those nodes too."""
        return _SubRewriter(self).visit(expr)

    def visit_call(self, call):
        return self._apply(self._typed(super().visit_call(call)))

    def visit_tuple_getitem(self, item):
        return self._apply(self._typed(super().visit_tuple_getitem(item)))


class _SubRewriter(KeepTyped):
    """Applies rules to the untyped (new) nodes of a replacement; typed nodes were already rewritten."""

    def __init__(self, outer):
        super().__init__()
        self.outer = outer

    def visit_call(self, call):
        new = super().visit_call(call)
        return self.outer._apply(self.outer._typed(new))

    def visit_tuple_getitem(self, item):
        new = super().visit_tuple_getitem(item)
        return self.outer._apply(self.outer._typed(new))


def rewrite(expr, table: Registry, max_steps: int = 64, mod=None):
    """Apply the rules of ``table`` to every call of ``expr`` (typed) until no rule matches; returns a typed expr.
    ``mod``: the module of the global functions ``expr`` calls (a function pass passes its own)."""
    typer = TypeInferencer(global_typer(mod))
    return _Rewriter(table, max_steps, typer).visit(typer.visit(expr))
