"""Variable analyses: ``free_vars``, ``bound_vars``, ``all_vars`` (each in order of first appearance)."""

from ..expr import Let, Var
from ..expr_functor import post_order_visit
from ..function import Function


def _scan(expr):
    used: list = []
    bound: list = []

    def visit(node):
        if isinstance(node, Var):
            used.append(node)
        elif isinstance(node, Function):
            bound.extend(node.params)
        elif isinstance(node, Let):
            bound.append(node.var)

    post_order_visit(expr, visit)
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
