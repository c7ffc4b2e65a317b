"""EliminateCommonSubexpr: calls of the same operator with the same attributes on the same arguments are computed once.

Arguments match when they are the same node (after rewriting, so repeated subtrees collapse bottom-up) or equal scalar
constants; a tuple argument matches a tuple of matching fields. A call inside an ``if`` branch or a function body may
reuse a call from the enclosing scope, never the other way round. ``fskip(call)`` returning True leaves a call alone,
and so are stateful operators (``TOpIsStateful``: the memory dialect's allocations).
"""

from collections.abc import Callable
from dataclasses import dataclass

from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ..expr import Call, Constant, Tuple
from ..expr_functor import ExprMutator
from .function_pass import FunctionPass


def _arg_key(arg, in_tuple=False):
    if isinstance(arg, Constant) and arg.data.shape == ():
        return ("scalar", arg.data.dtype, arg.data.handle.item())
    if isinstance(arg, Tuple) and not in_tuple:
        # a tuple argument (concatenate's) matches field by field, as TVM's IsEquivalent: two tuples built from
        # the same values are one value
        return ("tuple", tuple(_arg_key(f, True) for f in arg.fields))
    return id(arg)


class _CSE(ExprMutator):
    def __init__(self, fskip):
        super().__init__()
        self.fskip = fskip
        self.scopes: list[dict] = [{}]

    def _lookup(self, key):
        for scope in reversed(self.scopes):
            found = scope.get(key)
            if found is not None:
                return found
        return None

    def _dedupe(self, key, expr):
        found = self._lookup(key)
        if found is not None:
            return found
        self.scopes[-1][key] = expr
        return expr

    def visit_call(self, call):
        new = super().visit_call(call)
        if not isinstance(new.op, Op) or new.op.get_attr("TOpIsStateful"):
            return new  # two allocations (stateful calls) are two values even when their arguments agree
        if self.fskip is not None and self.fskip(new):
            return new
        key = ("call", new.op.name, new.attrs, tuple(_arg_key(a) for a in new.args))
        return self._dedupe(key, new)

    def visit_tuple_getitem(self, item):
        new = super().visit_tuple_getitem(item)
        return self._dedupe(("getitem", id(new.tuple_value), new.index), new)

    def _scoped(self, expr):
        self.scopes.append({})
        try:
            return self.visit(expr)
        finally:
            self.scopes.pop()

    def visit_if(self, node):
        return node.with_fields(cond=self.visit(node.cond), true_branch=self._scoped(node.true_branch),
                                false_branch=self._scoped(node.false_branch))

    def visit_function(self, fn):
        if fn.is_primitive():
            return fn
        return fn.with_fields(body=self._scoped(fn.body))


def eliminate_common_subexpr(expr, fskip=None):
    """Share repeated calls of ``expr`` (see the module docstring)."""
    return _CSE(fskip).visit(expr)


@register_pass("EliminateCommonSubexpr")
@dataclass(frozen=True)
class EliminateCommonSubexpr(FunctionPass):
    """Share repeated calls (TVM's ``relay.transform.EliminateCommonSubexpr``); ``fskip(call)`` exempts calls."""

    fskip: Callable[[Call], bool] | None = None
    info = PassInfo(3, "EliminateCommonSubexpr", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return eliminate_common_subexpr(func, self.fskip)
