"""Rewriting and partitioning with dataflow patterns (TVM's ``PatternRewriter``, ``PatternGrouper`` and
``PatternPartitioner``).

:class:`PatternGrouper` finds the non-overlapping matches of a pattern in an expression: nodes are tried from the
outputs towards the inputs, so the match closest to the output wins, and a match is kept only when it overlaps no
earlier one and its inner nodes are used only inside it (cutting it out must not lose a value another node reads).
Each group records its root, what each pattern node matched, its inputs (expressions matched by leaf patterns, but
operators, functions and constants a constant or expression pattern matched, which stay inside) and the function
``fn(inputs) { root }`` that the partitioner calls in its place.

:func:`rewrite` runs callbacks to a fixpoint: for each callback, the expression is rebuilt bottom-up, and at the
root of each group the callback gets the original node, the rebuilt one and the rebuilt node of every pattern
node's match, and returns the replacement.
"""

from ...error import KilnError
from ...ir.op import Op
from ...ir.structural import structural_equal
from ..expr import Call, Constant, var
from ..expr_functor import ExprMutator, post_order_visit
from ..function import Function
from ..transform.infer_type import infer_type
from .matcher import DFPatternMatcher, DominatorGraph, operands
from .patterns import (
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    DominatorPattern,
    ExprPattern,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    WildcardPattern,
)

__all__ = ["DFPatternCallback", "rewrite", "partition", "PatternGrouper", "Group"]

_MAX_ITERATIONS = 100


class DFPatternCallback:
    """A rewrite: set ``self.pattern`` and override :meth:`callback` (TVM's ``DFPatternCallback``).

    Parameters
    ----------
    require_type : bool
        Type the expression before each round (the callback reads ``checked_type``).
    rewrite_once : bool
        Run one round instead of rewriting to a fixpoint.
    """

    def __init__(self, require_type=False, rewrite_once=False):
        self.pattern = None
        self.require_type = require_type
        self.rewrite_once = rewrite_once

    def rewrite(self, expr):
        """``expr`` rewritten with this callback."""
        return rewrite(self, expr)

    def callback(self, pre, post, node_map):
        """The replacement of a match: ``pre`` is the matched root, ``post`` it rebuilt, ``node_map`` maps each
        pattern node to the (rebuilt) expressions it matched."""
        raise NotImplementedError(f"{type(self).__name__} must define callback(pre, post, node_map)")


class Group:
    """One match of a pattern (see the module docstring)."""

    def __init__(self, pattern, root, matched, inputs, function):
        self.pattern = pattern
        self.root = root
        self.matched = matched  # pattern node -> list of expressions
        self.inputs = inputs  # expressions that become the function's parameters, in order
        self.function = function


def _pattern_nodes(pattern) -> list:
    """The nodes of a pattern, inputs before users (each once)."""
    out, seen, stack = [], set(), [(pattern, False)]
    while stack:
        node, ready = stack.pop()
        if ready:
            if node not in seen:
                seen.add(node)
                out.append(node)
            continue
        if node in seen:
            continue
        stack.append((node, True))
        stack.extend((k, False) for k in reversed(_pattern_inputs(node)) if k not in seen)
    return out


def _pattern_inputs(node) -> list:
    if isinstance(node, CallPattern):
        return [node.op] + list(node.args or ())
    if isinstance(node, TuplePattern):
        return list(node.fields or ())
    if isinstance(node, TupleGetItemPattern):
        return [node.tuple]
    if isinstance(node, AltPattern):
        return [node.left, node.right]
    if isinstance(node, TypePattern | DataTypePattern | ShapePattern | AttrPattern):
        return [node.pattern]
    if isinstance(node, WildcardPattern) and node.pattern is not None:
        return [node.pattern]
    if isinstance(node, DominatorPattern):
        return [node.child, node.path, node.parent]
    return [getattr(node, f) for f in ("params", "body", "cond", "true_branch", "false_branch", "var", "value")
            if isinstance(getattr(node, f, None), DFPattern)]


def _is_leaf(node) -> bool:
    """Whether a pattern node's matches are inputs of a group (what matches it is not part of the group)."""
    return isinstance(node, WildcardPattern | ExprPattern | ConstantPattern) or type(node).__name__ == "VarPattern"


def _embedded(match, node) -> bool:
    """Operators, functions, and constants a constant or expression pattern asked for stay inside the group."""
    if isinstance(match, Op | Function):
        return True
    return isinstance(match, Constant) and isinstance(node, ConstantPattern | ExprPattern)


class PatternGrouper:
    """Finds the groups of ``pattern`` in ``expr`` (see the module docstring)."""

    def __init__(self, pattern, expr):
        self.pattern = pattern
        self.graph = DominatorGraph(expr)
        self.matcher = DFPatternMatcher(expr)
        self.groups: list = []
        self.group_of: dict = {}  # expression -> index of the group it belongs to
        partitioned: set = set()  # what an earlier partition already put in a function: never matched again
        for node in reversed(self.graph.order):
            if node in self.group_of or isinstance(node, Op):
                continue
            if isinstance(node, Function) and "PartitionedFromPattern" in node.attrs:
                partitioned.add(node)
                post_order_visit(node.body, partitioned.add)
            if node not in partitioned and self.matcher.match(pattern, node):
                self._create_group(node)

    def _create_group(self, root):
        matched: dict = {}
        for pat, expr in self.matcher.memo.items():
            matched.setdefault(pat, []).append(expr)
        inputs: list = []
        for node in _pattern_nodes(self.pattern):
            for expr in matched.get(node, ()):
                if _is_leaf(node) and not _embedded(expr, node) and expr not in inputs:
                    inputs.append(expr)
        inner = self._inner(root, inputs)
        if inner is None or any(e in self.group_of for e in inner):
            return
        params = [var(f"FunctionVar_{len(self.groups)}_{i}", _type_of(e)) for i, e in enumerate(inputs)]
        body = _replace(root, dict(zip(inputs, params, strict=True)))
        group = Group(self.pattern, root, matched, inputs, Function(params, body))
        index = len(self.groups)
        self.groups.append(group)
        for expr in inner:
            self.group_of[expr] = index

    def _inner(self, root, inputs):
        """The computations between ``root`` and ``inputs`` (operators, functions and constants, which live
        outside any one group, excluded); None when one of them but the root is used outside the group."""
        stops = set(inputs)
        inner, stack = set(), [root]
        while stack:
            expr = stack.pop()
            if expr in inner or expr in stops or isinstance(expr, Op | Function | Constant):
                continue
            inner.add(expr)
            stack.extend(operands(expr))
        for expr in inner:
            if expr is not root and any(user not in inner for user in self.graph.users.get(expr, ())):
                return None
        return inner


class _Replace(ExprMutator):
    """Rebuilds an expression with some of its nodes replaced (and their subtrees not visited)."""

    def __init__(self, mapping):
        super().__init__()
        self.mapping = mapping

    def prune(self, expr) -> bool:
        return expr in self.mapping

    def _dispatch(self, expr):
        return self.mapping[expr] if expr in self.mapping else super()._dispatch(expr)


def _type_of(expr):
    """The type of a group input, for its parameter (None when it cannot be known here)."""
    ttype = getattr(expr, "checked_type_", None) or getattr(expr, "type_annotation", None)
    if ttype is None:
        try:
            ttype = infer_type(expr).checked_type_
        except KilnError:
            return None
    return ttype


def _replace(expr, mapping):
    return _Replace(mapping).visit(expr)


class _Rewriter(ExprMutator):
    """Rebuilds an expression, replacing each group's root by what ``on_root(group, pre, post, node_map)`` gives."""

    def __init__(self, grouper, on_root):
        super().__init__()
        self.grouper, self.on_root = grouper, on_root

    def _dispatch(self, expr):
        post = super()._dispatch(expr)
        index = self.grouper.group_of.get(expr)
        if index is not None and self.grouper.groups[index].root is expr:
            group = self.grouper.groups[index]
            # the matched nodes are operands of the root, rebuilt already (the mutator visits operands first)
            node_map = {pat: [post if e is expr else self.visit(e) for e in exprs]
                        for pat, exprs in group.matched.items()}
            post = self.on_root(group, expr, post, node_map)
        return post


def rewrite(callbacks, expr, mod=None):
    """``expr`` rewritten by ``callbacks`` (one or a list of :class:`DFPatternCallback`) until nothing changes."""
    callbacks = callbacks if isinstance(callbacks, list | tuple) else [callbacks]
    for cb in callbacks:
        if not isinstance(getattr(cb, "pattern", None), DFPattern):
            raise KilnError(f"rewrite: callback {type(cb).__name__} has no pattern (set self.pattern)")
    post = expr
    for _ in range(_MAX_ITERATIONS):
        last = post
        for cb in callbacks:
            if cb.require_type:
                post = infer_type(post, mod)
            grouper = PatternGrouper(cb.pattern, post)
            post = _Rewriter(grouper, lambda g, pre, new, nodes, cb=cb: cb.callback(pre, new, nodes)).visit(post)
        if any(cb.rewrite_once for cb in callbacks) or structural_equal(last, post, map_free_vars=True):
            break
    return post


def _label(group) -> str:
    """TVM's ``PartitionedFromPattern`` label: the matched operators in pattern order, each followed by ``_``
    (``Tuple_`` and ``TupleGetItem<i>_`` for tuples and projections)."""
    parts = []
    for node in _pattern_nodes(group.pattern):
        matches = group.matched.get(node)
        if not matches:
            continue
        if isinstance(node, CallPattern) and isinstance(matches[0], Call) and isinstance(matches[0].op, Op):
            parts.append(matches[0].op.name + "_")
        elif isinstance(node, TuplePattern):
            parts.append("Tuple_")
        elif isinstance(node, TupleGetItemPattern):
            parts.append(f"TupleGetItem{node.index}_")
    return "".join(parts)


def partition(pattern, expr, attrs=None, check=lambda x: True):
    """``expr`` with every match of ``pattern`` for which ``check(root)`` holds replaced by a call of a function
    holding the match, with the attribute ``PartitionedFromPattern`` (and ``attrs``) (TVM's ``partition``)."""
    grouper = PatternGrouper(pattern, expr)
    rewriter = None

    def on_root(group, pre, post, node_map):
        if not check(pre):
            return post
        func = group.function.with_attr("PartitionedFromPattern", _label(group))
        for key, value in (attrs or {}).items():
            func = func.with_attr(key, value)
        return Call(func, [rewriter.visit(e) for e in group.inputs])

    rewriter = _Rewriter(grouper, on_root)
    return rewriter.visit(expr)
