"""CapturePostDfsIndexInSpans: record each expression's position in the function's indexed graph in its span
(TVM's ``relay.transform.CapturePostDfsIndexInSpans``, a debugging aid: printed programs and device maps can then
be read by index).

Every expression of a function gets an index in post-depth-first order, children first: a call's operator before
its arguments, a function's parameters before its body, a let's value, then its variable, then its body. The span
of each expression becomes ``Span("index", line=index, column=dominator)``, where ``dominator`` is the index of its
immediate post-dominator (the nearest expression every use of it flows through; -1 for the function itself),
found as the least common ancestor of its users in the post-dominator tree, as TVM's ``IndexedGraph`` does.
"""

from dataclasses import dataclass

from ...ir.adt import Constructor
from ...ir.expr import GlobalVar
from ...ir.op import Op
from ...ir.span import Span
from ...ir.transform import PassInfo, register_pass
from ..expr import Call, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem
from ..expr_functor import ExprMutator
from ..function import Function
from .function_pass import FunctionPass

__all__ = ["CapturePostDfsIndexInSpans", "post_dfs_indices"]


def _children(expr) -> tuple:
    """The sub-expressions of ``expr`` in the order the index visits them."""
    kind = type(expr)
    if kind is Call:
        return (expr.op, *expr.args)
    if kind is Function:
        return (*expr.params, expr.body)
    if kind is Let:
        return (expr.value, expr.var, expr.body)
    if kind is Tuple:
        return expr.fields
    if kind is TupleGetItem:
        return (expr.tuple_value,)
    if kind is If:
        return (expr.cond, expr.true_branch, expr.false_branch)
    if kind is RefCreate:
        return (expr.value,)
    if kind is RefRead:
        return (expr.ref,)
    if kind is RefWrite:
        return (expr.ref, expr.value)
    from ..adt import Match
    from ..expr_functor import expr_children

    if kind is Match:
        return expr_children(expr)
    return ()


def _users(expr) -> tuple:
    """The sub-expressions whose value flows into ``expr`` (a let's value flows into its variable instead, a
    function's parameters into their uses)."""
    if type(expr) is Let:
        return (expr.body,)
    if type(expr) is Function:
        return (expr.body,)
    return _children(expr)


def post_dfs_indices(func):
    """``(order, dominator)``: the expressions of ``func`` in post-dfs order, and each one's immediate
    post-dominator index (-1 for ``func`` and for what nothing uses)."""
    order: list = []
    index: dict = {}
    stack = [(func, False)]
    while stack:
        node, ready = stack.pop()
        if node in index:
            continue
        if ready:
            index[node] = len(order)
            order.append(node)
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(_children(node)) if c not in index)
    outputs: list = [[] for _ in order]
    for i, node in enumerate(order):
        for used in _users(node):
            outputs[index[used]].append(i)
        if type(node) is Let:
            outputs[index[node.value]].append(index[node.var])
    parent = [-1] * len(order)
    depth = [1] * len(order)
    for i in range(len(order) - 2, -1, -1):  # the function itself (last) is the root
        lca = outputs[i][0] if outputs[i] else -1
        for out in outputs[i][1:]:
            lca = _lca(lca, out, parent, depth)
            if lca == -1:
                break
        parent[i] = lca
        depth[i] = depth[lca] + 1 if lca != -1 else 1
    return order, parent


def _lca(a, b, parent, depth):
    while a != b:
        if a == -1 or b == -1:
            return -1
        if depth[a] < depth[b]:
            b = parent[b]
        elif depth[a] > depth[b]:
            a = parent[a]
        else:
            a, b = parent[a], parent[b]
    return a


class _SpanWriter(ExprMutator):
    def __init__(self, spans):
        super().__init__()
        self.spans = spans

    def _with_span(self, pre, post):
        span = self.spans.get(pre)
        return post if span is None else post.with_fields(span=span)

    def visit_var(self, var):
        return self._with_span(var, var)

    def visit_constant(self, const):
        return self._with_span(const, const)

    def visit_tuple(self, tup):
        return self._with_span(tup, super().visit_tuple(tup))

    def visit_tuple_getitem(self, item):
        return self._with_span(item, super().visit_tuple_getitem(item))

    def visit_call(self, call):
        return self._with_span(call, super().visit_call(call))

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        values = [(self.visit(b.var), self.visit(b.value)) for b in chain]
        result = self.visit(body)
        for binding, (var, value) in zip(reversed(chain), reversed(values), strict=True):
            result = self._with_span(binding, binding.with_fields(var=var, value=value, body=result))
            self.memo_map[binding] = result
        return result

    def visit_if(self, node):
        return self._with_span(node, super().visit_if(node))

    def visit_function(self, fn):
        return self._with_span(fn, super().visit_function(fn))

    def visit_ref_create(self, ref):
        return self._with_span(ref, super().visit_ref_create(ref))

    def visit_ref_read(self, ref):
        return self._with_span(ref, super().visit_ref_read(ref))

    def visit_ref_write(self, ref):
        return self._with_span(ref, super().visit_ref_write(ref))


@register_pass("CapturePostDfsIndexInSpans")
@dataclass(frozen=True)
class CapturePostDfsIndexInSpans(FunctionPass):
    """Write each expression's post-dfs index and post-dominator's index into its span (see the module
    docstring)."""

    info = PassInfo(0, "CapturePostDfsIndexInSpans")

    def transform_function(self, func, mod, ctx):
        order, dominator = post_dfs_indices(func)
        spans = {node: Span("index", i, dominator[i], i, dominator[i]) for i, node in enumerate(order)
                 if not isinstance(node, Op | GlobalVar | Constructor)}
        return _SpanWriter(spans).visit(func)

