"""Every index of a PrimFunc in one integer type (TVM's ``IndexDataTypeNormalizer``), for
``te.create_prim_func(..., index_dtype_override="int64")``.

An *index* is what addresses memory or counts iterations: buffer shapes, strides and offsets, load and store
indices, loop bounds and variables, block iterators and their bindings, buffer regions, and the function's integer
parameters. In an index, integer constants and integer variables take the target type (a variable is replaced by a
new one, everywhere it occurs) and an integer cast casts to the target type; an integer value read from memory keeps
its type and is cast where it meets an index (the mutator's operand promotion). Data values stay as they are.
"""

from ..ir.attrs import DictAttrs
from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir import op as _op
from ..tir import stmt as S
from ..tir.buffer import Buffer
from ..tir.expr_reduce import IterVar, Range
from ..tir.function import PrimFunc
from ..tir.functor import StmtExprMutator
from ..tir.stmt_block import BufferRegion, MatchBufferRegion

__all__ = ["normalize_index_dtype"]


def _is_index_type(dtype) -> bool:
    return _dt.is_integer(dtype) and not _dt.is_bool(dtype) and _dt.lanes(dtype) == 1


class _Normalizer(StmtExprMutator):
    def __init__(self, dtype):
        self.dtype = dtype
        self.enabled = False
        self.vars: dict = {}
        self.buffers: dict = {}

    def index(self, expr):
        """``expr`` rewritten as an index, in the target type."""
        old, self.enabled = self.enabled, True
        try:
            new = self.visit_expr(E.convert(expr))
        finally:
            self.enabled = old
        if _is_index_type(new.dtype) and new.dtype != self.dtype:
            new = _op.cast(new, self.dtype)
        return new

    def visit_int_imm(self, op):
        if self.enabled and _is_index_type(op.dtype) and op.dtype != self.dtype:
            return E.IntImm(self.dtype, op.value)
        return op

    def visit_var(self, op):
        new = self.vars.get(op)
        if new is not None:
            return new
        if self.enabled and _is_index_type(op.dtype) and op.dtype != self.dtype:
            new = type(op)(op.name_hint, self.dtype)
            self.vars[op] = new
            return new
        return op

    def visit_size_var(self, op):
        return self.visit_var(op)

    def visit_cast(self, op):
        if not (self.enabled and _is_index_type(op.dtype)):
            return StmtExprMutator.visit_cast(self, op)
        old, self.enabled = self.enabled, False  # the cast value is data (a rounded float), its variables mapped
        try:
            value = self.visit_expr(op.value)
        finally:
            self.enabled = old
        return value if value.dtype == self.dtype else E.Cast(self.dtype, value)

    def buffer(self, buf):
        new = self.buffers.get(buf)
        if new is None:
            offset = buf.elem_offset if buf.elem_offset is None else self.index(buf.elem_offset)
            new = buf.with_fields(shape=tuple(self.index(s) for s in buf.shape),
                                  strides=tuple(self.index(s) for s in buf.strides), elem_offset=offset)
            self.buffers[buf] = new
        return new

    def region(self, r):
        return BufferRegion(self.buffer(r.buffer), [Range.from_min_extent(self.index(x.min), self.index(x.extent))
                                                    for x in r.region])

    def visit_buffer_load(self, op):
        return E.BufferLoad(self.buffer(op.buffer), tuple(self.index(i) for i in op.indices))

    def visit_buffer_store(self, op):
        indices = tuple(self.index(i) for i in op.indices)
        return S.BufferStore(self.buffer(op.buffer), self.visit_expr(op.value), indices)

    def visit_for(self, op):
        var = self.index(op.loop_var)
        return op.with_fields(loop_var=var, min=self.index(op.min), extent=self.index(op.extent),
                              body=self.visit_stmt(op.body))

    def visit_block_realize(self, op):
        values = tuple(self.index(v) for v in op.iter_values)
        return op.with_fields(iter_values=values, predicate=self.visit_expr(op.predicate),
                              block=self.visit_stmt(op.block))

    def visit_block(self, op):
        iter_vars = tuple(IterVar(Range.from_min_extent(self.index(iv.dom.min), self.index(iv.dom.extent)),
                                  self.index(iv.var), iv.iter_type, iv.thread_tag) for iv in op.iter_vars)
        alloc = tuple(self.buffer(b) for b in op.alloc_buffers)
        match = tuple(MatchBufferRegion(self.buffer(m.buffer), self.region(m.source)) for m in op.match_buffers)
        init = self.visit_stmt(op.init) if op.init is not None else None
        annotations = {k: self.annotation(v) for k, v in op.annotations.items()}
        return op.with_fields(iter_vars=iter_vars, reads=tuple(self.region(r) for r in op.reads),
                              writes=tuple(self.region(r) for r in op.writes), alloc_buffers=alloc,
                              match_buffers=match, init=init, body=self.visit_stmt(op.body),
                              annotations=DictAttrs.make(annotations))

    def annotation(self, value):
        """A block annotation naming buffers (``layout_free_placeholders``) names the rewritten ones."""
        if isinstance(value, Buffer):
            return self.buffer(value)
        if isinstance(value, list | tuple):
            return [self.annotation(v) for v in value]
        return value


def normalize_index_dtype(func, dtype) -> PrimFunc:
    """``func`` with every index in ``dtype`` (see the module docstring).

    Parameters
    ----------
    func : tir.PrimFunc
    dtype : str
        An integer type, usually ``"int64"``.
    """
    dtype = _dt.normalize(str(dtype))
    mutator = _Normalizer(dtype)
    buffer_map = {p: mutator.buffer(b) for p, b in func.buffer_map.items()}
    params = [p if p in func.buffer_map else mutator.index(p) for p in func.params]
    body = mutator.visit_stmt(func.body)
    return PrimFunc(params, body, func.ret_type, buffer_map, func.attrs)
