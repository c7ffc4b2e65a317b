"""Well-formedness: every variable is bound at most once and used only inside the scope that binds it (function
parameters bind in the body, a let variable in its value and body, a pattern's variables in its clause's
right-hand side)."""

from ..adt import Match, pattern_vars
from ..expr import Let, Var
from ..expr_functor import expr_children
from ..function import Function


def well_formed_error(expr) -> str | None:
    """Why ``expr`` is not well formed, or None when it is. Free variables (bound nowhere) are allowed."""
    bound_anywhere = set()
    in_scope: set = set()
    # events: ("visit", node) or ("unbind", vars); vars come into scope before the subexpressions that may use them
    stack = [("visit", expr)]
    seen_nodes: set = set()
    uses: list = []
    while stack:
        event, item = stack.pop()
        if event == "unbind":
            in_scope.difference_update(item)
            continue
        if event == "bind":
            in_scope.update(item)
            continue
        node = item
        if isinstance(node, Var):
            uses.append((node, node in in_scope))
            continue
        if node in seen_nodes:  # a shared node binds its variables once
            continue
        seen_nodes.add(node)
        binders = ()
        if isinstance(node, Function):
            binders = node.params
            children = [node.body]
        elif isinstance(node, Let):
            binders = (node.var,)
            children = [node.value, node.body]
        elif isinstance(node, Match):
            # each clause is its own scope: its pattern's variables are visible in its right-hand side only
            stack.append(("visit", node.data))
            for clause in reversed(node.clauses):
                clause_binders = tuple(pattern_vars(clause.lhs))
                for v in clause_binders:
                    if v in bound_anywhere:
                        return f"variable %{v.name_hint} is bound more than once"
                    bound_anywhere.add(v)
                stack.append(("unbind", clause_binders))
                stack.append(("visit", clause.rhs))
                stack.append(("bind", clause_binders))
            continue
        else:
            children = list(expr_children(node))
        for v in binders:
            if v in bound_anywhere:
                return f"variable %{v.name_hint} is bound more than once"
            bound_anywhere.add(v)
        in_scope.update(binders)
        stack.append(("unbind", binders))
        stack.extend(("visit", c) for c in reversed(children))
    for var, ok in uses:
        if not ok and var in bound_anywhere:
            return f"variable %{var.name_hint} is used outside the scope that binds it"
    return None


def well_formed(expr) -> bool:
    """Whether ``expr`` is well formed (see :func:`well_formed_error`)."""
    return well_formed_error(expr) is None
