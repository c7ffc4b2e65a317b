"""``tir.LowerOpaqueBlock``: turn TensorIR blocks into the plain statements the rest of the pipeline knows (TVM does
this in three passes, ``LowerInitBlock``, ``ConvertBlocksToOpaque`` and ``LowerOpaqueBlock``; kiln in one).

For each ``BlockRealize``, from the inside out:

* the block's ``init`` runs first, guarded by "every reduction variable is at the start of its domain" (TVM's
  ``LowerInitBlock``);
* the block's iteration variables are replaced by the values the realize binds them to (``ConvertBlocksToOpaque``);
* a buffer the block views with ``T.match_buffer(A[i:i+4, j])`` is accessed through the source buffer, indices
  offset by the region's start;
* the block's ``predicate`` guards the body, and its allocated buffers become ``Allocate`` statements around it.
"""

from dataclasses import dataclass

from ...error import TIRError
from ...ir.transform import PassInfo, register_pass
from .. import expr as E
from .. import op as _op
from .. import stmt as S
from ..expr_reduce import IterVarType
from ..functor import StmtExprMutator
from ..stmt_block import Block, BlockRealize
from ..stmt_functor import substitute
from .function_pass import PrimFuncPass


class BlockLowerer(StmtExprMutator):
    """Replaces every BlockRealize by its lowered body (see the module docstring)."""

    def __init__(self):
        self.views: dict = {}  # id(matched buffer) -> (source buffer, region start per source dimension)

    def visit_block_realize(self, op):
        block = op.block
        vmap = {iv.var: v for iv, v in zip(block.iter_vars, op.iter_values, strict=True)}
        body = block.body
        if block.init is not None:
            at_start = [_op.equal(iv.var, iv.dom.min) for iv in block.iter_vars
                        if iv.iter_type == IterVarType.CommReduce]
            init = block.init if not at_start else S.IfThenElse(_op.all(*at_start), block.init)
            body = S.stmt_seq(init, body)
        for m in block.match_buffers:
            starts = tuple(substitute(r.min, vmap) for r in m.source.region)
            self.views[id(m.buffer)] = (m.buffer, m.source.buffer, starts)
        body = self.visit_stmt(substitute(body, vmap) if vmap else body)
        predicate = substitute(op.predicate, vmap) if vmap else op.predicate
        if not (isinstance(predicate, E.IntImm) and predicate.value == 1):
            body = S.IfThenElse(predicate, body)
        for buf in reversed(block.alloc_buffers):
            body = S.Allocate(buf.data, buf.dtype, buf.shape, E.convert(True), body)
        return body

    def visit_block(self, op):
        raise TIRError(f"tir.LowerOpaqueBlock: block {op.name_hint} is not under a BlockRealize")

    def _view(self, buffer, indices):
        entry = self.views.get(id(buffer))
        if entry is None:
            return buffer, indices
        _, source, starts = entry
        # the view keeps the trailing dimensions of its source region (TVM's match_buffer drops leading unit ones)
        lead = len(starts) - len(indices)
        if lead < 0:
            raise TIRError(f"tir.LowerOpaqueBlock: view {buffer.name} has more dimensions than its source")
        full = (*starts[:lead], *(_op.add(s, i) for s, i in zip(starts[lead:], indices, strict=True)))
        return source, full

    def visit_buffer_load(self, op):
        op = super().visit_buffer_load(op)
        buffer, indices = self._view(op.buffer, op.indices)
        return op if buffer is op.buffer else E.BufferLoad(buffer, indices)

    def visit_buffer_store(self, op):
        op = super().visit_buffer_store(op)
        buffer, indices = self._view(op.buffer, op.indices)
        return op if buffer is op.buffer else S.BufferStore(buffer, op.value, indices)


def lower_opaque_block(func):
    """``func`` with every block lowered to loops, ifs and allocations."""
    if not has_block(func.body):
        return func
    return func.with_body(BlockLowerer().visit_stmt(func.body))


def has_block(stmt) -> bool:
    """Whether ``stmt`` holds a TensorIR block anywhere."""
    from ..stmt_functor import children

    stack = [stmt]
    while stack:
        s = stack.pop()
        if isinstance(s, BlockRealize | Block):
            return True
        stack.extend(c for c in children(s) if isinstance(c, S.Stmt))
    return False


@register_pass("tir.LowerOpaqueBlock")
@dataclass(frozen=True)
class LowerOpaqueBlock(PrimFuncPass):
    """Lower TensorIR blocks (TVM's ``tir.transform.LowerOpaqueBlock``, with ``LowerInitBlock`` and
    ``ConvertBlocksToOpaque`` folded in)."""

    info = PassInfo(0, "tir.LowerOpaqueBlock")

    def transform_function(self, func, mod, ctx):
        return lower_opaque_block(func)
