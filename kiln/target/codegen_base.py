"""What the C and LLVM code generators share: the walk over lowered TIR, with one method per node kind.

A generator subclasses :class:`CodeGenBase` and writes the methods that emit something (``visit_binary``,
``visit_for``, ``visit_buffer_store``, ...) plus three hooks: ``bind_let(stmt)`` for one ``LetStmt`` of a chain,
``emit_assert(stmt)`` for one ``AssertStmt`` (fail with its message, return -1), ``emit_allocate(stmt, on_heap)``
for an ``Allocate`` (``tir.LowerAllocation`` decided the place). Dispatch goes through one table from node class to
method name, looked up on the instance, so variants override single methods. Chains of lets and asserts (a packed
function's prologue holds hundreds) are walked with a loop, not recursion. Nothing here decides anything: the TIR
pipeline (:mod:`kiln.tir.transform.pipeline`) has lowered, vectorized and placed everything before printing.
"""

from ..error import CodegenError
from ..tir import expr as E
from ..tir import stmt as S
from ..tir.functor import _EXPR_METHODS, _STMT_METHODS

__all__ = ["BINARY_KINDS", "CodeGenBase"]

BINARY_KINDS = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max, E.EQ, E.NE, E.LT, E.LE,
                 E.GT, E.GE)
# node class -> name of the generator method (looked up on the instance, so subclasses may override)
_EXPR_TABLE = dict(_EXPR_METHODS)
_EXPR_TABLE.update({k: "visit_binary" for k in BINARY_KINDS})
_EXPR_TABLE.update({E.And: "visit_logic", E.Or: "visit_logic", E.SizeVar: "visit_var"})
_STMT_TABLE = dict(_STMT_METHODS)


class CodeGenBase:
    """The statement and expression walk of a code generator (see the module docstring)."""

    backend = "codegen"
    """Named in errors ("C codegen", "LLVM codegen")."""

    def visit_expr(self, e):
        method = getattr(self, _EXPR_TABLE.get(type(e), ""), None)
        if method is None:
            raise CodegenError(f"{self.backend}: cannot generate a {type(e).__name__} expression (lower it first): "
                               f"{e}")
        return method(e)

    def visit_stmt(self, s):
        method = getattr(self, _STMT_TABLE.get(type(s), ""), None)
        if method is None:
            raise CodegenError(f"{self.backend}: cannot generate a {type(s).__name__} statement")
        method(s)

    def visit_seq_stmt(self, s):
        for item in s.seq:
            self.visit_stmt(item)

    def visit_let_stmt(self, s):
        while isinstance(s, S.LetStmt | S.AssertStmt):
            if isinstance(s, S.AssertStmt):
                self.emit_assert(s)
            else:
                self.bind_let(s)
            s = s.body
        self.visit_stmt(s)

    visit_assert_stmt = visit_let_stmt

    def visit_allocate(self, s):
        self.emit_allocate(s, bool(s.annotations.get("kiln.on_heap", False)))

    def visit_decl_buffer(self, s):
        self.visit_stmt(s.body)

    def visit_attr_stmt(self, s):
        self.visit_stmt(s.body)

    @staticmethod
    def assert_message(s) -> str:
        """The text of an ``AssertStmt``'s message."""
        return s.message.value if isinstance(s.message, E.StringImm) else str(s.message)
