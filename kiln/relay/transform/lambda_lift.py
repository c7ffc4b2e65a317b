"""LambdaLift: turn nested (non-primitive) functions into global functions.

A nested function without free variables becomes a global function and its occurrence a reference to it. A closure
over free variables ``v1..vk`` becomes a global function of those variables that returns the inner function (marked
``Closure=1``), and its occurrence the call ``@lifted(v1, ..., vk)``, which rebuilds the closure where it stood. A
closure bound by a ``let`` that calls itself refers to itself through the lifted global (the let variable's type
annotation, which recursion needs anyway, becomes the global's declared return type). Run it on a typed module: the
captured variables become parameters and keep their types.
"""

from dataclasses import dataclass

from ...ir.expr import GlobalVar
from ...ir.module import IRModule
from ...ir.transform import ModulePass, PassInfo, register_pass
from ..analysis.free_vars import free_vars
from ..expr import Call
from ..expr_functor import ExprMutator
from ..function import Function


class _Lifter(ExprMutator):
    def __init__(self, module, prefix, analyses=None):
        super().__init__()
        self.free_vars = (lambda fn: analyses.get("relay.FreeVars", fn)) if analyses is not None else free_vars
        self.module = module
        self.prefix = prefix
        self.counter = 0
        self.let_bound: dict = {}  # let var of a recursive closure -> replacement expression

    def _name(self):
        while True:
            name = f"{self.prefix}{self.counter}"
            self.counter += 1
            if name not in self.module:
                return name

    def visit_var(self, var):
        return self.let_bound.get(var, var)

    def visit_let(self, let):
        chain, body = self.let_chain(let)  # a loop, not recursion: A-normal form makes long chains
        values = []
        for binding in chain:
            value = binding.value
            if isinstance(value, Function) and not value.is_primitive() and binding.var in self.free_vars(value):
                captured = [v for v in self.free_vars(value) if v is not binding.var]
                gv = GlobalVar(self._name())
                self.let_bound[binding.var] = Call(gv, tuple(captured)) if captured else gv
                # the global calls itself: inferring its type needs the closure's type declared, which the let
                # variable's annotation gives
                values.append(self._lift(value, captured, gv, binding.var.type_annotation))
            else:
                values.append(self.visit(value))
        result = self.visit(body)
        for binding, value in zip(reversed(chain), reversed(values), strict=True):
            result = binding.with_fields(value=value, body=result)
        return result

    def visit_function(self, fn):
        if fn.is_primitive():
            return fn
        captured = self.free_vars(fn)
        return self._lift(fn, captured, GlobalVar(self._name()))

    def _lift(self, fn, captured, gv, closure_type=None):
        inner = fn.with_fields(body=self.visit(fn.body))
        if captured:
            self.module[gv] = Function(captured, inner.with_attr("Closure", 1), ret_type=closure_type)
            return Call(gv, tuple(captured))
        self.module[gv] = inner
        return gv


def lambda_lift(mod: IRModule, prefix="lifted_name", analyses=None) -> IRModule:
    """Return a copy of ``mod`` in which no non-primitive function is nested inside another."""
    out = IRModule(type_definitions=mod.type_definitions, attrs=mod.attrs)
    for gv, func in mod.functions.items():
        out[gv] = func
    lifter = _Lifter(out, prefix, analyses)
    for gv, func in list(mod.functions.items()):
        if isinstance(func, Function):
            out[gv] = func.with_fields(body=lifter.visit(func.body))
    return out


@register_pass("LambdaLift")
@dataclass(frozen=True)
class LambdaLift(ModulePass):
    """Lift nested functions to global functions (TVM's ``relay.transform.LambdaLift``)."""

    info = PassInfo(0, "LambdaLift")

    def transform_module(self, mod, ctx):
        return lambda_lift(mod, analyses=ctx.analysis_manager)
