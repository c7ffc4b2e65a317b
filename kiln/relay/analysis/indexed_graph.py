"""The indexed forward dataflow graph that FuseOps partitions (TVM's ``IndexedForwardGraph``).

Nodes are the function body's dataflow expressions in post-DFS order (inputs before users). Each node records its
fusion ``pattern`` (the operator's ``TOpPattern``; tuples ``TUPLE``, variables ``OPAQUE``, scalar constants
``ELEMWISE``, other constants ``OPAQUE``), its ``outputs`` (edges to the nodes that use it, each with the pattern of
that use), and ``extern_ref`` when something outside the graph uses it (the function result, a let, an if, a closure).

Edge patterns follow TVM: the edge from an argument to a broadcast operator is ``ELEMWISE`` when the argument already
has the output's shape, otherwise the operator's pattern.
"""

from dataclasses import dataclass, field

from ...ir.op import Op
from ...ir.type import TensorType, TupleType
from ..expr import Call, Constant, If, Let, Tuple, TupleGetItem
from ..expr_functor import expr_children
from ..function import Function
from ..op.op import OpPattern

_SIMPLE_CONST_DTYPES = {"int32", "int64", "float32", "float64", "bool"}


@dataclass(eq=False, slots=True)
class GraphNode:
    """A node of the forward graph: ``ref`` is the expression, ``index`` its post-DFS position."""

    ref: object
    index: int = -1
    pattern: OpPattern = OpPattern.OPAQUE
    extern_ref: bool = False
    outputs: list = field(default_factory=list)  # [(GraphNode, OpPattern)]

    def __repr__(self):
        name = getattr(getattr(self.ref, "op", None), "name", type(self.ref).__name__)
        return f"GraphNode({self.index}, {name}, {self.pattern.name}, extern={self.extern_ref})"


@dataclass(slots=True)
class IndexedForwardGraph:
    """Nodes in post-DFS order plus the map from expression to node."""

    post_dfs_order: list
    node_map: dict

    def __str__(self):
        lines = []
        for node in self.post_dfs_order:
            outs = ", ".join(f"{o.index}:{p.name}" for o, p in node.outputs)
            lines.append(f"{node!r} -> [{outs}]")
        return "\n".join(lines)


def _is_tensor(ttype) -> bool:
    return isinstance(ttype, TensorType)


def create_indexed_graph(body) -> IndexedForwardGraph:
    """Build the graph of the dataflow expression ``body`` (typed: every node needs ``checked_type_``).

    Nested functions, lets and ifs are opaque: their parts are visited, but nothing fuses across them.
    """
    node_map: dict = {}
    order: list = []

    def node_of(expr) -> GraphNode:
        node = node_map.get(expr)
        if node is None:
            node = node_map[expr] = GraphNode(expr)
        return node

    def link(expr, parent, pattern):
        node = node_of(expr)
        if parent is None:
            node.extern_ref = True
        else:
            node.outputs.append((parent, OpPattern(pattern)))

    def add(expr, pattern):
        node = node_of(expr)
        node.pattern = OpPattern(pattern)
        node.index = len(order)
        order.append(node)
        return node

    link(body, None, OpPattern.OPAQUE)
    # iterative post-order: a node is added after all its inputs
    stack = [(body, False)]
    done: set = set()
    while stack:
        expr, ready = stack.pop()
        if expr in done:
            continue
        if not ready:
            stack.append((expr, True))
            if isinstance(expr, Function) and expr.is_primitive():
                continue
            stack.extend((c, False) for c in reversed(expr_children(expr)) if c not in done and not isinstance(c, Op))
            continue
        done.add(expr)
        _add_expr(expr, node_of, link, add)
    return IndexedForwardGraph(order, node_map)


def _add_expr(expr, node_of, link, add):
    if isinstance(expr, Call):
        if isinstance(expr.op, Op):
            pattern = expr.op.get_attr("TOpPattern")
            pattern = OpPattern.OPAQUE if pattern is None else OpPattern(pattern)
        else:
            pattern = OpPattern.OPAQUE
            link(expr.op, None, OpPattern.OPAQUE)
        node = node_of(expr)
        out_type = expr.checked_type_
        for arg in expr.args:
            edge = pattern
            if pattern == OpPattern.BROADCAST and _is_tensor(out_type) and _is_tensor(arg.checked_type_) \
                    and arg.checked_type_.shape == out_type.shape:
                edge = OpPattern.ELEMWISE
            link(arg, node if isinstance(expr.op, Op) else None, edge)
        add(expr, pattern)
    elif isinstance(expr, Tuple):
        node = node_of(expr)
        for f in expr.fields:
            if _is_tensor(f.checked_type_):
                link(f, node, OpPattern.INJECTIVE)
            else:
                link(f, None, OpPattern.OPAQUE)
        add(expr, OpPattern.TUPLE)
    elif isinstance(expr, TupleGetItem):
        node = node_of(expr)
        ttype = expr.tuple_value.checked_type_
        if isinstance(ttype, TupleType) and all(_is_tensor(f) for f in ttype.fields):
            link(expr.tuple_value, node, OpPattern.INJECTIVE)
        else:
            link(expr.tuple_value, None, OpPattern.OPAQUE)
        add(expr, OpPattern.INJECTIVE)
    elif isinstance(expr, Constant):
        simple = expr.data.shape == () and expr.data.dtype in _SIMPLE_CONST_DTYPES
        add(expr, OpPattern.ELEMWISE if simple else OpPattern.OPAQUE)
    elif isinstance(expr, Let):
        for part in (expr.var, expr.value, expr.body):
            link(part, None, OpPattern.OPAQUE)
        add(expr, OpPattern.OPAQUE)
    elif isinstance(expr, If):
        for part in (expr.cond, expr.true_branch, expr.false_branch):
            link(part, None, OpPattern.OPAQUE)
        add(expr, OpPattern.OPAQUE)
    elif isinstance(expr, Function):
        if not expr.is_primitive():
            for part in (*expr.params, expr.body):
                link(part, None, OpPattern.OPAQUE)
        add(expr, OpPattern.OPAQUE)
    else:  # Var, GlobalVar
        add(expr, OpPattern.OPAQUE)
