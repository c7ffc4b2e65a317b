"""How many times each variable is referenced in an expression."""

from collections import Counter

from ..expr import Let, Var
from ..expr_functor import expr_children, post_order_visit
from ..function import Function


def var_use_counts(expr) -> Counter:
    """References of each variable (one per parent node that uses it); binding sites are not uses.

    Examples
    --------
    >>> x = relay.var("x")
    >>> var_use_counts(relay.add(x, relay.exp(x)))[x]
    2
    """
    counts: Counter = Counter()

    def count(node):
        if isinstance(node, Let):
            children = (node.value, node.body)
        elif isinstance(node, Function):
            children = (node.body,)
        else:
            children = expr_children(node)
        for child in children:
            if isinstance(child, Var):
                counts[child] += 1

    post_order_visit(expr, count)
    return counts
