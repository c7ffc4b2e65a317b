"""ToANormalForm, ToBasicBlockNormalForm and ToGraphNormalForm: between a dataflow graph and explicit let bindings.

A-normal form binds every compound expression (call, tuple, field access, if, closure) and constant to a fresh
variable with a ``let``, in evaluation order; a value a ``let`` already binds keeps its binding (so a recursive
closure keeps the name it calls itself by). Each expression is bound in the innermost scope that encloses all of its
uses (a function body or an ``if`` branch), so an expression used only inside one branch is computed only there, and
one shared by both branches is computed once before the ``if``. Basic block normal form binds only what several
scopes share, and keeps each scope a dataflow graph.

Graph normal form does the reverse: every let-bound value is substituted for its variable (all operators are pure, so
sharing the node is the same as binding it), except bindings a closure uses recursively.
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from ..analysis.scope import BINDABLE, place, shared_across_scopes
from ..expr import Let, Var
from ..expr_functor import ExprMutator
from ..function import Function
from .function_pass import FunctionPass


def to_a_normal_form(expr, basic_block=False):
    """Bind every compound subexpression of ``expr`` to a let variable, scoped to where it is used.

    With ``basic_block``, bind only the subexpressions used from more than one scope (basic block normal form: each
    function body, ``if`` branch and clause stays a dataflow graph, and what they share is computed before them).
    """
    placement, order, users, let_values, scope_of_body, root = place(expr)
    shared = shared_across_scopes(order, placement, scope_of_body) if basic_block else None
    for node in order:
        primitive = isinstance(node, Function) and node.is_primitive()
        bound_by_let = node in let_values and users[node] == 1  # binding it again would only make an alias
        if isinstance(node, BINDABLE) and node is not expr and not primitive and not bound_by_let and (
                shared is None or node in shared):
            placement[node].bindings.append(node)
    return _bind(expr, root, scope_of_body)


def _bind(expr, root, scope_of_body):
    """``expr`` with each scope's bindings let-bound at its start."""

    class _Binder(ExprMutator):
        def __init__(self):
            super().__init__()
            self.vars: dict = {}

        def wrap(self, scope, result_node):
            bindings = []
            for node in scope.bindings:
                value = self.visit(node)
                var = Var(f"x{len(self.vars)}", None)
                self.vars[node] = var
                self.memo_map[node] = var  # later users of the node read the variable
                bindings.append((var, value))
            result = self.visit(result_node)
            for var, value in reversed(bindings):
                result = Let(var, value, result)
            return result

        def visit_if(self, node):
            return node.with_fields(cond=self.visit(node.cond),
                                    true_branch=self.wrap(scope_of_body(node, 1, None), node.true_branch),
                                    false_branch=self.wrap(scope_of_body(node, 2, None), node.false_branch))

        def visit_function(self, fn):
            if fn.is_primitive():
                return fn
            return fn.with_fields(body=self.wrap(scope_of_body(fn, 0, None), fn.body))

        def visit_match(self, node):
            clauses = tuple(c.with_fields(lhs=self.visit_pattern(c.lhs),
                                          rhs=self.wrap(scope_of_body(node, 4 + i, None), c.rhs))
                            for i, c in enumerate(node.clauses))
            return node.with_fields(data=self.visit(node.data), clauses=clauses)

        def visit_let(self, let):
            value = self.visit(let.value)
            if not isinstance(let.value, Var):
                return let.with_fields(value=value, body=self.wrap(scope_of_body(let, 3, None), let.body))
            # `let %y = %x; ...`: in the body %x is read as %y, as TVM's conversion does (it memoizes %x as %y)
            saved = self.memo_map.get(let.value)
            self.memo_map[let.value] = let.var
            body = self.wrap(scope_of_body(let, 3, None), let.body)
            if saved is None:
                del self.memo_map[let.value]
            else:
                self.memo_map[let.value] = saved
            return let.with_fields(value=value, body=body)

    binder = _Binder()
    if isinstance(expr, Function) and not expr.is_primitive():
        return binder.visit(expr)
    return binder.wrap(root, expr)


def to_graph_normal_form(expr):
    """Substitute let-bound values for their variables (keeping bindings a value refers to recursively)."""

    class _Inliner(ExprMutator):
        def __init__(self):
            super().__init__()
            self.values: dict = {}

        def visit_var(self, var):
            return self.values.get(var, var)

        def visit_let(self, let):
            chain, body = self.let_chain(let)
            kept = []
            for binding in chain:
                value = self.visit(binding.value)
                from ..analysis.free_vars import free_vars

                if isinstance(binding.value, Function) and binding.var in free_vars(binding.value):
                    kept.append((binding, value))  # a recursive closure needs its name
                else:
                    self.values[binding.var] = value
            result = self.visit(body)
            for binding, value in reversed(kept):
                result = binding.with_fields(value=value, body=result)
            return result

    return _Inliner().visit(expr)


@register_pass("ToANormalForm")
@dataclass(frozen=True)
class ToANormalForm(FunctionPass):
    """Bind every compound expression to a let variable (TVM's ``relay.transform.ToANormalForm``)."""

    info = PassInfo(1, "ToANormalForm")

    def transform_function(self, func, mod, ctx):
        return to_a_normal_form(func)


@register_pass("ToBasicBlockNormalForm")
@dataclass(frozen=True)
class ToBasicBlockNormalForm(FunctionPass):
    """Let-bind what several scopes share, keep dataflow graphs inside each scope (TVM's
    ``relay.transform.ToBasicBlockNormalForm``)."""

    info = PassInfo(1, "ToBasicBlockNormalForm")

    def transform_function(self, func, mod, ctx):
        return to_a_normal_form(func, basic_block=True)


@register_pass("ToGraphNormalForm")
@dataclass(frozen=True)
class ToGraphNormalForm(FunctionPass):
    """Replace let bindings by sharing (TVM's ``relay.transform.ToGraphNormalForm``)."""

    info = PassInfo(1, "ToGraphNormalForm")

    def transform_function(self, func, mod, ctx):
        return to_graph_normal_form(func)
