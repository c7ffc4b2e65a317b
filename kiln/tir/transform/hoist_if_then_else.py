"""``tir.HoistIfThenElse``: move a branch whose condition a loop does not change out of that loop (TVM's
``tir.transform.HoistIfThenElse``).

Loop versioning (:mod:`kiln.tir.transform.vectorize_loop`) leaves ``if whole_vectors: vector code else: tail``
around each innermost statement of a tile; once the tile's register loop is unrolled, its reduction loop holds one
such branch per accumulator, all testing the same outer index. Two rewrites, applied bottom-up, turn that into one
branch per tile, so the vector path is straight-line code whose accumulators stay in registers:

* a loop whose body is branches on one condition that does not use the loop variable becomes one branch whose arms
  are the loop over each arm's statements (``for: if c: A else: B`` -> ``if c: for: A else: for: B``);
* consecutive branches on one condition in a sequence merge into one.

Only conditions of loop variables and constants move (no buffer reads, no calls but ``likely``), so moving them
past statements cannot change their value.
"""

from dataclasses import dataclass

from ...ir.structural import structural_equal
from ...ir.transform import PassInfo, register_pass
from .. import expr as E
from .. import stmt as S
from ..analysis import undefined_vars
from ..functor import StmtExprMutator
from ..stmt_functor import post_order_visit
from .function_pass import PrimFuncPass
from .remove_no_op import make_nop


def _pure(cond) -> bool:
    """Whether ``cond`` reads only variables and constants (its value cannot change between statements)."""
    impure = []

    def check(node):
        if isinstance(node, E.BufferLoad) or isinstance(node, E.Call) and node.op.name != "tir.likely":
            impure.append(node)

    post_order_visit(cond, check)
    return not impure


def _branches(stmt):
    """``stmt`` as a list of IfThenElse statements (a single one, or a sequence of them), else None."""
    seq = stmt.seq if isinstance(stmt, S.SeqStmt) else [stmt]
    return seq if all(isinstance(s, S.IfThenElse) for s in seq) else None


def _same_condition(branches):
    first = branches[0].condition
    if not _pure(first) or not all(structural_equal(b.condition, first) for b in branches[1:]):
        return None
    return first


def _arm(branches, then):
    stmts = [b.then_case if then else b.else_case for b in branches]
    stmts = [s for s in stmts if s is not None]
    return S.stmt_seq(*stmts) if stmts else None


class IfHoister(StmtExprMutator):
    """Applies the two rewrites of the module docstring, innermost statements first."""

    def visit_expr(self, expr):
        return expr

    def visit_for(self, op):
        op = op.with_fields(body=self.visit_stmt(op.body))
        branches = _branches(op.body)
        if branches is None:
            return op
        cond = _same_condition(branches)
        if cond is None or any(v is op.loop_var for v in undefined_vars(cond)):
            return op
        then_case, else_case = _arm(branches, True), _arm(branches, False)
        return S.IfThenElse(cond, op.with_fields(body=then_case),
                            op.with_fields(body=else_case) if else_case is not None else None)

    def visit_seq_stmt(self, op):
        seq = [self.visit_stmt(s) for s in op.seq]
        merged = []
        for s in seq:
            last = merged[-1] if merged else None
            if (isinstance(s, S.IfThenElse) and isinstance(last, S.IfThenElse) and _pure(s.condition)
                    and structural_equal(s.condition, last.condition)):
                merged[-1] = S.IfThenElse(s.condition, _arm([last, s], True) or make_nop(), _arm([last, s], False))
            else:
                merged.append(s)
        return S.stmt_seq(*merged) if len(merged) > 1 else merged[0]


def hoist_if_then_else(func):
    """Return ``func`` with its loop-invariant branches hoisted (see the module docstring)."""
    return func.with_body(IfHoister().visit_stmt(func.body))


@register_pass("tir.HoistIfThenElse")
@dataclass(frozen=True)
class HoistIfThenElse(PrimFuncPass):
    """Hoist loop-invariant branches out of loops and merge adjacent branches on one condition."""

    info = PassInfo(0, "tir.HoistIfThenElse")

    def transform_function(self, func, mod, ctx):
        return hoist_if_then_else(func)
