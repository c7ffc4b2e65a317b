"""``tir.LowerAllocation``: decide where each ``Allocate`` lives, so the code generators only print.

An allocation of a size known when compiling and at most ``stack_limit`` bytes stays on the stack (an aligned
array in the function's frame); a larger one, or one whose size is known only at run time, goes to the heap
(``kiln_alloc``/``kiln_free``, its failure reported as "out of memory"): the pass marks it with the annotation
``kiln.on_heap``. The limit keeps frames small: parallel tasks run on the thread pool's workers, whose stacks are
the system's default.
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from .. import dtype as _dt
from .. import expr as E
from ..functor import StmtExprMutator
from .function_pass import PrimFuncPass

__all__ = ["LowerAllocation", "lower_allocation", "STACK_LIMIT"]

STACK_LIMIT = 64 * 1024
"""Bytes an allocation may take on the stack."""


class _Placer(StmtExprMutator):
    def __init__(self, stack_limit):
        super().__init__()
        self.stack_limit = stack_limit

    def visit_allocate(self, op):
        op = super().visit_allocate(op)
        nbytes = max(1, _dt.DataType.parse(op.dtype).bits * _dt.lanes(op.dtype) // 8)
        for extent in op.extents:
            nbytes = nbytes * extent.value if isinstance(extent, E.IntImm) else None
            if nbytes is None:
                break
        if nbytes is not None and nbytes <= self.stack_limit:
            return op
        return op.with_fields(annotations=op.annotations.with_attr("kiln.on_heap", True))


def lower_allocation(func, stack_limit=STACK_LIMIT):
    """``func`` with its large and run-time-sized allocations marked for the heap (see the module docstring)."""
    body = _Placer(stack_limit).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


@register_pass("tir.LowerAllocation")
@dataclass(frozen=True)
class LowerAllocation(PrimFuncPass):
    """Place every allocation on the stack or the heap (see the module docstring).

    Parameters
    ----------
    stack_limit : int
        The most bytes an allocation may take on the stack.
    """

    stack_limit: int = STACK_LIMIT
    info = PassInfo(0, "tir.LowerAllocation")

    def transform_function(self, func, mod, ctx):
        return lower_allocation(func, self.stack_limit)
