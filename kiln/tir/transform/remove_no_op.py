"""``tir.RemoveNoOp``: delete statements that do nothing (TVM's ``tir.transform.RemoveNoOp``).

No-ops are ``Evaluate`` of a constant or variable, loops with a zero extent or an empty body, an ``IfThenElse`` whose
branches are empty, a store of a location into itself (``A[i] = A[i]``), and ``LetStmt``/``Allocate``/``AttrStmt``
around an empty body. A ``SeqStmt`` drops its empty members. The empty statement is ``Evaluate(0)``. Checked
conditions (``AssertStmt``) are kept even when their body is empty: failing them is an effect.
"""

from dataclasses import dataclass

from ...arith.linear import expr_key
from ...ir.transform import PassInfo, register_pass
from .. import expr as E
from .. import stmt as S
from ..functor import StmtExprMutator
from .function_pass import PrimFuncPass


def make_nop():
    """The empty statement, ``Evaluate(0)``."""
    return S.Evaluate(E.IntImm("int32", 0))


def is_no_op(stmt) -> bool:
    """Whether ``stmt`` does nothing."""
    if isinstance(stmt, S.Evaluate):
        return isinstance(stmt.value, E.IntImm | E.FloatImm | E.Var | E.StringImm)
    if isinstance(stmt, S.SeqStmt):
        return all(is_no_op(s) for s in stmt.seq)
    return False


class NoOpRemover(StmtExprMutator):
    """Removes no-op statements bottom-up (expressions are left alone)."""

    def visit_expr(self, expr):
        return expr

    def visit_seq_stmt(self, op):
        seq = [self.visit_stmt(s) for s in op.seq]
        kept = [s for s in seq if not is_no_op(s)]
        if not kept:
            return make_nop()
        if len(kept) == len(op.seq) and all(a is b for a, b in zip(kept, op.seq, strict=True)):
            return op
        return S.stmt_seq(*kept)

    def visit_for(self, op):
        body = self.visit_stmt(op.body)
        if is_no_op(body) or isinstance(op.extent, E.IntImm) and op.extent.value <= 0:
            return make_nop()
        return op.with_fields(body=body)

    def visit_if_then_else(self, op):
        then_case = self.visit_stmt(op.then_case)
        else_case = self.visit_stmt(op.else_case) if op.else_case is not None else None
        if else_case is not None and is_no_op(else_case):
            else_case = None
        if isinstance(op.condition, E.IntImm):
            chosen = then_case if op.condition.value else else_case
            return chosen if chosen is not None else make_nop()
        if is_no_op(then_case) and else_case is None:
            return make_nop()
        if is_no_op(then_case):
            return S.IfThenElse(E.Not(op.condition), else_case, None)
        return op.with_fields(then_case=then_case, else_case=else_case)

    def visit_let_stmt(self, op):
        body = self.visit_stmt(op.body)
        return make_nop() if is_no_op(body) else op.with_fields(body=body)

    def visit_allocate(self, op):
        body = self.visit_stmt(op.body)
        return make_nop() if is_no_op(body) else op.with_fields(body=body)

    def visit_decl_buffer(self, op):
        body = self.visit_stmt(op.body)
        return make_nop() if is_no_op(body) else op.with_fields(body=body)

    def visit_attr_stmt(self, op):
        body = self.visit_stmt(op.body)
        return make_nop() if is_no_op(body) else op.with_fields(body=body)

    def visit_buffer_store(self, op):
        value = op.value
        if (isinstance(value, E.BufferLoad) and value.buffer is op.buffer
                and expr_key(E.BufferLoad(op.buffer, op.indices)) == expr_key(value)):
            return make_nop()
        return op

    def visit_evaluate(self, op):
        return make_nop() if is_no_op(op) else op


def remove_no_op(func):
    """Return ``func`` without no-op statements."""
    return func.with_body(NoOpRemover().visit_stmt(func.body))


@register_pass("tir.RemoveNoOp")
@dataclass(frozen=True)
class RemoveNoOp(PrimFuncPass):
    """Remove statements without effect (TVM's ``tir.transform.RemoveNoOp``)."""

    info = PassInfo(0, "tir.RemoveNoOp")

    def transform_function(self, func, mod, ctx):
        return remove_no_op(func)
