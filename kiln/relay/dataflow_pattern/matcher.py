"""Matching a dataflow pattern against an expression (TVM's ``DFPatternMatcher``).

The matcher walks pattern and expression together. It remembers which expression each pattern node matched
(``memo``): a pattern node met again must meet the same expression, and a failed alternative forgets what it
matched since it started (a watermark on the list of matched pattern nodes). Calls of ``add`` and ``multiply`` also
match with their arguments swapped. Types, dtypes and shapes are read from ``checked_type`` (an untyped expression
is typed on its own first).

Dominator patterns need the graph around the expression: :class:`DominatorGraph` indexes every node of the root
expression with its users and immediate post-dominator (the lowest common ancestor, in the tree of post-dominators,
of its users), as TVM's ``IndexedGraph`` does.
"""

import numpy as np

from ...error import KilnError
from ...ir.op import Op
from ...ir.structural import structural_equal
from ...ir.type import TensorType, is_any
from ..expr import Call, Constant, If, Let, Tuple, TupleGetItem, Var
from ..function import Function
from ..transform.infer_type import infer_type
from .patterns import (
    ExprPattern,
)

__all__ = ["DFPatternMatcher", "DominatorGraph", "match", "operands"]

_COMMUTATIVE = ("add", "multiply")


def operands(expr) -> list:
    """The dataflow inputs of ``expr`` (a call's callee when it is an expression, then its arguments)."""
    if isinstance(expr, Call):
        return ([] if isinstance(expr.op, Op) else [expr.op]) + list(expr.args)
    if isinstance(expr, Tuple):
        return list(expr.fields)
    if isinstance(expr, TupleGetItem):
        return [expr.tuple_value]
    if isinstance(expr, If):
        return [expr.cond, expr.true_branch, expr.false_branch]
    if isinstance(expr, Let):
        return [expr.var, expr.value, expr.body]
    if isinstance(expr, Function):
        return [expr.body]
    return []


class DominatorGraph:
    """Every node of ``root`` in topological order, with its users and immediate post-dominator."""

    def __init__(self, root):
        self.order: list = []
        seen: set = set()
        stack = [(root, False)]
        while stack:
            expr, ready = stack.pop()
            if ready:
                if expr not in seen:
                    seen.add(expr)
                    self.order.append(expr)
                continue
            if expr in seen:
                continue
            stack.append((expr, True))
            stack.extend((k, False) for k in reversed(operands(expr)) if k not in seen)
        self.users: dict = {e: [] for e in self.order}
        for expr in self.order:
            for kid in operands(expr):
                self.users[kid].append(expr)
        self.ipdom: dict = {}
        self.depth: dict = {}
        for expr in reversed(self.order):  # users first: each user's place in the tree is known
            users = self.users[expr]
            parent = users[0] if users else None
            for user in users[1:]:
                parent = self._lca(parent, user)
            self.ipdom[expr] = parent
            self.depth[expr] = 0 if parent is None else self.depth[parent] + 1
        self.children: dict = {e: [] for e in self.order}
        for expr, parent in self.ipdom.items():
            if parent is not None:
                self.children[parent].append(expr)

    def _lca(self, a, b):
        while a is not b:
            if a is None or b is None:
                return None
            if self.depth[a] >= self.depth[b]:
                a = self.ipdom[a]
            else:
                b = self.ipdom[b]
        return a


def _type(expr):
    ttype = getattr(expr, "checked_type_", None)
    if ttype is None:
        try:
            ttype = infer_type(expr).checked_type_
        except KilnError:
            return None
    return ttype


def _same_value(want, got) -> bool:
    """Whether an attribute value ``got`` is the pattern's ``want`` (sequences element-wise, numbers by value)."""
    if isinstance(want, list | tuple) and isinstance(got, list | tuple):
        return len(want) == len(got) and all(_same_value(w, g) for w, g in zip(want, got, strict=True))
    if isinstance(want, str) or isinstance(got, str):
        return str(want) == str(got)
    try:
        return bool(np.all(np.asarray(want) == np.asarray(got))) and np.shape(want) == np.shape(got)
    except (TypeError, ValueError):
        return want == got


def _shape_matches(want, got) -> bool:
    return len(want) == len(got) and all(is_any(w) or (not is_any(g) and int(w) == int(g))
                                         for w, g in zip(want, got, strict=True))


class DFPatternMatcher:
    """Matches patterns against expressions of one graph (``root``, needed only by dominator patterns)."""

    def __init__(self, root=None):
        self.root = root
        self._graph = None
        self.memo: dict = {}
        self.matched: list = []
        self.memoize = True

    def match(self, pattern, expr) -> bool:
        """Whether ``pattern`` matches ``expr`` (``memo`` then holds what each pattern node matched)."""
        self.memo.clear()
        self.matched.clear()
        self.memoize = True
        return self.visit(pattern, expr)

    def _forget(self, watermark):
        for pattern in self.matched[watermark:]:
            self.memo.pop(pattern, None)
        del self.matched[watermark:]

    def visit(self, pattern, expr) -> bool:
        if self.memoize and pattern in self.memo:
            return self.memo[pattern] is expr
        watermark = len(self.matched)
        method = getattr(self, "_" + type(pattern).__name__, None)
        if method is None:
            raise KilnError(f"dataflow_pattern: unknown pattern node {type(pattern).__name__}")
        if method(pattern, expr):
            if pattern not in self.memo:
                self.memo[pattern] = expr
                self.matched.append(pattern)
            return True
        self._forget(watermark)
        return False

    # ---- one method per pattern node
    def _ExprPattern(self, p, expr):  # noqa: N802  (dispatched by class name)
        if isinstance(p.expr, Op):
            return isinstance(expr, Op) and expr.name == p.expr.name
        return p.expr is expr or structural_equal(p.expr, expr)

    def _WildcardPattern(self, p, expr):  # noqa: N802
        return p.pattern is None or self.visit(p.pattern, expr)

    def _VarPattern(self, p, expr):  # noqa: N802
        return isinstance(expr, Var) and (not p.name_hint or expr.name_hint == p.name_hint)

    def _ConstantPattern(self, p, expr):  # noqa: N802
        return isinstance(expr, Constant)

    def _args(self, patterns, args) -> bool:
        if patterns is None:
            return True
        return len(patterns) == len(args) and all(self.visit(p, a) for p, a in zip(patterns, args, strict=True))

    def _CallPattern(self, p, expr):  # noqa: N802
        if not isinstance(expr, Call):
            return False
        watermark = len(self.matched)
        if not self.visit(p.op, expr.op):
            return False
        if self._args(p.args, expr.args):
            return True
        self._forget(watermark)
        commutative = isinstance(p.op, ExprPattern) and isinstance(p.op.expr, Op) and p.op.expr.name in _COMMUTATIVE
        if commutative and p.args is not None and len(p.args) == 2:
            return self.visit(p.op, expr.op) and self._args(p.args[::-1], expr.args)
        return False

    def _FunctionPattern(self, p, expr):  # noqa: N802
        return isinstance(expr, Function) and self._args(p.params, expr.params) and self.visit(p.body, expr.body)

    def _IfPattern(self, p, expr):  # noqa: N802
        return (isinstance(expr, If) and self.visit(p.cond, expr.cond) and self.visit(p.true_branch, expr.true_branch)
                and self.visit(p.false_branch, expr.false_branch))

    def _LetPattern(self, p, expr):  # noqa: N802
        return (isinstance(expr, Let) and self.visit(p.var, expr.var) and self.visit(p.value, expr.value)
                and self.visit(p.body, expr.body))

    def _TuplePattern(self, p, expr):  # noqa: N802
        return isinstance(expr, Tuple) and self._args(p.fields, expr.fields)

    def _TupleGetItemPattern(self, p, expr):  # noqa: N802
        return (isinstance(expr, TupleGetItem) and (p.index < 0 or p.index == expr.index)
                and self.visit(p.tuple, expr.tuple_value))

    def _AltPattern(self, p, expr):  # noqa: N802
        return self.visit(p.left, expr) or self.visit(p.right, expr)

    def _TypePattern(self, p, expr):  # noqa: N802
        ttype = _type(expr)
        return ttype is not None and structural_equal(p.type, ttype) and self.visit(p.pattern, expr)

    def _DataTypePattern(self, p, expr):  # noqa: N802
        ttype = _type(expr)
        return isinstance(ttype, TensorType) and ttype.dtype == p.dtype and self.visit(p.pattern, expr)

    def _ShapePattern(self, p, expr):  # noqa: N802
        ttype = _type(expr)
        return (isinstance(ttype, TensorType) and _shape_matches(p.shape, ttype.shape)
                and self.visit(p.pattern, expr))

    def _AttrPattern(self, p, expr):  # noqa: N802
        return self._attrs_match(p.attrs, expr) and self.visit(p.pattern, expr)

    @staticmethod
    def _attrs_match(attrs, expr) -> bool:
        for key, want in attrs.items():
            if isinstance(expr, Op):
                got = expr.get_attr(key)
            elif isinstance(expr, Call):
                if expr.attrs is None or key not in expr.attrs.keys():
                    return False
                got = expr.attrs[key]
            elif isinstance(expr, Function):
                got = (expr.attrs or {}).get(key)
            else:
                return False
            if got is None or not _same_value(want, got):
                return False
        return True

    # ---- dominators
    def _DominatorPattern(self, p, expr):  # noqa: N802
        if not self.visit(p.child, expr):
            return False
        matches_path = self._matches_path(p, expr)
        self.memoize = True
        return matches_path and self._dominates_parent(p, expr)

    def _graph_of(self, expr):
        if self._graph is None or expr not in self._graph.users:
            self._graph = DominatorGraph(self.root if self.root is not None else expr)
            if expr not in self._graph.users:
                self._graph = DominatorGraph(expr)
        return self._graph

    def _matches_path(self, p, expr) -> bool:
        """Every input of ``expr`` is the parent, or a path node whose inputs are in turn."""
        inputs = [k for k in operands(expr) if not (isinstance(expr, Call) and k is expr.op)]
        for node in inputs:
            self.memoize = True
            if not self.visit(p.parent, node):
                self.memoize = False
                if not self.visit(p.path, node) or not self._matches_path(p, node):
                    return False
        return bool(inputs)

    def _dominates_parent(self, p, expr) -> bool:
        """Whether a node ``expr`` post-dominates (in the graph of the root) matches the parent."""
        graph = self._graph_of(expr)
        stack, seen = [expr], set()
        while stack:
            for child in graph.children.get(stack.pop(), ()):
                if child in seen:
                    continue
                seen.add(child)
                if self.visit(p.parent, child):
                    return True
                stack.append(child)
        return False


def match(pattern, expr) -> bool:
    """Whether ``pattern`` matches ``expr`` (TVM's ``relay.dataflow_pattern.match``)."""
    return DFPatternMatcher(expr).match(pattern, expr)
