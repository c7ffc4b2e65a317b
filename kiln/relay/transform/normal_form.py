"""ToANormalForm and ToGraphNormalForm: between a dataflow graph and explicit let bindings.

A-normal form binds every compound expression (call, tuple, field access, if, closure) to a fresh variable with a
``let``, in evaluation order; a value a ``let`` already binds keeps its binding (so a recursive closure keeps the
name it calls itself by). Each expression is bound in the innermost scope that encloses all of its uses (a
function body or an ``if`` branch), so an expression used only inside one branch is computed only there, and one
shared by both branches is computed once before the ``if``.

Graph normal form does the reverse: every let-bound value is substituted for its variable (all operators are pure, so
sharing the node is the same as binding it), except bindings a closure uses recursively.
"""

from dataclasses import dataclass

from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ..adt import Match
from ..expr import Call, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from ..expr_functor import ExprMutator
from ..function import Function
from .function_pass import FunctionPass

_COMPOUND = (Call, Tuple, TupleGetItem, If, Function, Match, RefCreate, RefRead, RefWrite)


class _Scope:
    __slots__ = ("parent", "depth", "bindings")

    def __init__(self, parent):
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.bindings: list = []


def _lca(a, b):
    while a is not b:
        if a.depth > b.depth:
            a = a.parent
        elif b.depth > a.depth:
            b = b.parent
        else:
            a, b = a.parent, b.parent
    return a


def _scoped_children(node, scope, scope_of_body):
    """Children of ``node`` with the scope they are evaluated in."""
    if isinstance(node, Call):
        return [(c, scope) for c in ((node.op,) if not isinstance(node.op, Op) else ()) + node.args]
    if isinstance(node, Tuple):
        return [(c, scope) for c in node.fields]
    if isinstance(node, TupleGetItem):
        return [(node.tuple_value, scope)]
    if isinstance(node, Let):
        return [(node.value, scope), (node.body, scope_of_body(node, 3, scope))]
    if isinstance(node, If):
        return [(node.cond, scope), (node.true_branch, scope_of_body(node, 1, scope)),
                (node.false_branch, scope_of_body(node, 2, scope))]
    if isinstance(node, Function) and not node.is_primitive():
        return [(node.body, scope_of_body(node, 0, scope))]
    if isinstance(node, Match):  # each clause's right-hand side is a scope of its own (its pattern binds in it)
        return [(node.data, scope)] + [(c.rhs, scope_of_body(node, 4 + i, scope)) for i, c in enumerate(node.clauses)]
    if isinstance(node, RefCreate):
        return [(node.value, scope)]
    if isinstance(node, RefRead):
        return [(node.ref, scope)]
    if isinstance(node, RefWrite):
        return [(node.ref, scope), (node.value, scope)]
    return []


def to_a_normal_form(expr):
    """Bind every compound subexpression of ``expr`` to a let variable, scoped to where it is used."""
    body_scopes: dict = {}

    def scope_of_body(node, which, parent):
        key = (node, which)
        if key not in body_scopes:
            body_scopes[key] = _Scope(parent)
        return body_scopes[key]

    root = _Scope(None)
    placement: dict = {}  # node -> scope (LCA of its uses)
    order: list = []
    stack = [(expr, root, False)]
    expanded = set()
    users: dict = {}  # node -> how many times a parent refers to it
    let_values = set()  # values of lets: a let binds them already
    while stack:  # post-order; a node's scope is final once every user is expanded (users come first in DFS)
        node, scope, ready = stack.pop()
        if ready:
            order.append(node)
            continue
        users[node] = users.get(node, 0) + 1
        if isinstance(node, Let):
            let_values.add(node.value)
        if node in placement:
            placement[node] = _lca(placement[node], scope)
            if node in expanded:
                continue
        else:
            placement[node] = scope
        expanded.add(node)
        stack.append((node, scope, True))
        for child, child_scope in reversed(_scoped_children(node, scope, scope_of_body)):
            stack.append((child, child_scope, False))
    # a second pass fixes scopes of nodes first reached from a deep user and later from a shallower one
    for node in reversed(order):
        for child, child_scope in _scoped_children(node, placement[node], scope_of_body):
            placement[child] = _lca(placement[child], child_scope) if child in placement else child_scope
    for node in order:
        primitive = isinstance(node, Function) and node.is_primitive()
        bound_by_let = node in let_values and users[node] == 1  # binding it again would only make an alias
        if isinstance(node, _COMPOUND) and node is not expr and not primitive and not bound_by_let:
            placement[node].bindings.append(node)

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
            return let.with_fields(value=self.visit(let.value), body=self.wrap(scope_of_body(let, 3, None), let.body))

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


@register_pass("ToGraphNormalForm")
@dataclass(frozen=True)
class ToGraphNormalForm(FunctionPass):
    """Replace let bindings by sharing (TVM's ``relay.transform.ToGraphNormalForm``)."""

    info = PassInfo(1, "ToGraphNormalForm")

    def transform_function(self, func, mod, ctx):
        return to_graph_normal_form(func)
