"""Inline and DefuseOps: replace calls by the bodies of what they call.

``Inline`` substitutes, at every call site, the body of each global function carrying the attribute ``Inline=1``
(with fresh copies of the variables it binds), callees before callers, then drops the functions it inlined.
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


def _globals_in(func) -> set:
    found: set = set()
    post_order_visit(func, lambda e: found.add(e) if isinstance(e, GlobalVar) else None)
    return found


def _callees_first(calls) -> list:
    """The global functions ordered so that each comes after the functions it refers to (cycles broken anywhere)."""
    order: list = []
    state: dict = {}
    for root in calls:
        stack = [(root, False)]
        while stack:
            gv, done = stack.pop()
            if done:
                state[gv] = 2
                order.append(gv)
                continue
            if state.get(gv):
                continue
            state[gv] = 1
            stack.append((gv, True))
            stack.extend((callee, False) for callee in calls.get(gv, ()) if callee in calls and not state.get(callee))
    return order


def inline_globals(mod):
    """Return a copy of ``mod`` with the global functions marked ``Inline=1`` inlined where they are used, as TVM's
    Inline does: callees first, and only a function that (by then) refers to no other global and not to itself; a
    function with a ``Compiler`` or ``Extern`` attribute is inlined as a function literal, not opened up. An
    inlined function disappears unless nothing referred to it in the first place (an entry point)."""
    from ...ir.module import IRModule

    functions = dict(mod.functions)
    calls = {gv: _globals_in(f) for gv, f in functions.items() if isinstance(f, Function)}
    entries = {gv for gv in calls if not any(gv in refs for other, refs in calls.items() if other is not gv)}

    def can_inline(gv):
        func = functions.get(gv)
        return isinstance(func, Function) and bool(func.attrs.get("Inline", 0)) and not calls.get(gv)

    class _Inliner(ExprMutator):
        def visit_call(self, call):
            if isinstance(call.op, GlobalVar) and can_inline(call.op):
                func, args = functions[call.op], tuple(self.visit(a) for a in call.args)
                if func.attrs.get("Compiler") or func.attrs.get("Extern", 0):
                    return call.with_fields(op=func, args=args)
                return substitute_call(func, args)
            return super().visit_call(call)

        def visit_global_var(self, gv):
            return functions[gv] if can_inline(gv) else gv

    for gv in _callees_first(calls):
        if not calls[gv] or calls[gv] == {gv}:
            continue
        functions[gv] = _Inliner().visit(functions[gv])
        calls[gv] = _globals_in(functions[gv])
    out = IRModule(type_definitions=mod.type_definitions, attrs=mod.attrs)
    still_used = set().union(*calls.values()) if calls else set()
    for gv, func in functions.items():
        inlined = isinstance(func, Function) and func.attrs.get("Inline", 0) and gv not in entries
        if not inlined or gv in still_used:
            out[gv] = func
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
