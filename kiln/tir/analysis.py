"""Analyses of TIR (TVM's ``tvm.tir.analysis``): free variables, well-formedness, deep equality of expressions.

``undefined_vars`` walks in program order with a set of defined variables (parameters, loop variables, let
variables, allocated handles, reduction axes), collecting each variable used before or without a definition, in
order of first use. Buffers count as uses of their data handle and of the variables in their shape, strides and
offset. ``verify_well_formed`` also rejects a variable defined twice, which passes that copy code must avoid.
"""

from ..error import TIRError
from ..ir.structural import structural_equal
from . import expr as E
from . import stmt as S
from .functor import StmtExprVisitor


class _UseDef(StmtExprVisitor):
    def __init__(self, defs=()):
        self.defined = {id(v) for v in defs}
        self.keep = list(defs)
        self.undefined: list = []
        self.seen_undefined: set[int] = set()
        self.redefined: list = []
        self.seen_buffers: set[int] = set()

    def define(self, var):
        if id(var) in self.defined:
            self.redefined.append(var)
        self.defined.add(id(var))
        self.keep.append(var)

    def visit_var(self, op):
        if id(op) not in self.defined and id(op) not in self.seen_undefined:
            self.seen_undefined.add(id(op))
            self.undefined.append(op)

    def use_buffer(self, buf):
        if id(buf) in self.seen_buffers:
            return
        self.seen_buffers.add(id(buf))
        self.keep.append(buf)
        self.visit_var(buf.data)
        for e in (*buf.shape, *buf.strides, buf.elem_offset):
            self.visit_expr(e)

    def visit_buffer_load(self, op):
        self.use_buffer(op.buffer)
        super().visit_buffer_load(op)

    def visit_buffer_store(self, op):
        self.use_buffer(op.buffer)
        super().visit_buffer_store(op)

    def visit_decl_buffer(self, op):
        self.use_buffer(op.buffer)
        super().visit_decl_buffer(op)

    def visit_let(self, op):
        self.visit_expr(op.value)
        self.define(op.var)
        self.visit_expr(op.body)

    def visit_let_stmt(self, op):
        while isinstance(op, S.LetStmt):  # chains of lets without recursion
            self.visit_expr(op.value)
            self.define(op.var)
            op = op.body
        self.visit_stmt(op)

    def visit_for(self, op):
        self.visit_expr(op.min)
        self.visit_expr(op.extent)
        self.define(op.loop_var)
        self.visit_stmt(op.body)

    def visit_allocate(self, op):
        for e in op.extents:
            self.visit_expr(e)
        self.define(op.buffer_var)
        self.visit_expr(op.condition)
        self.visit_stmt(op.body)

    def visit_reduce(self, op):
        for iv in op.axis:
            self.visit_expr(iv.dom.min)
            self.visit_expr(iv.dom.extent)
            self.define(iv.var)
        for s in (*op.source, *op.init, op.condition):
            self.visit_expr(s)

    def visit_block(self, op):
        for iv in op.iter_vars:
            self.visit_expr(iv.dom.min)
            self.visit_expr(iv.dom.extent)
            self.define(iv.var)
        for b in op.alloc_buffers:
            self.define(b.data)
        for m in op.match_buffers:
            self.define(m.buffer.data)
        super().visit_block(op)

    def visit_attr_stmt(self, op):
        if isinstance(op.node, E.IterVar):
            self.define(op.node.var)
        super().visit_attr_stmt(op)


def undefined_vars(node, defs=()) -> list:
    """The variables ``node`` (a statement or expression) uses without defining them, in order of first use.

    Parameters
    ----------
    node : Stmt or PrimExpr
        What to scan.
    defs : list of Var
        Variables defined outside (function parameters).
    """
    visitor = _UseDef(defs)
    visitor(node)
    return visitor.undefined


def verify_well_formed(func, assert_mode=True) -> bool:
    """Check a PrimFunc: every variable it uses is defined (a parameter, a buffer of ``buffer_map``, a loop, let or
    allocation), and no variable is defined twice.

    Raises TIRError naming the variable when ``assert_mode`` (the default), else returns False.
    """
    visitor = _UseDef(func.params)
    for buf in func.buffer_map.values():
        visitor.define(buf.data)
        for e in (*buf.shape, *buf.strides, buf.elem_offset):
            if isinstance(e, E.Var) and id(e) not in visitor.defined:
                visitor.define(e)
        visitor.seen_buffers.add(id(buf))
    visitor(func.body)
    problem = None
    if visitor.undefined:
        problem = f"variable {visitor.undefined[0].name_hint} is used but never defined"
    elif visitor.redefined:
        problem = f"variable {visitor.redefined[0].name_hint} is defined more than once"
    if problem is None:
        return True
    if assert_mode:
        raise TIRError(f"ill-formed PrimFunc {func.attrs.get('global_symbol', 'main')}: {problem}")
    return False


def expr_deep_equal(lhs, rhs) -> bool:
    """Whether two expressions are equal node by node, variables compared by identity (TVM's ExprDeepEqual)."""
    return structural_equal(lhs, rhs, map_free_vars=False)


def stmt_contains(stmt, predicate) -> bool:
    """Whether any node under ``stmt`` satisfies ``predicate``."""
    from .stmt_functor import pre_order_visit

    found = []

    def visit(node):
        if found:
            return False
        if predicate(node):
            found.append(node)
            return False
        return True

    pre_order_visit(stmt, visit)
    return bool(found)
