"""Inline and DefuseOps: replace calls by the bodies of what they call.

``Inline`` substitutes, at every call site, the body of each global function carrying the attribute ``Inline=1``
(with fresh copies of the variables it binds), then drops those functions when nothing refers to them any more.
``DefuseOps`` undoes FuseOps: every call of a ``Primitive`` function becomes the function's body applied to the
call's arguments.
"""

from dataclasses import dataclass

from ...ir.expr import GlobalVar
from ...ir.transform import ModulePass, PassInfo, register_pass
from ..expr import Let, Var
from ..expr_functor import ExprMutator, post_order_visit
from ..function import Function
from .function_pass import FunctionPass


class _FreshCopy(ExprMutator):
    """Copies an expression, giving every variable it binds a new identity and substituting ``subst``."""

    def __init__(self, subst):
        super().__init__()
        self.subst = dict(subst)

    def _fresh(self, var):
        new = Var(var.name_hint, var.type_annotation)
        self.subst[var] = new
        return new

    def visit_var(self, var):
        return self.subst.get(var, var)

    def visit_function(self, fn):
        params = tuple(self._fresh(p) for p in fn.params)
        return fn.with_fields(params=params, body=self.visit(fn.body), checked_type_=None)

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        bindings = [(self._fresh(b.var), b) for b in chain]
        values = [self.visit(b.value) for _, b in bindings]
        result = self.visit(body)
        for (var, _), value in zip(reversed(bindings), reversed(values), strict=True):
            result = Let(var, value, result)
        return result


def substitute_call(func, args):
    """The body of ``func`` with its parameters replaced by ``args`` and its inner bindings renamed."""
    return _FreshCopy(dict(zip(func.params, args, strict=True))).visit(func.body)


def inline_globals(mod):
    """Return a copy of ``mod`` with every ``Inline=1`` global function inlined at its call sites."""
    from ...ir.module import IRModule

    inlinable = {gv: f for gv, f in mod.functions.items()
                 if isinstance(f, Function) and f.attrs.get("Inline", 0)}
    if not inlinable:
        return mod

    class _Inliner(ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            target = inlinable.get(new.op) if isinstance(new.op, GlobalVar) else None
            return self.visit(substitute_call(target, new.args)) if target is not None else new

    out = IRModule(type_definitions=mod.type_definitions, attrs=mod.attrs)
    for gv, func in mod.functions.items():
        out[gv] = _Inliner().visit(func) if isinstance(func, Function) and gv not in inlinable else func
    used = set()
    for func in out.functions.values():
        if isinstance(func, Function):
            post_order_visit(func, lambda e: used.add(e) if isinstance(e, GlobalVar) else None)
    for gv in inlinable:
        if gv not in used and gv.name_hint != "main":
            out.remove(gv)
    return out


class _Defuser(ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        if isinstance(new.op, Function) and new.op.is_primitive():
            return substitute_call(new.op, new.args)
        return new

    def visit_function(self, fn):
        return fn if fn.is_primitive() else super().visit_function(fn)


def defuse_ops(expr):
    """Replace every call of a primitive function in ``expr`` by the function's body on the call's arguments."""
    return _Defuser().visit(expr)


@register_pass("Inline")
@dataclass(frozen=True)
class Inline(ModulePass):
    """Inline the global functions marked ``Inline=1`` (TVM's ``relay.transform.Inline``)."""

    info = PassInfo(1, "Inline")

    def transform_module(self, mod, ctx):
        return inline_globals(mod)


@register_pass("DefuseOps")
@dataclass(frozen=True)
class DefuseOps(FunctionPass):
    """Undo FuseOps (TVM's ``relay.transform.DefuseOps``)."""

    info = PassInfo(0, "DefuseOps")

    def transform_function(self, func, mod, ctx):
        return defuse_ops(func)
