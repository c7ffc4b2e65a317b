"""The post-dominator tree of an indexed forward graph (TVM's ``DominatorTree::PostDom``).

A node's immediate post-dominator is the least common ancestor, in the tree built so far, of the nodes that use it;
visiting nodes from the outputs back (reverse post-DFS order) guarantees every user is already in the tree. Each tree
node also records ``pattern``: the most "opaque" (largest) edge or node pattern met on the way from the node up to
its post-dominator, which tells FuseOps what kind of path it would fuse across.
"""

from dataclasses import dataclass

from ..op.op import OpPattern


@dataclass(eq=False, slots=True)
class DomNode:
    """``parent`` is the immediate post-dominator (None for outputs and nodes used outside the graph)."""

    gnode: object
    parent: "DomNode | None"
    depth: int
    pattern: OpPattern


def _lca(lhs, rhs, pattern):
    while lhs is not rhs:
        if lhs is None or rhs is None:
            return None, pattern
        if lhs.depth < rhs.depth:
            pattern = max(pattern, rhs.pattern)
            rhs = rhs.parent
        elif rhs.depth < lhs.depth:
            pattern = max(pattern, lhs.pattern)
            lhs = lhs.parent
        else:
            pattern = max(pattern, lhs.pattern, rhs.pattern)
            lhs, rhs = lhs.parent, rhs.parent
    return lhs, pattern


def post_dominator_tree(graph) -> list:
    """Return one :class:`DomNode` per graph node, indexed like ``graph.post_dfs_order``."""
    nodes: list = [None] * len(graph.post_dfs_order)
    for i in range(len(nodes) - 1, -1, -1):
        gnode = graph.post_dfs_order[i]
        if gnode.extern_ref or not gnode.outputs:
            nodes[i] = DomNode(gnode, None, 1, OpPattern.OPAQUE)
            continue
        pattern = OpPattern.ELEMWISE
        first, edge = gnode.outputs[0]
        parent = nodes[first.index]
        pattern = max(pattern, edge)
        for out, edge in gnode.outputs[1:]:
            parent, pattern = _lca(parent, nodes[out.index], pattern)
            pattern = max(pattern, edge)
        nodes[i] = DomNode(gnode, parent, parent.depth + 1 if parent else 1, OpPattern(pattern))
    return nodes
