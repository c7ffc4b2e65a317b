"""Scopes of a Relay expression: where each subexpression is evaluated, for the normal-form passes.

A scope is a function body, an ``if`` branch, a let body or a match clause. Each node is placed in the innermost
scope enclosing all of its uses (the lowest common ancestor of its users' scopes); A-normal form binds every compound
node there, basic block normal form only those used from more than one scope.
"""

from ...error import KilnError
from ...ir.op import Op
from ..adt import Match
from ..expr import Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem
from ..function import Function

#: what A-normal form binds to variables: every node but variables, operators and constructors (constants too, as
#: TVM binds them)
BINDABLE = (Call, Tuple, TupleGetItem, If, Function, Match, RefCreate, RefRead, RefWrite, Constant)


class Scope:
    __slots__ = ("parent", "depth", "bindings")

    def __init__(self, parent):
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.bindings: list = []


def lca(a, b):
    while a is not b:
        if a.depth > b.depth:
            a = a.parent
        elif b.depth > a.depth:
            b = b.parent
        else:
            a, b = a.parent, b.parent
    return a


def scoped_children(node, scope, scope_of_body):
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


def shared_across_scopes(order, placement, scope_of_body) -> set:
    """The nodes that basic block normal form must bind: those whose users sit in several scopes, none of them the
    scope enclosing the others (a node also used directly in that enclosing scope is computed there, as part of its
    dataflow graph, as TVM decides). ``placement`` must be final."""
    scopes: dict = {}
    for node in order:
        for child, child_scope in scoped_children(node, placement[node], scope_of_body):
            scopes.setdefault(child, set()).add(child_scope)
    return {node for node, used_in in scopes.items() if placement[node] not in used_in}


def check_basic_block_normal_form(expr) -> bool:
    """True when ``expr`` is in basic block normal form; otherwise raises a KilnError naming an expression used from
    several scopes without being bound before them (TVM's ``relay.analysis.check_basic_block_normal_form``)."""
    placement, order, users, let_values, scope_of_body, _ = place(expr)
    for node in shared_across_scopes(order, placement, scope_of_body):
        bound_by_let = node in let_values and users[node] == 1
        if isinstance(node, BINDABLE) and not bound_by_let:
            raise KilnError("not in basic block normal form: this expression is used from several scopes and should "
                            f"be let-bound in the scope enclosing them:\n{node}")
    return True


def place(expr):
    """The scope analysis behind both normal forms: each node's scope (the LCA of its uses), post-order, use counts,
    let-bound values, the scope factory and the root scope."""
    body_scopes: dict = {}

    def scope_of_body(node, which, parent):
        key = (node, which)
        if key not in body_scopes:
            body_scopes[key] = Scope(parent)
        return body_scopes[key]

    root = Scope(None)
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
            placement[node] = lca(placement[node], scope)
            if node in expanded:
                continue
        else:
            placement[node] = scope
        expanded.add(node)
        stack.append((node, scope, True))
        for child, child_scope in reversed(scoped_children(node, scope, scope_of_body)):
            stack.append((child, child_scope, False))
    # a second pass fixes scopes of nodes first reached from a deep user and later from a shallower one
    for node in reversed(order):
        for child, child_scope in scoped_children(node, placement[node], scope_of_body):
            placement[child] = lca(placement[child], child_scope) if child in placement else child_scope
    return placement, order, users, let_values, scope_of_body, root
