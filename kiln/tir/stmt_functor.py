"""Helpers over TIR trees (TVM's ``tvm.tir.stmt_functor``): ``post_order_visit``, ``pre_order_visit``,
``ir_transform`` and ``substitute``.

``post_order_visit``/``pre_order_visit`` walk with an explicit stack and visit each node once (children of a node in
field order); ``ir_transform`` and ``substitute`` are :class:`StmtExprMutator` subclasses.
"""

from . import expr as E
from . import stmt as S
from . import stmt_block as SB
from . import stmt_realize as SR
from .functor import StmtExprMutator


def children(node) -> tuple:
    """The statement and expression children of a TIR node, in the order visitors visit them."""
    kind = type(node)
    if isinstance(node, E.BinaryOpExpr | E.CmpExpr | E.And | E.Or):
        return (node.a, node.b)
    getters = _CHILDREN.get(kind)
    if getters is None:
        return ()
    out = []
    for g in getters:
        value = g(node)
        if value is None:
            continue
        if isinstance(value, tuple):
            out.extend(v for v in value if isinstance(v, E.PrimExpr | S.Stmt))
        elif isinstance(value, E.PrimExpr | S.Stmt):
            out.append(value)
    return tuple(out)


_CHILDREN = {
    E.Not: (lambda n: n.a,),
    E.Cast: (lambda n: n.value,),
    E.Broadcast: (lambda n: n.value,),
    E.Select: (lambda n: n.condition, lambda n: n.true_value, lambda n: n.false_value),
    E.Ramp: (lambda n: n.base, lambda n: n.stride),
    E.Let: (lambda n: n.value, lambda n: n.body),
    E.Call: (lambda n: n.args,),
    E.BufferLoad: (lambda n: n.indices,),
    E.ProducerLoad: (lambda n: n.indices,),
    E.Reduce: (lambda n: n.source, lambda n: n.init, lambda n: n.condition),
    S.For: (lambda n: n.min, lambda n: n.extent, lambda n: n.body),
    S.While: (lambda n: n.condition, lambda n: n.body),
    S.BufferStore: (lambda n: n.value, lambda n: n.indices),
    S.Allocate: (lambda n: n.extents, lambda n: n.condition, lambda n: n.body),
    S.DeclBuffer: (lambda n: n.body,),
    S.SeqStmt: (lambda n: n.seq,),
    S.IfThenElse: (lambda n: n.condition, lambda n: n.then_case, lambda n: n.else_case),
    S.LetStmt: (lambda n: n.value, lambda n: n.body),
    S.Evaluate: (lambda n: n.value,),
    S.AttrStmt: (lambda n: n.node if isinstance(n.node, E.PrimExpr) else None, lambda n: n.value, lambda n: n.body),
    S.AssertStmt: (lambda n: n.condition, lambda n: n.message, lambda n: n.body),
    SB.BlockRealize: (lambda n: n.iter_values, lambda n: n.predicate, lambda n: n.block),
    SB.Block: (lambda n: n.init, lambda n: n.body),
    SR.BufferRealize: (lambda n: _range_bounds(n.bounds), lambda n: n.condition, lambda n: n.body),
    SR.Prefetch: (lambda n: _range_bounds(n.bounds),),
}


def _range_bounds(ranges):
    return tuple(x for r in ranges for x in (r.min, r.extent))


def post_order_visit(stmt, fvisit):
    """Call ``fvisit(node)`` on every statement and expression under ``stmt`` once, children first.

    Examples
    --------
    >>> loads = []
    >>> collect = lambda n: loads.append(n) if isinstance(n, tir.BufferLoad) else None
    >>> post_order_visit(func.body, collect)  # doctest: +SKIP
    """
    seen = set()
    stack = [(stmt, False)]
    while stack:
        node, ready = stack.pop()
        if ready:
            fvisit(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(children(node)) if id(c) not in seen)


def pre_order_visit(stmt, fvisit):
    """Call ``fvisit(node)`` on every node, parents first; a node for which it returns ``False`` is not descended."""
    seen = set()
    stack = [stmt]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if fvisit(node) is False:
            continue
        stack.extend(reversed(children(node)))


class _IRTransform(StmtExprMutator):
    def __init__(self, preorder, postorder, only_enable):
        self.preorder, self.postorder = preorder, postorder
        self.only_enable = tuple(only_enable) if only_enable else None

    def _enabled(self, node):
        if self.only_enable is None:
            return True
        names = {type(node).__name__, type(node).type_key, "tir." + type(node).__name__}
        return any(k in names or (isinstance(k, type) and isinstance(node, k)) for k in self.only_enable)

    def visit_expr(self, expr):
        return self._apply(expr, super().visit_expr)

    def visit_stmt(self, stmt):
        return self._apply(stmt, super().visit_stmt)

    def _apply(self, node, default):
        if self.preorder is not None and self._enabled(node):
            result = self.preorder(node)
            if result is not None:
                return result
        node = default(node)
        if self.postorder is not None and self._enabled(node):
            result = self.postorder(node)
            if result is not None:
                return result
        return node


def ir_transform(stmt, preorder, postorder, only_enable=None):
    """Rewrite ``stmt``: ``preorder(node)`` may replace a node before its children are visited (returning non-None
    stops the descent), ``postorder(node)`` after; ``only_enable`` limits both to some node kinds (class or name).
    """
    return _IRTransform(preorder, postorder, only_enable)(stmt)


class _Substitute(StmtExprMutator):
    def __init__(self, vmap):
        self.vmap = vmap
        self.buffers: dict = {}

    def buffer(self, buf):
        """``buf`` with the variables of its data, shape, strides and offset replaced (one copy per buffer)."""
        entry = self.buffers.get(id(buf))
        if entry is None:
            data = self.visit_expr(buf.data)
            new = buf.with_fields(data=data if isinstance(data, E.Var) else buf.data,
                                  shape=tuple(self.visit_expr(x) for x in buf.shape),
                                  strides=tuple(self.visit_expr(x) for x in buf.strides),
                                  elem_offset=self.visit_expr(buf.elem_offset))
            entry = self.buffers[id(buf)] = (buf, new)
        return entry[1]

    def visit_buffer_load(self, op):
        op = super().visit_buffer_load(op)
        buf = self.buffer(op.buffer)
        return op if buf is op.buffer else E.BufferLoad(buf, op.indices)

    def visit_buffer_store(self, op):
        op = super().visit_buffer_store(op)
        buf = self.buffer(op.buffer)
        return op if buf is op.buffer else S.BufferStore(buf, op.value, op.indices)

    def visit_decl_buffer(self, op):
        return op.with_fields(buffer=self.buffer(op.buffer), body=self.visit_stmt(op.body))

    def visit_var(self, op):
        if callable(self.vmap):
            result = self.vmap(op)
            return op if result is None else E.convert(result)
        result = self.vmap.get(op)
        return op if result is None else E.convert(result)


def substitute(node, vmap):
    """Replace variables in ``node`` (a statement or expression): ``vmap`` maps Var -> value, or is a function
    returning the replacement or None.

    Examples
    --------
    >>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    >>> str(substitute(x + 1, {x: y * 2}))
    'y * 2 + 1'
    """
    if not callable(vmap) and not vmap:
        return node
    if not callable(vmap):
        vmap = {k.var if isinstance(k, E.IterVar) else k: v for k, v in vmap.items()}
    return _Substitute(vmap)(node)


class _RebindBuffers(StmtExprMutator):
    def __init__(self, var_map, buffer_map):
        self.var_map, self.buffer_map = var_map, buffer_map

    def visit_var(self, op):
        return self.var_map.get(op, op)

    def visit_buffer_load(self, op):
        new = super().visit_buffer_load(op)
        buf = self.buffer_map.get(new.buffer)
        return new if buf is None else E.BufferLoad(buf, new.indices)

    def visit_buffer_store(self, op):
        new = super().visit_buffer_store(op)
        buf = self.buffer_map.get(new.buffer)
        return new if buf is None else S.BufferStore(buf, new.value, new.indices)


def rebind_buffers(stmt, var_map, buffer_map):
    """``stmt`` with the variables of ``var_map`` replaced and every access of a buffer of ``buffer_map`` made to the
    buffer it maps to: a statement written over placeholder buffers (an extern's, a tensor intrinsic's) placed over
    real ones. Unlike :func:`substitute`, buffers are swapped whole, not rebuilt from their variables."""
    if not var_map and not buffer_map:
        return stmt
    return _RebindBuffers(var_map, buffer_map).visit_stmt(stmt)


def renew_defs(stmt, keep_allocations=False):
    """A copy of ``stmt`` (a statement or PrimFunc) whose definitions are new variables and buffers (TVM's
    ``renew_defs``; see :mod:`kiln.tir.renew_defs`)."""
    from .renew_defs import renew_defs as _renew

    return _renew(stmt, keep_allocations)
