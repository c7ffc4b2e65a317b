"""AnnotateSpans and SpanCheck: source positions for a module built in Python (TVM's debugging aids).

``AnnotateSpans`` prints the module and parses the text back, so every expression gets the span of its text (the
module is otherwise unchanged: the round trip is exact). ``SpanCheck`` reports each expression without a span as a
warning diagnostic, rendered by the current renderer (:mod:`kiln.ir.diagnostics`).
"""

from dataclasses import dataclass

from ...ir import diagnostics
from ...ir.transform import ModulePass, PassInfo, register_pass
from ..expr import Call, Constant, Let, Tuple, TupleGetItem, Var
from ..expr_functor import post_order_visit
from ..function import Function
from ..parser import parse

__all__ = ["AnnotateSpans", "SpanCheck"]


@register_pass("AnnotateSpans")
@dataclass(frozen=True)
class AnnotateSpans(ModulePass):
    """Give every expression the span of its printed text (print, then parse back)."""

    info = PassInfo(0, "AnnotateSpans")

    def transform_module(self, mod, ctx):
        return parse(str(mod), source_name="GeneratedSource")


_SPANNED = (Call, Constant, Let, Tuple, TupleGetItem, Var, Function)


@register_pass("SpanCheck")
@dataclass(frozen=True)
class SpanCheck(ModulePass):
    """Warn about every expression of the module's functions that has no span (the module is returned as is)."""

    info = PassInfo(0, "SpanCheck")

    def transform_module(self, mod, ctx):
        context = diagnostics.DiagnosticContext(mod, diagnostics.get_renderer())
        for gv, func in mod.functions.items():
            if not isinstance(func, Function):
                continue

            def check(expr, gv=gv):
                if isinstance(expr, _SPANNED) and expr.span is None:
                    context.emit(diagnostics.Diagnostic(diagnostics.DiagnosticLevel.WARNING, None,
                                                        f"{gv.name_hint}: a {type(expr).__name__} has no span"))

            post_order_visit(func, check)
        context.render()
        return mod
