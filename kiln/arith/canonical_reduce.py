"""Reductions in TVM's canonical simplifier: a reduction over no axes is its single step, and a combiner keeps only
the components the selected result depends on (TVM's ``SimplifyReduceCombiner``)."""

from ..tir import expr as E
from ..tir.expr_reduce import CommReducer, Reduce
from ..tir.stmt_functor import post_order_visit


def _uses(expr, variables) -> bool:
    ids = {id(v) for v in variables}
    found = []
    post_order_visit(expr, lambda n: found.append(n) if id(n) in ids else None)
    return bool(found)


def _writes_state(expr) -> bool:
    """A call in ``expr`` with effects beyond reading state (it must stay, even when its value is unused)."""
    from ..tir.expr import CallEffectKind

    found = []

    def visit(n):
        if type(n) is E.Call:
            effect = getattr(n.op, "effect", None)
            if effect is None and not hasattr(n.op, "name"):
                found.append(n)  # a call of a global function: unknown effects
            elif effect is not None and effect > CallEffectKind.READ_STATE:
                found.append(n)

    post_order_visit(expr, visit)
    return bool(found)


def simplify_reduce(s, op):
    """``op`` (a Reduce whose operands ``s`` already simplified) with its combiner simplified, or its single step
    when it has no axes."""
    if not op.axis:
        if op.init:
            value = op.combiner(op.init, op.source)[op.value_index]
            return s.visit_expr(E.Select(op.condition, value, op.init[op.value_index]))
        return s.visit_expr(E.Select(op.condition, op.source[op.value_index],
                                     op.combiner.identity_element[op.value_index]))
    comb = op.combiner
    results = [s.visit_expr(r) for r in comb.result]
    n = len(results)
    used = [False] * n

    def mark(idx):
        if used[idx]:
            return
        used[idx] = True
        for i in range(n):
            if not used[i] and _uses(results[idx], (comb.lhs[i], comb.rhs[i])):
                mark(i)

    mark(op.value_index)
    for i in range(n):
        if _writes_state(op.source[i]) or _writes_state(comb.identity_element[i]) or _writes_state(comb.result[i]) \
                or (op.init and _writes_state(op.init[i])):
            mark(i)
    keep = [i for i in range(n) if used[i]]
    value_index = op.value_index - sum(1 for i in range(op.value_index) if not used[i])
    combiner = CommReducer(tuple(comb.lhs[i] for i in keep), tuple(comb.rhs[i] for i in keep),
                           tuple(results[i] for i in keep),
                           tuple(s.visit_expr(comb.identity_element[i]) for i in keep))
    return Reduce(combiner, [op.source[i] for i in keep], op.axis, op.condition, value_index,
                  [op.init[i] for i in keep] if op.init else ())
