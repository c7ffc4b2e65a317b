"""FuseOps: group operators into primitive functions, the unit that lowering compiles into one kernel.

The algorithm is TVM's (``src/relay/transforms/fuse_ops.cc``), split the same way:

1. ``create_indexed_graph`` (relay/analysis/indexed_graph.py) lists the dataflow nodes in post-DFS order with their
   fusion patterns and use edges;
2. ``GraphPartitioner`` (relay/analysis/graph_partitioner.py) builds the post-dominator tree and merges each node into
   its post-dominator's group in three phases (out-element-wise-fusable ops with their element-wise consumers,
   then injective chains, then injective ops into tuples);
3. ``FuseMutator`` (here) rewrites the body: every group becomes ``fn (%p0, ..., Primitive=1) { ... }`` called at
   the group's root with the group's inputs as arguments. Constants become arguments too, unless
   ``relay.FuseOps.link_params`` is set, in which case they stay inside the primitive function.
"""

from dataclasses import dataclass

from ...ir.attrs import DictAttrs
from ...ir.op import Op
from ...ir.pass_context import register_config
from ...ir.transform import PassInfo, register_pass
from ...target.target import Target
from ..analysis.graph_partitioner import GraphPartitioner
from ..analysis.indexed_graph import create_indexed_graph
from ..expr import Call, Constant, TupleGetItem, Var
from ..expr_functor import ExprMutator
from ..function import Function
from .function_pass import FunctionPass
from .infer_type import infer_type


class _GroupInfo:
    __slots__ = ("params", "arguments", "index")

    def __init__(self):
        self.params: list = []
        self.arguments: list = []
        self.index: dict = {}


class FuseMutator(ExprMutator):
    """Rewrites a typed function body given the partition of its indexed graph."""

    def __init__(self, graph, groups, link_params=False):
        super().__init__()
        self.gmap = {node.ref: groups[node.index] for node in graph.post_dfs_order}
        self.ginfo: dict = {}
        self.link_params = link_params

    def _root(self, expr):
        group = self.gmap.get(expr)
        return None if group is None else group.find_root()

    def _info(self, group) -> _GroupInfo:
        info = self.ginfo.get(group)
        if info is None:
            info = self.ginfo[group] = _GroupInfo()
        return info

    def _new_args(self, args, group):
        new_args = []
        for arg in args:
            new_arg = self.visit(arg)
            if self._root(arg) is group or (self.link_params and isinstance(new_arg, Constant)):
                new_args.append(new_arg)
                continue
            info = self._info(group)
            param = info.index.get(new_arg)
            if param is None:
                param = Var(f"p{len(info.params)}", arg.checked_type_)
                info.index[new_arg] = param
                info.params.append(param)
                info.arguments.append(new_arg)
            new_args.append(param)
        return tuple(new_args)

    def _make_function(self, group, body):
        info = self._info(group)
        func = Function(tuple(info.params), body, attrs=DictAttrs.make({"Primitive": 1}))
        return Call(func, tuple(info.arguments))

    def visit_function(self, fn):
        if fn.is_primitive():
            return fn
        return super().visit_function(fn)

    def visit_call(self, call):
        if not isinstance(call.op, Op) or call not in self.gmap or call.op.get_attr("TNonComputational"):
            return super().visit_call(call)  # memory/VM dialect ops are instructions, never kernels
        if call.op.name == "annotation.stop_fusion":
            # the annotation did its work (an opaque node the partitioner could not fuse across); as in TVM it
            # leaves no kernel behind: its producer's group ends here and its consumers read the value directly
            return self.visit(call.args[0])
        group = self._root(call)
        new_call = call.with_fields(args=self._new_args(call.args, group))
        if group.root_ref is call:
            return self._make_function(group, new_call)
        return new_call

    def visit_tuple(self, tup):
        group = self._root(tup)
        if group is None or group.root_ref is tup:
            return super().visit_tuple(tup)
        return tup.with_fields(fields=self._new_args(tup.fields, group))

    def visit_tuple_getitem(self, item):
        group = self._root(item)
        if group is None:
            return super().visit_tuple_getitem(item)
        if group.root_ref is item and self._root(item.tuple_value) is not group:
            return super().visit_tuple_getitem(item)  # alone in its group: no function for one field access
        new_item = TupleGetItem(self._new_args([item.tuple_value], group)[0], item.index)
        if group.root_ref is item:
            return self._make_function(group, new_item)
        return new_item


def fuse_function(func, fuse_opt_level=2, max_depth=256, max_function_args=0, link_params=False, analyses=None,
                  mod=None):
    """Fuse the operators of the Relay function ``func`` (typed or not); returns a typed function.

    Parameters
    ----------
    func : relay.Function
        The function whose body is fused (primitive functions are returned unchanged).
    fuse_opt_level : int
        0 puts every operator in its own primitive function; higher levels fuse.
    max_depth : int
        The largest number of operators in one primitive function.
    max_function_args : int
        The largest number of parameters of one primitive function (0: unlimited).
    link_params : bool
        Keep constants inside primitive functions instead of passing them as arguments.
    analyses : AnalysisManager, optional
        Where to get the (cached) indexed graph and post-dominator tree from.
    mod : IRModule, optional
        The typed module ``func`` belongs to (the types of the global functions it calls).
    """
    if func.is_primitive():
        return func
    func = infer_type(func, mod)
    if analyses is not None:
        graph, dom_tree = analyses.get("relay.PostDominatorTree", func)
    else:
        graph = create_indexed_graph(func.body)
        dom_tree = None
    groups = GraphPartitioner(fuse_opt_level, max_depth, max_function_args).partition(graph, dom_tree)
    body = FuseMutator(graph, groups, link_params).visit(func.body)
    return infer_type(func.with_fields(body=body, ret_type=None, checked_type_=None), mod)


register_config("relay.FuseOps.max_depth", int, 256)
register_config("relay.FuseOps.link_params", bool, False)


def _target_max_function_args() -> int:
    target = Target.current()
    return target.max_function_args if target is not None else 0


@register_pass("FuseOps")
@dataclass(frozen=True)
class FuseOps(FunctionPass):
    """Fuse operators into primitive functions (TVM's ``relay.transform.FuseOps``).

    ``fuse_opt_level=-1`` uses the pass context's opt_level; config keys ``relay.FuseOps.max_depth`` and
    ``relay.FuseOps.link_params`` and the current target's ``max_function_args`` bound the groups.

    Examples
    --------
    >>> with kiln.transform.PassContext(opt_level=2):      # doctest: +SKIP
    ...     mod = relay.transform.FuseOps()(mod)
    """

    fuse_opt_level: int = -1
    info = PassInfo(0, "FuseOps", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        level = ctx.opt_level if self.fuse_opt_level == -1 else self.fuse_opt_level
        return fuse_function(
            func, level, ctx.config.get("relay.FuseOps.max_depth", 256), _target_max_function_args(),
            ctx.config.get("relay.FuseOps.link_params", False), ctx.analysis_manager, mod,
        )
