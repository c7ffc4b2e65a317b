"""``renew_defs``: a copy of a statement or PrimFunc in which every variable and buffer it defines is new (TVM's
``tir.stmt_functor.renew_defs``), so the copy can sit beside the original without two places binding one variable.

Defined are: parameters, loop and let variables, block iteration variables, and the buffers of a
function's buffer map, a block's ``alloc_buffers`` and ``match_buffers`` and a ``DeclBuffer``, with their data
variables and the symbolic variables their shapes, strides and offsets introduce. Uses follow the definitions.
``keep_allocations=True`` keeps the handles of ``Allocate`` statements (kiln's UnrollLoop copies loop bodies so:
the storage planning after it identifies an allocation by its handle).
"""

from . import expr as E
from . import stmt as S
from .expr_reduce import IterVar, Range
from .functor import StmtExprMutator
from .stmt_block import BufferRegion, MatchBufferRegion


class RenewDefs(StmtExprMutator):
    """The mutator behind :func:`renew_defs`."""

    def __init__(self, keep_allocations=False):
        self.vmap: dict = {}
        self.bmap: dict = {}
        self.keep_allocations = keep_allocations

    def fresh(self, var):
        new = type(var)(var.name_hint, var.dtype, var.type_annotation)
        self.vmap[var] = new
        return new

    def visit_var(self, op):
        return self.vmap.get(op, op)

    def visit_size_var(self, op):
        return self.vmap.get(op, op)

    # ---- buffers
    def define_buffer(self, buf):
        """A new buffer for a definition site (its data and new symbolic variables renewed too)."""
        if id(buf) in self.bmap:
            return self.bmap[id(buf)][1]
        if buf.data not in self.vmap:
            self.fresh(buf.data)
        for e in (*buf.shape, *buf.strides, buf.elem_offset):
            if isinstance(e, E.Var) and e not in self.vmap:
                self.fresh(e)
        return self.buffer(buf)

    def buffer(self, buf):
        """The buffer a use refers to: the renewed one, or ``buf`` with its variables replaced."""
        entry = self.bmap.get(id(buf))
        if entry is not None:
            return entry[1]
        new = buf.with_fields(data=self.vmap.get(buf.data, buf.data),
                              shape=tuple(self.visit_expr(x) for x in buf.shape),
                              strides=tuple(self.visit_expr(x) for x in buf.strides),
                              elem_offset=self.visit_expr(buf.elem_offset))
        self.bmap[id(buf)] = (buf, new)
        return new

    def region(self, r):
        return BufferRegion(self.buffer(r.buffer), tuple(
            Range.from_min_extent(self.visit_expr(x.min), self.visit_expr(x.extent)) for x in r.region))

    def visit_buffer_load(self, op):
        return E.BufferLoad(self.buffer(op.buffer), tuple(self.visit_expr(i) for i in op.indices))

    def visit_buffer_store(self, op):
        return S.BufferStore(self.buffer(op.buffer), self.visit_expr(op.value),
                             tuple(self.visit_expr(i) for i in op.indices))

    def visit_decl_buffer(self, op):
        return S.DeclBuffer(self.define_buffer(op.buffer), self.visit_stmt(op.body))

    # ---- binding statements
    def visit_for(self, op):
        lo, extent = self.visit_expr(op.min), self.visit_expr(op.extent)
        var = self.fresh(op.loop_var)
        return op.with_fields(loop_var=var, min=lo, extent=extent, body=self.visit_stmt(op.body))

    def visit_let_stmt(self, op):
        value = self.visit_expr(op.value)
        return op.with_fields(var=self.fresh(op.var), value=value, body=self.visit_stmt(op.body))

    def visit_let(self, op):
        value = self.visit_expr(op.value)
        return op.with_fields(var=self.fresh(op.var), value=value, body=self.visit_expr(op.body))

    def visit_allocate(self, op):
        if self.keep_allocations:
            return super().visit_allocate(op)
        extents = tuple(self.visit_expr(e) for e in op.extents)
        var = self.fresh(op.buffer_var)
        return op.with_fields(buffer_var=var, extents=extents, condition=self.visit_expr(op.condition),
                              body=self.visit_stmt(op.body))

    def visit_block(self, op):
        iter_vars = tuple(IterVar(Range.from_min_extent(self.visit_expr(iv.dom.min), self.visit_expr(iv.dom.extent)),
                                  self.fresh(iv.var), iv.iter_type, iv.thread_tag) for iv in op.iter_vars)
        allocs = tuple(self.define_buffer(b) for b in op.alloc_buffers)
        matches = tuple(MatchBufferRegion(self.define_buffer(m.buffer), self.region(m.source))
                        for m in op.match_buffers)
        init = self.visit_stmt(op.init) if op.init is not None else None
        return op.with_fields(iter_vars=iter_vars, alloc_buffers=allocs, match_buffers=matches,
                              reads=tuple(self.region(r) for r in op.reads),
                              writes=tuple(self.region(r) for r in op.writes), init=init,
                              body=self.visit_stmt(op.body))

    def function(self, func):
        params = tuple(self.fresh(p) for p in func.params)
        buffer_map = {self.vmap[p]: self.define_buffer(b) for p, b in func.buffer_map.items()}
        body = self.visit_stmt(func.body)
        return type(func)(params, body, func.ret_type, buffer_map, func.attrs)


def renew_defs(node, keep_allocations=False):
    """A copy of ``node`` (a Stmt or a PrimFunc) whose definitions are new variables and buffers."""
    from .function import PrimFunc

    renewer = RenewDefs(keep_allocations)
    if isinstance(node, PrimFunc):
        return renewer.function(node)
    return renewer(node)
