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

Arguments are counted as TVM counts them (``CountArgs_``), so that a target's limit cuts groups where TVM's does:
each group starts with the number of variables and tuple projections its node reads, plus, for a tensor with
dynamic dimensions, one size per dynamic dimension and one stride per dimension; merging adds the counts. A node
whose producer group has no count yet (it reads only constants or other calls) postpones its fusion until the
node is reached, when the count is complete.
"""

from dataclasses import dataclass

from ...ir.type import TensorType, is_any
from ..expr import Call, Tuple, TupleGetItem, Var
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
    args_num: int = 0

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
            Group(node.pattern, node.ref, node.ref if node.pattern == OpPattern.OUT_ELEMWISE_FUSABLE else None,
                  args_num=_own_args(node.ref))
            for node in graph.post_dfs_order
        ]
        self.postpone_node = None
        self.postponed: dict = {}
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
            self.postpone_node = None
            for src in self.postponed.pop(gnode, ()):
                # the producers' counts are complete now: fuse what was held back if the arguments still fit
                if self._count_args(gnode, False) <= self._count_args_limit(gnode):
                    snode = dom_tree[src.index].parent.gnode
                    if groups[snode.index].anchor_ref is None:
                        self._commit_fuse(src, snode)
            if group.pattern == OpPattern.OPAQUE or dom.parent is None:
                continue
            sink = dom.parent.gnode
            if self._count_fused_nodes(gnode, sink) > self.max_depth:
                continue
            if self.max_function_args:
                limit = self._count_args_limit(gnode)
                if limit > 0 and max((self._count_args(out) for out, _ in gnode.outputs), default=0) > limit:
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
        if self.postpone_node is not None:
            self.postponed.setdefault(self.postpone_node, []).append(src)
            return
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
        parent.args_num += child.args_num
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

    def _count_args(self, src, update_postpone=True) -> int:
        """The arguments of ``src``'s group plus those of the groups producing its inputs (TVM's ``CountArgs_``);
        a producer without a count yet makes ``src`` the node to postpone fusion to (or is counted recursively)."""
        total = self.groups[src.index].args_num
        visited = {id(self.groups[src.index].find_root())}
        ref = src.ref
        inputs = ref.args if isinstance(ref, Call) else ref.fields if isinstance(ref, Tuple) else ()
        for arg in inputs:
            node = self.graph.node_map.get(arg)
            if isinstance(arg, Var) or node is None:
                continue
            producer = self.groups[node.index].find_root()
            if id(producer) in visited:
                continue
            visited.add(id(producer))
            if producer.args_num > 0:
                total += producer.args_num
            elif update_postpone:
                self.postpone_node = src
            else:
                total += self._count_args(node, False)
        return total

    def _count_args_limit(self, child) -> int:
        """``max_function_args`` less what the outputs of ``child``'s users take (TVM's ``CountArgsLimit_``)."""
        output_args = 0
        for out, _ in child.outputs:
            output_args += 1
            if isinstance(out.ref, Call):
                output_args += _additional_args(out.ref.checked_type_, with_strides=False)
        return self.max_function_args - output_args if self.max_function_args > output_args else 0


def _additional_args(ttype, with_strides=True) -> int:
    """Arguments a kernel takes for a tensor beyond its buffer: the size of each dynamic dimension, and with them
    the strides of every dimension."""
    if not isinstance(ttype, TensorType):
        return 0
    n_any = sum(1 for d in ttype.shape if is_any(d))
    return n_any + len(ttype.shape) if with_strides and n_any else n_any


def _own_args(ref) -> int:
    """The arguments a node starts its group with: the variables and tuple projections it reads (TVM's
    ``InitGroups``); a variable counts itself."""
    if isinstance(ref, Var):
        return 1 + _additional_args(ref.checked_type_)
    inputs = ref.args if isinstance(ref, Call) else ref.fields if isinstance(ref, Tuple) else ()
    return sum(1 + _additional_args(a.checked_type_) for a in inputs if isinstance(a, Var | TupleGetItem))


def _broadcast_path_ok(kind, is_sink) -> bool:
    if not is_sink:
        return kind <= OpPattern.INJECTIVE
    return kind <= OpPattern.BROADCAST or kind in (OpPattern.COMM_REDUCE, OpPattern.INJECTIVE,
                                                   OpPattern.OUT_ELEMWISE_FUSABLE)
