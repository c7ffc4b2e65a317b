"""Variable analyses: ``free_vars``, ``bound_vars``, ``all_vars``, and their type-variable counterparts
``free_type_vars``, ``bound_type_vars``, ``all_type_vars`` (each in order of first appearance).

Variables are bound by function parameters, let bindings and the patterns of match clauses; type variables by the
type parameters of functions (and of function types).
"""

from ...ir.expr import RelayExpr
from ...ir.type_poly import FuncType, TypeVar, free_type_vars_of, type_children
from ..adt import Match, pattern_vars
from ..expr import Call, Let, Var
from ..expr_functor import expr_children, post_order_visit
from ..function import Function


def _scan(expr):
    """(variables used, variables bound) of ``expr``, each in the order a depth-first walk meets them: a binder's
    variables (parameters, the let variable, a clause's pattern) before what it binds them in, as TVM orders them."""
    used: list = []
    bound: list = []
    seen = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, Var):
            used.append(node)
        elif isinstance(node, Function):
            bound.extend(node.params)
        elif isinstance(node, Let):
            bound.append(node.var)
        elif isinstance(node, Match):
            for clause in node.clauses:
                bound.extend(pattern_vars(clause.lhs))
        stack.extend(reversed(expr_children(node)))
    return used, bound


def free_vars(expr) -> list:
    """The variables ``expr`` uses without binding them, in order of first appearance.

    Examples
    --------
    >>> x, y = relay.var("x"), relay.var("y")
    >>> free_vars(relay.add(x, y)) == [x, y]
    True
    """
    used, bound = _scan(expr)
    bound_set = set(bound)
    return [v for v in dict.fromkeys(used) if v not in bound_set]


def bound_vars(expr) -> list:
    """The variables bound inside ``expr`` (function parameters and let variables)."""
    return list(dict.fromkeys(_scan(expr)[1]))


def all_vars(expr) -> list:
    """Every variable of ``expr``, bound or free."""
    used, bound = _scan(expr)
    return list(dict.fromkeys(used + bound))


def _type_scan(expr):
    """(types used in order, type variables bound in order) of ``expr``."""
    used: list = []
    bound: list = []

    def visit(node):
        if isinstance(node, Var) and node.type_annotation is not None:
            used.append(node.type_annotation)
        elif isinstance(node, Function):
            bound.extend(node.type_params)
            if node.ret_type is not None:
                used.append(node.ret_type)
        elif isinstance(node, Call):
            used.extend(node.type_args)

    post_order_visit(expr, visit)
    return used, bound


def free_type_vars(expr) -> list:
    """The type variables ``expr`` (an expression or a type) uses without binding them."""
    if not isinstance(expr, RelayExpr):  # a type
        return free_type_vars_of(expr)
    used, bound = _type_scan(expr)
    bound_set = set(bound)
    found = (tv for t in used for tv in free_type_vars_of(t))
    return [tv for tv in dict.fromkeys(found) if tv not in bound_set]


def bound_type_vars(expr) -> list:
    """The type variables bound inside ``expr`` (type parameters of functions or function types)."""
    if not isinstance(expr, RelayExpr):  # a type
        return list(dict.fromkeys(_bound_in_type(expr)))
    used, bound = _type_scan(expr)
    return list(dict.fromkeys(bound + [tv for t in used for tv in _bound_in_type(t)]))


def all_type_vars(expr) -> list:
    """Every type variable of ``expr``, bound or free."""
    return list(dict.fromkeys(bound_type_vars(expr) + free_type_vars(expr)))


def _bound_in_type(ttype) -> list:
    out = []
    stack = [ttype]
    while stack:
        t = stack.pop()
        if isinstance(t, FuncType):
            out.extend(t.type_params)
        if not isinstance(t, TypeVar):
            stack.extend(reversed(type_children(t)))
    return out
