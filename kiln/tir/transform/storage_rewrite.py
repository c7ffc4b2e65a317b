"""``tir.StorageRewrite``: let allocations whose lifetimes do not overlap share memory (the memory-reuse part of
TVM's ``tir.transform.StorageRewrite``).

It works on each statement sequence: the members of a ``SeqStmt`` (or the body of a chain of ``Allocate``s) run one
after another, so an allocation's lifetime is the span of members from the first to the last one that touches it.
Allocations wrapping the sequence and allocations wrapping a single member are candidates when their extents are
constant and unconditional. Candidates of one dtype and storage scope are packed greedily, in order of first use,
into pools: an allocation joins a pool whose members are all dead before it starts (first fit), and the pool's size
is its largest member's. A pool of several members becomes one ``Allocate`` around the sequence; its members' buffers
are rebuilt over the pool's handle. Unused candidates disappear. Allocations that touch each other's lifetime, or
live in different scopes or dtypes, never share. Nested sequences (loop bodies) are rewritten first, independently.
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from .. import expr as E
from .. import stmt as S
from ..functor import StmtExprMutator
from ..stmt_functor import post_order_visit
from .function_pass import PrimFuncPass


def _touched(stmt) -> set:
    """Ids of the handle variables ``stmt`` uses (through buffers or directly)."""
    ids = set()

    def visit(node):
        if isinstance(node, E.BufferLoad | S.BufferStore | S.DeclBuffer):
            ids.add(id(node.buffer.data))
        elif isinstance(node, E.Var):
            ids.add(id(node))

    post_order_visit(stmt, visit)
    return ids


def _candidate(alloc) -> bool:
    return (all(isinstance(e, E.IntImm) for e in alloc.extents) and isinstance(alloc.condition, E.IntImm)
            and alloc.condition.value == 1 and not len(alloc.annotations))


def _size(alloc) -> int:
    n = 1
    for e in alloc.extents:
        n *= e.value
    return n


def _peel(stmt):
    """Split a chain of candidate Allocates off ``stmt``: ``([allocs], inner)``."""
    allocs = []
    while isinstance(stmt, S.Allocate) and _candidate(stmt):
        allocs.append(stmt)
        stmt = stmt.body
    return allocs, stmt


class _Rebase(StmtExprMutator):
    """Moves buffers from member handles onto their pool's handle."""

    def __init__(self, handle_map):
        self.handle_map = handle_map  # id(old var) -> new var
        self.buffers: dict = {}

    def buffer(self, buf):
        new_data = self.handle_map.get(id(buf.data))
        if new_data is None:
            return buf
        entry = self.buffers.get(id(buf))
        if entry is None:
            entry = self.buffers[id(buf)] = (buf, buf.with_fields(data=new_data))
        return entry[1]

    def visit_var(self, op):
        return self.handle_map.get(id(op), op)

    def visit_buffer_load(self, op):
        indices = tuple(self.visit_expr(i) for i in op.indices)
        return E.BufferLoad(self.buffer(op.buffer), indices)

    def visit_buffer_store(self, op):
        indices = tuple(self.visit_expr(i) for i in op.indices)
        return S.BufferStore(self.buffer(op.buffer), self.visit_expr(op.value), indices)

    def visit_decl_buffer(self, op):
        return S.DeclBuffer(self.buffer(op.buffer), self.visit_stmt(op.body))


def plan_sequence(outer, items):
    """Pack the candidate allocations of a sequence into pools; return the rewritten sequence statement, or None
    when nothing would be shared (the caller then keeps its statement)."""
    allocs = [(a, None) for a in outer]  # (Allocate, index of the only member it wraps, or None)
    bodies = []
    for index, item in enumerate(items):
        inner_allocs, inner = _peel(item)
        allocs.extend((a, index) for a in inner_allocs)
        bodies.append(inner)
    touches = [_touched(b) for b in bodies]
    spans = []
    for alloc, _owner in allocs:
        used = [i for i, t in enumerate(touches) if id(alloc.buffer_var) in t]
        spans.append((used[0], used[-1]) if used else None)
    pools: list = []  # [dtype, scope, end, size, [members]]
    order = sorted((i for i, s in enumerate(spans) if s is not None), key=lambda i: spans[i])
    for i in order:
        alloc = allocs[i][0]
        start, end = spans[i]
        for pool in pools:
            if pool[0] == alloc.dtype and pool[1] == alloc.scope and pool[2] < start:
                pool[2], pool[3] = end, max(pool[3], _size(alloc))
                pool[4].append(alloc)
                break
        else:
            pools.append([alloc.dtype, alloc.scope, end, _size(alloc), [alloc]])
    dropped = any(s is None for s in spans)
    if all(len(p[4]) == 1 for p in pools) and not dropped:
        return None
    handle_map = {}
    new_allocs = []
    for dtype, _scope, _, size, members in pools:
        if len(members) == 1:
            new_allocs.append(members[0])
            continue
        var = E.Var(members[0].buffer_var.name_hint, members[0].buffer_var.type_annotation)
        for m in members:
            handle_map[id(m.buffer_var)] = var
        new_allocs.append(S.Allocate(var, dtype, [E.IntImm("int32", size)], True, S.Evaluate(0)))
    rebase = _Rebase(handle_map)
    body = S.stmt_seq(*(rebase.visit_stmt(b) for b in bodies)) if handle_map else S.stmt_seq(*bodies)
    for alloc in reversed(new_allocs):
        body = alloc.with_fields(body=body)
    return body


class StorageRewriter(StmtExprMutator):
    """Applies :func:`plan_sequence` to every sequence, innermost first."""

    def visit_expr(self, expr):
        return expr

    def visit_allocate(self, op):
        outer, inner = _peel(op)
        if not outer:
            return super().visit_allocate(op)
        originals = S.stmt_list(inner)
        items = [self.visit_stmt(s) for s in originals]
        planned = plan_sequence(outer, items)
        if planned is not None:
            return planned
        if all(a is b for a, b in zip(items, originals, strict=True)):
            return op
        body = S.stmt_seq(*items)
        for alloc in reversed(outer):
            body = alloc.with_fields(body=body)
        return body

    def visit_seq_stmt(self, op):
        items = [self.visit_stmt(s) for s in op.seq]
        planned = plan_sequence([], items)
        if planned is not None:
            return planned
        if all(a is b for a, b in zip(items, op.seq, strict=True)):
            return op
        return S.stmt_seq(*items)


def storage_rewrite(func):
    """Return ``func`` with non-overlapping allocations sharing memory."""
    return func.with_body(StorageRewriter().visit_stmt(func.body))


@register_pass("tir.StorageRewrite")
@dataclass(frozen=True)
class StorageRewrite(PrimFuncPass):
    """Reuse the memory of allocations whose lifetimes do not overlap (TVM's ``tir.transform.StorageRewrite``)."""

    info = PassInfo(0, "tir.StorageRewrite")

    def transform_function(self, func, mod, ctx):
        return storage_rewrite(func)
