"""The regions of an annotated program (TVM's ``relay.analysis.AnnotatedRegionSet``).

A region starts at ``region_begin`` calls and ends at ``region_end`` calls (``compiler_begin``/``compiler_end``, or
any pair of operators with ``CompilerAttrs``). Each begin call opens a new region; every node computed from values of
one region (not through an end call) joins it, merging the regions of its arguments when they differ; an end call
closes its argument's region. A region knows its target (the compiler of its annotations), its inputs (the begin
calls), its outputs (the end calls) and every node in it. ``MergeCompilerRegions`` merges neighbouring regions of one
target and ``PartitionGraph`` lifts each region into a function.
"""

from ...error import KilnError
from ...ir.op import Op
from ..expr import Call
from ..expr_functor import ExprVisitor

__all__ = ["AnnotatedRegion", "AnnotatedRegionSet"]


class AnnotatedRegion:
    """One region: its id, target, the begin calls entering it, the end calls leaving it and its nodes."""

    def __init__(self, region_id, target, func_name="default"):
        self.id = region_id
        self.target = target
        self.func_name = func_name
        self.ins: list = []
        self.outs: list = []
        self.nodes: set = set()

    def get_id(self):
        """The region's number (regions are numbered in the order their first begin call was met)."""
        return self.id

    def get_target(self):
        """The compiler the region's annotations name."""
        return self.target

    def get_inputs(self):
        """The begin calls entering the region."""
        return list(self.ins)

    def get_outputs(self):
        """The end calls leaving the region."""
        return list(self.outs)

    @property
    def args(self):
        """The begin calls entering the region (TVM's field name)."""
        return list(self.ins)

    @property
    def rets(self):
        """The end calls leaving the region (TVM's field name)."""
        return list(self.outs)

    def get_nodes(self):
        """Every expression in the region, its begin and end calls included."""
        return set(self.nodes)

    def __repr__(self):
        return f"AnnotatedRegion(id={self.id}, target={self.target!r}, {len(self.ins)} in, {len(self.outs)} out)"


class AnnotatedRegionSet:
    """The regions of ``expr`` delimited by calls of ``region_begin`` and ``region_end``.

    Parameters
    ----------
    expr : RelayExpr
        The annotated expression (usually a function).
    region_begin, region_end : Op
        The operators opening and closing a region (``annotation.compiler_begin``/``compiler_end``).
    func_name : str
        The name recorded on each region (the function the regions belong to).
    """

    def __init__(self, expr, region_begin=None, region_end=None, func_name="default"):
        self.begin_op = region_begin if region_begin is not None else Op.get("annotation.compiler_begin")
        self.end_op = region_end if region_end is not None else Op.get("annotation.compiler_end")
        self.func_name = func_name
        self.regions: list = []
        self._next_id = 0
        self._region_of: dict = {}  # node -> its region (kept with the regions' node sets)
        _Creator(self).visit(expr)

    def __iter__(self):
        return iter(list(self.regions))

    def __len__(self):
        return len(self.regions)

    def get_region(self, expr):
        """The region ``expr`` belongs to, or None."""
        return self._region_of.get(expr)

    def add_node(self, region, expr):
        """Put ``expr`` (in no region yet) into ``region``."""
        region.nodes.add(expr)
        self._region_of[expr] = region

    def make_region(self, target):
        """A new, empty region of ``target``."""
        region = AnnotatedRegion(self._next_id, target, self.func_name)
        self._next_id += 1
        self.regions.append(region)
        return region

    def merge_regions(self, src, dest):
        """Move everything of ``src`` into ``dest``: an input of one fed by an output of the other is internal now."""
        if src is dest:
            return
        dest.nodes |= src.nodes
        for node in src.nodes:
            self._region_of[node] = dest
        dest.ins.extend(src.ins)
        dest.outs.extend(src.outs)
        internal = [begin for begin in dest.ins if begin.args[0] in src.nodes]
        ended = {begin.args[0] for begin in internal}
        dest.outs = [end for end in dest.outs if end not in ended]
        dest.ins = [begin for begin in dest.ins if begin not in set(internal)]
        self.regions.remove(src)

    def add_to_region(self, dest, expr):
        """Put ``expr`` in ``dest`` (merging its own region into ``dest`` when it has one)."""
        src = self.get_region(expr)
        if src is not None:
            self.merge_regions(src, dest)
        else:
            self.add_node(dest, expr)


class _Creator(ExprVisitor):
    """Builds the regions: begin calls open them, nodes join their arguments' region, end calls close them."""

    def __init__(self, region_set):
        super().__init__()
        self.set = region_set

    def _is(self, expr, op):
        return type(expr) is Call and expr.op is op

    def add_to_arg_region(self, expr, args):
        open_args = [a for a in args if not self._is(a, self.set.end_op)]  # a closed region is only an input
        region = next((r for r in map(self.set.get_region, open_args) if r is not None), None)
        for arg in open_args:
            arg_region = self.set.get_region(arg)
            if (region is None) != (arg_region is None):
                raise KilnError("AnnotatedRegionSet: an expression takes values from inside and from outside every "
                                f"region without a begin annotation between them: {expr}")
            if region is not None and arg_region is not region:
                self.set.merge_regions(arg_region, region)
        if region is not None:
            self.set.add_to_region(region, expr)

    def visit_call(self, call):
        super().visit_call(call)
        if call.op is self.set.begin_op:
            region = self.set.make_region(call.attrs.compiler)
            self.set.add_node(region, call)
            region.ins.append(call)
        elif call.op is self.set.end_op:
            region = self.set.get_region(call.args[0])
            if region is None:
                raise KilnError(f"AnnotatedRegionSet: no region ends at this end annotation (its argument was not "
                                f"computed inside a region): {call}")
            if region.target != call.attrs.compiler:
                raise KilnError(f"AnnotatedRegionSet: an end annotation of {call.attrs.compiler!r} closes a region "
                                f"of {region.target!r}")
            self.set.add_node(region, call)
            region.outs.append(call)
        else:
            self.add_to_arg_region(call, call.args)

    def visit_tuple(self, tup):
        super().visit_tuple(tup)
        self.add_to_arg_region(tup, tup.fields)

    def visit_tuple_getitem(self, item):
        super().visit_tuple_getitem(item)
        self.add_to_arg_region(item, [item.tuple_value])

    # the control-flow and reference nodes join their operands' region before their operands are visited, as TVM's
    def visit_let(self, let):
        chain, body = self.let_chain(let)
        for binding in chain:
            self.add_to_arg_region(binding, [binding.var, binding.value, binding.body])
            self.visit(binding.var)
            self.visit(binding.value)
        self.visit(body)

    def visit_if(self, node):
        self.add_to_arg_region(node, [node.cond, node.true_branch, node.false_branch])
        super().visit_if(node)

    def visit_ref_create(self, ref):
        self.add_to_arg_region(ref, [ref.value])
        super().visit_ref_create(ref)

    def visit_ref_read(self, ref):
        self.add_to_arg_region(ref, [ref.ref])
        super().visit_ref_read(ref)

    def visit_ref_write(self, ref):
        self.add_to_arg_region(ref, [ref.ref])
        super().visit_ref_write(ref)
