"""The fusion partitioner (TVM's ``GraphPartitioner``): groups graph nodes into fused operators.

Every node starts in its own group (a union-find forest; the root of a group is the node whose value leaves the
group). A node is merged into its immediate post-dominator's group when every path between the two satisfies a
condition on the patterns met, in three phases so that heavy operators claim their consumers first:

* phase 0: an ``OUT_ELEMWISE_FUSABLE`` node (conv2d, dense) takes its post-dominator when the dominating path is
  element-wise and every node on it is at most ``BROADCAST``; element-wise/broadcast nodes fuse into injective or
  reduction post-dominators (this continues in phase 1);
* phase 1: ``INJECTIVE`` nodes and tuples fuse along all-injective paths;
* phase 2: injective nodes fuse into a tuple that was itself fused into a later injective group.

Merging (``merge_from_to``) keeps the anchor (the out-element-wise-fusable node) and combines patterns. A merge is
refused when the group would exceed ``max_depth`` nodes or ``max_function_args`` arguments.
"""

from dataclasses import dataclass

from ..op.op import OpPattern
from .post_dominator import post_dominator_tree


@dataclass(eq=False, slots=True)
class Group:
    """A union-find set of graph nodes; the fields are meaningful on the root (``find_root()``)."""

    pattern: OpPattern
    root_ref: object
    anchor_ref: object = None
    parent: "Group | None" = None
    num_nodes: int = 1

    def find_root(self) -> "Group":
        """The root of this group, compressing the path on the way."""
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node.parent is not None and node.parent is not root:
            node.parent, node = root, node.parent
        return root


class GraphPartitioner:
    """Partition an :class:`IndexedForwardGraph` into fusion groups.

    Parameters
    ----------
    opt_level : int
        ``fuse_opt_level``: 0 keeps every node in its own group.
    max_depth : int
        The largest number of nodes in one group.
    max_function_args : int
        The largest number of inputs of one group (0: no limit).
    """

    def __init__(self, opt_level=2, max_depth=256, max_function_args=0):
        self.opt_level = opt_level
        self.max_depth = max_depth
        self.max_function_args = max_function_args
        self.groups: list = []

    def partition(self, graph, dom_tree=None) -> list:
        """Return the group of each node, indexed like ``graph.post_dfs_order`` (``dom_tree``: a precomputed
        :func:`post_dominator_tree` of ``graph``)."""
        self.graph = graph
        self.groups = [
            Group(node.pattern, node.ref, node.ref if node.pattern == OpPattern.OUT_ELEMWISE_FUSABLE else None)
            for node in graph.post_dfs_order
        ]
        if self.opt_level == 0:
            return self.groups
        if dom_tree is None:
            dom_tree = post_dominator_tree(graph)
        for phase in range(3):
            self._run_fuse(graph, dom_tree, phase)
        return self.groups

    # ---------------------------------------------------------------------------------------------------------------
    def _run_fuse(self, graph, dom_tree, phase):
        groups = self.groups
        for nid, gnode in enumerate(graph.post_dfs_order):
            dom = dom_tree[nid]
            group = groups[nid]
            if group.pattern == OpPattern.OPAQUE or dom.parent is None:
                continue
            sink = dom.parent.gnode
            if self._count_fused_nodes(gnode, sink) > self.max_depth:
                continue
            if self.max_function_args and self._count_fused_args(gnode, sink) > self.max_function_args:
                continue
            parent_group = groups[sink.index]
            if phase == 2:
                if group.pattern > OpPattern.INJECTIVE:
                    continue
                root_group = parent_group.find_root()
                if root_group.pattern == OpPattern.TUPLE:
                    continue
                if parent_group.pattern == OpPattern.TUPLE and root_group.pattern <= OpPattern.INJECTIVE:
                    if self._check_path(gnode, sink, lambda kind, is_sink: kind <= OpPattern.INJECTIVE):
                        self._commit_fuse(gnode, sink)
                continue
            if group.find_root() is parent_group.find_root():
                continue
            if parent_group.pattern == OpPattern.TUPLE:
                continue
            if group.pattern == OpPattern.OUT_ELEMWISE_FUSABLE:
                if phase == 0 and dom.pattern == OpPattern.ELEMWISE:
                    if self._check_path(gnode, sink, lambda kind, is_sink: kind <= OpPattern.BROADCAST):
                        self._commit_fuse(gnode, sink)
            elif group.pattern <= OpPattern.BROADCAST:
                if dom.pattern <= OpPattern.INJECTIVE or dom.pattern == OpPattern.COMM_REDUCE:
                    if self._check_path(gnode, sink, _broadcast_path_ok):
                        self._commit_fuse(gnode, sink)
            elif group.pattern in (OpPattern.INJECTIVE, OpPattern.TUPLE):
                if phase == 1 and self._check_path(gnode, sink, lambda kind, is_sink: kind <= OpPattern.INJECTIVE):
                    self._commit_fuse(gnode, sink)

    def _between(self, src, sink):
        """Nodes on paths from ``src`` (exclusive) towards ``sink`` (inclusive), each once."""
        seen = set()
        stack = [out for out, _ in src.outputs]
        while stack:
            node = stack.pop()
            if node.index in seen:
                continue
            seen.add(node.index)
            yield node
            if node is not sink:
                stack.extend(out for out, _ in node.outputs)

    def _check_path(self, src, sink, condition) -> bool:
        """Whether every node between ``src`` and ``sink`` (judged by its group's pattern) satisfies ``condition``."""
        return all(condition(self.groups[n.index].find_root().pattern, n is sink) for n in self._between(src, sink))

    def _commit_fuse(self, src, sink):
        target = self.groups[sink.index]
        self.merge_from_to(self.groups[src.index], target)
        for node in self._between(src, sink):
            if node is not sink:
                self.merge_from_to(self.groups[node.index], target)

    @staticmethod
    def merge_from_to(child: Group, parent: Group):
        """Merge the group of ``child`` into the group of ``parent`` (TVM's ``MergeFromTo``)."""
        child, parent = child.find_root(), parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor_ref is not None:
            parent.anchor_ref = child.anchor_ref
            parent.pattern = max(child.pattern, parent.pattern)

    def _count_fused_nodes(self, src, sink) -> int:
        roots = {id(self.groups[src.index].find_root()): self.groups[src.index].find_root()}
        for node in self._between(src, sink):
            if node is not sink:
                root = self.groups[node.index].find_root()
                roots[id(root)] = root
        target = self.groups[sink.index].find_root()
        roots.pop(id(target), None)
        return target.num_nodes + sum(r.num_nodes for r in roots.values())

    def _count_fused_args(self, src, sink) -> int:
        """The number of distinct inputs the group of ``sink`` would take after absorbing the path from ``src``."""
        merged = {id(self.groups[src.index].find_root()), id(self.groups[sink.index].find_root())}
        merged.update(id(self.groups[n.index].find_root()) for n in self._between(src, sink))
        inputs = set()
        for node in self.graph.post_dfs_order:
            if id(self.groups[node.index].find_root()) in merged:
                continue
            if any(id(self.groups[out.index].find_root()) in merged for out, _ in node.outputs):
                inputs.add(node.index)
        return len(inputs)


def _broadcast_path_ok(kind, is_sink) -> bool:
    if not is_sink:
        return kind <= OpPattern.INJECTIVE
    return kind <= OpPattern.BROADCAST or kind in (OpPattern.COMM_REDUCE, OpPattern.INJECTIVE,
                                                   OpPattern.OUT_ELEMWISE_FUSABLE)
