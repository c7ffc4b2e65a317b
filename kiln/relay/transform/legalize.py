"""Legalize: replace operator calls by what their ``FTVMLegalize`` hook builds (TVM's ``relay.transform.Legalize``).

An operator registers ``flegalize(attrs, inputs, types) -> expr or None`` with ``relay.op.register_legalize``:
``inputs`` are the call's (rewritten) arguments, ``types`` their types followed by the call's result type. When the
hook returns an expression, it replaces the call (typically the same computation in operators the targets support
better); None keeps the call. The result is typed again.
"""

from dataclasses import dataclass

from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ..expr_functor import ExprMutator
from .function_pass import FunctionPass
from .infer_type import infer_type


class _Legalizer(ExprMutator):
    def __init__(self, attr_name):
        super().__init__()
        self.attr_name = attr_name

    def visit_call(self, call):
        new = super().visit_call(call)
        if not isinstance(new.op, Op):
            return new
        hook = new.op.get_attr(self.attr_name)
        if hook is None:
            return new
        types = [a.checked_type for a in call.args] + [call.checked_type]
        replaced = hook(new.attrs, list(new.args), types)
        return new if replaced is None else replaced


def legalize(expr, mod=None, attr_name="FTVMLegalize"):
    """``expr`` with every call whose operator has ``attr_name`` replaced by what that hook returns; typed."""
    return infer_type(_Legalizer(attr_name).visit(infer_type(expr, mod)), mod)


@register_pass("Legalize")
@dataclass(frozen=True)
class Legalize(FunctionPass):
    """Rewrite calls with their operators' legalization hooks (``FTVMLegalize`` by default)."""

    legalize_map_attr_name: str = "FTVMLegalize"
    info = PassInfo(1, "Legalize", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return legalize(func, mod, self.legalize_map_attr_name)
