"""CanonicalizeCast: an up-cast shared by several element-wise or broadcast consumers is copied per consumer.

After ``%1 = cast(%x: int8, "int32")`` feeds two adds, FuseOps would make the cast a kernel of its own whose output
is the wide type; with one copy per consumer each cast fuses into its consumer and the only tensor in memory stays
the narrow one (TVM's pass; a down-cast is left shared, since its output is already the narrow one).
"""

from dataclasses import dataclass

from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ...tir.dtype import DataType
from ..expr import Call
from ..expr_functor import ExprMutator
from ..op.op import OpPattern
from .function_pass import FunctionPass


def _is_upcast(expr) -> bool:
    if not (isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name == "cast"):
        return False
    source = DataType.parse(expr.args[0].checked_type.dtype)
    return source.bits < DataType.parse(expr.checked_type.dtype).bits


class _CastCopier(ExprMutator):
    def __init__(self):
        super().__init__()
        self.uses: dict = {}  # id of an up-cast -> how many element-wise consumers have taken it so far

    def visit_call(self, call):
        pattern = call.op.get_attr("TOpPattern") if isinstance(call.op, Op) else None
        if pattern is None or pattern > OpPattern.BROADCAST:
            return super().visit_call(call)
        args = tuple(self._arg(a) for a in call.args)
        if all(new is old for new, old in zip(args, call.args, strict=True)):
            return call
        return call.with_fields(args=args)

    def _arg(self, arg):
        new = self.visit(arg)
        if not _is_upcast(arg):
            return new
        self.uses[id(arg)] = self.uses.get(id(arg), 0) + 1
        if self.uses[id(arg)] == 1:
            return new
        return Call(new.op, new.args, new.attrs, new.type_args)  # a distinct node: not shared with other users


@register_pass("CanonicalizeCast")
@dataclass(frozen=True)
class CanonicalizeCast(FunctionPass):
    """Give each element-wise consumer of a shared up-cast its own copy of the cast, so the cast fuses into it."""

    info = PassInfo(3, "CanonicalizeCast", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return _CastCopier().visit(func)
