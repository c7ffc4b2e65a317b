"""MergeCompilerRegions: merge neighbouring regions of one external compiler into one (TVM's
``relay.transform.MergeCompilerRegions``; after ``AnnotateTarget``, before ``PartitionGraph``).

``AnnotateTarget`` makes a region of every operator. This pass visits the regions in dataflow order (each region's
end annotations after those of every region feeding it) and merges a region into each parent region of the same
target, unless that would make a cycle between regions: a region remembers the regions of other targets it depends
on (its "restrictions", inherited from its parents), and a parent in them cannot be merged, since the merged region
would both feed and consume that other region. Where a merged region's output feeds its own input, the pair
``compiler_begin(compiler_end(x))`` is removed.
"""

from dataclasses import dataclass

from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ..analysis.annotated_regions import AnnotatedRegionSet
from ..expr import Call, If
from ..expr_functor import ExprMutator, ExprVisitor
from .function_pass import FunctionPass


class _RegionMerger(ExprVisitor):
    """Visits the end annotations in dataflow order, merging each region with its mergeable parents."""

    def __init__(self, regions):
        super().__init__()
        self.regions = regions
        self.end_op = Op.get("annotation.compiler_end")
        self.merged: set = set()  # ids of regions already handled
        self.restrictions: dict = {}  # region id -> ids of regions it may not merge with

    def control_flow_regions(self, expr, found):
        """Add the regions of an ``if``'s condition and branches (looking through nested ``if``s) to ``found``."""
        if type(expr) is not If:
            return
        for part in (expr.cond, expr.true_branch, expr.false_branch):
            region = self.regions.get_region(part)
            if region is not None:
                found.setdefault(region.id, region)
            else:
                self.control_flow_regions(part, found)

    def visit_call(self, call):
        super().visit_call(call)
        if call.op is not self.end_op:
            return
        region = self.regions.get_region(call)
        if region.id in self.merged:
            return
        mergeable: dict = {}
        correlative: dict = {}
        for begin in region.ins:
            parent = self.regions.get_region(begin.args[0])
            if parent is not None:
                mergeable.setdefault(parent.id, parent)
                correlative.setdefault(parent.id, parent)
            else:
                self.control_flow_regions(begin.args[0], correlative)
        restrictions = self.restrictions.setdefault(region.id, set())
        for parent in correlative.values():
            restrictions |= self.restrictions.get(parent.id, set())
        for parent in mergeable.values():
            if parent.target != call.attrs.compiler:
                restrictions.add(parent.id)
                continue
            if parent.id in restrictions:
                continue
            self.regions.merge_regions(parent, region)
            # a region that could not merge with the parent cannot merge with the region it is part of now
            for other in self.regions:
                held = self.restrictions.setdefault(other.id, set())
                if parent.id in held:
                    held.discard(parent.id)
                    held.add(region.id)
        self.merged.add(region.id)


class _MergeAnnotations(ExprMutator):
    """Drops ``compiler_begin(compiler_end(x))`` where both annotations belong to one (merged) region."""

    def __init__(self, regions):
        super().__init__()
        self.regions = regions
        self.begin_op = Op.get("annotation.compiler_begin")
        self.end_op = Op.get("annotation.compiler_end")

    def visit_call(self, call):
        post = super().visit_call(call)
        arg = call.args[0] if call.args else None
        if call.op is self.begin_op and type(arg) is Call and arg.op is self.end_op:
            if self.regions.get_region(call) is self.regions.get_region(arg):
                return post.args[0].args[0]
        return post


def merge_compiler_regions(func):
    """``func`` with neighbouring regions of one compiler merged (see the module docstring)."""
    regions = AnnotatedRegionSet(func, Op.get("annotation.compiler_begin"), Op.get("annotation.compiler_end"))
    _RegionMerger(regions).visit(func)
    return _MergeAnnotations(regions).visit(func)


@register_pass("MergeCompilerRegions")
@dataclass(frozen=True)
class MergeCompilerRegions(FunctionPass):
    """Merge the compiler regions ``AnnotateTarget`` made, as large as they can be without cyclic dependencies."""

    info = PassInfo(0, "MergeCompilerRegions", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return merge_compiler_regions(func)
