"""Helpers for testing bring-your-own-codegen flows (TVM's ``relay.testing.byoc``)."""

from ..expr import Var
from ..expr_functor import ExprMutator
from ..op.annotation import compiler_begin, compiler_end
from ..op.tensor import add, multiply, subtract


class CcompilerAnnotator(ExprMutator):
    """Marks each ``multiply(subtract(add(a, b), c), d)`` chain as a region of the ``"ccompiler"`` code generator:
    begin annotations on the chain's variable inputs, an end annotation on the multiply.

    It visits a call before its arguments, as TVM's recursive Python mutator does (the multiply tells the calls
    below it that they are inside a chain), so it is meant for small test programs.
    """

    def __init__(self):
        super().__init__()
        self.in_compiler = 0  # 0: outside a chain, 1: below its multiply, 2: its add was seen

    def prune(self, expr) -> bool:
        """Every call is visited before its arguments (no post-order pre-walk): the chain state flows down."""
        return True

    def _begin_vars(self, call):
        """The call's two arguments, visited, each variable wrapped in a begin annotation."""
        args = [self.visit(a) for a in call.args]
        return [compiler_begin(a, "ccompiler") if isinstance(a, Var) else a for a in args]

    def visit_call(self, call):
        name = getattr(call.op, "name", None)
        if name == "add" and self.in_compiler == 1:
            lhs, rhs = (compiler_begin(self.visit(a), "ccompiler") for a in call.args)
            self.in_compiler = 2
            return add(lhs, rhs)
        if name == "subtract" and self.in_compiler == 1:
            return subtract(*self._begin_vars(call))
        if name == "multiply":
            self.in_compiler = 1
            out = multiply(*self._begin_vars(call))
            if self.in_compiler == 2:
                out = compiler_end(out, "ccompiler")
            self.in_compiler = 0
            return out
        return super().visit_call(call)
