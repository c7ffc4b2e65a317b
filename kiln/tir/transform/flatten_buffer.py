"""``tir.FlattenBuffer``: turn multi-dimensional buffer accesses into one-dimensional ones (TVM's
``tir.transform.FlattenBuffer``), the form code generators index memory with.

Each access ``A[i, j]`` to a buffer of shape ``(m, n)`` becomes ``A_flat[i * n + j]`` (with the buffer's strides when
it declares them: ``i * stride0 + j * stride1``) on a 1-D buffer sharing A's data handle and element offset. The
function's ``buffer_map`` keeps the original buffers (the packed API checks the caller's shapes against them), as TVM
does. ``Allocate`` extents become the element count. Vector indices (a Ramp in the last dimension) flatten to a Ramp,
and the new indices are simplified.
"""

from dataclasses import dataclass

from ...arith import Analyzer
from ...ir.transform import PassInfo, register_pass
from .. import expr as E
from .. import op as _op
from .. import stmt as S
from ..functor import StmtExprMutator
from .function_pass import PrimFuncPass


class BufferFlattener(StmtExprMutator):
    """Rewrites accesses to flattened buffers (one flattened buffer per original, shared by all its accesses)."""

    def __init__(self):
        self.flat: dict = {}  # id(buffer) -> (buffer, flattened)
        self.analyzer = Analyzer()

    def flattened(self, buf):
        entry = self.flat.get(id(buf))
        if entry is None:
            entry = self.flat[id(buf)] = (buf, buf.get_flattened_buffer())
        return entry[1]

    def flat_index(self, buf, indices):
        if len(buf.shape) == 1 and not buf.strides:
            return indices
        if buf.axis_separators and not buf.strides:  # row-major within each physical axis
            out, start = [], 0
            for group in buf.axis_groups():
                index = None
                for i, dim in zip(indices[start:start + len(group)], group, strict=True):
                    index = i if index is None else _op.add(_op.multiply(index, dim), i)
                out.append(self.analyzer.simplify(index if index is not None else E.IntImm("int32", 0)))
                start += len(group)
            return tuple(out)
        index = None
        for i, stride in zip(indices, buf.default_strides(), strict=True):
            term = _op.multiply(i, stride)
            index = term if index is None else _op.add(index, term)
        if index is None:
            index = E.IntImm("int32", 0)
        return (self.analyzer.simplify(index),)

    def visit_buffer_load(self, op):
        indices = tuple(self.visit_expr(i) for i in op.indices)
        flat = self.flattened(op.buffer)
        if flat is op.buffer and all(a is b for a, b in zip(indices, op.indices, strict=True)):
            return op
        return E.BufferLoad(flat, self.flat_index(op.buffer, indices))

    def visit_buffer_store(self, op):
        value = self.visit_expr(op.value)
        indices = tuple(self.visit_expr(i) for i in op.indices)
        flat = self.flattened(op.buffer)
        if flat is op.buffer and value is op.value and all(a is b for a, b in zip(indices, op.indices, strict=True)):
            return op
        return S.BufferStore(flat, value, self.flat_index(op.buffer, indices))

    def visit_allocate(self, op):
        body = self.visit_stmt(op.body)
        if len(op.extents) > 1:
            size = op.extents[0]
            for e in op.extents[1:]:
                size = _op.multiply(size, e)
            return op.with_fields(extents=(self.analyzer.simplify(size),), body=body)
        return op.with_fields(body=body)

    def visit_decl_buffer(self, op):
        return op.with_fields(buffer=self.flattened(op.buffer), body=self.visit_stmt(op.body))


def flatten_buffer(func):
    """Return ``func`` with every buffer access one-dimensional."""
    return func.with_body(BufferFlattener().visit_stmt(func.body))


@register_pass("tir.FlattenBuffer")
@dataclass(frozen=True)
class FlattenBuffer(PrimFuncPass):
    """Flatten multi-dimensional buffer accesses to one dimension (TVM's ``tir.transform.FlattenBuffer``)."""

    info = PassInfo(0, "tir.FlattenBuffer")

    def transform_function(self, func, mod, ctx):
        return flatten_buffer(func)
