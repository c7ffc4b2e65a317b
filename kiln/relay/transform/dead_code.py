"""DeadCodeElimination: drop let bindings nobody uses and, with ``inline_once``, inline those used exactly once.

The algorithm is TVM's (``src/relay/transforms/dead_code.cc``), a module pass in three steps:

1. purity (:func:`kiln.relay.analysis.purity.let_purity`): which let-bound values may be dropped or moved; a call
   of a stateful operator (the memory and VM dialects), ``ref_read``/``ref_write`` and a call of a function doing
   any of those are impure, and their bindings stay exactly where they are (``ignore_impurity=True`` treats every
   value as pure);
2. usage: each function is walked once; a pure let-bound value is walked only when its variable is first used,
   so a chain of bindings that only dead bindings use is never counted. A use inside a function nested below the
   binding counts twice: that function may run many times, so the value is not inlined into it;
3. elimination: a pure binding used 0 times is dropped, one used once is inlined at its use when ``inline_once``.

Types are kept (the pass only removes and moves typed nodes), so no InferType runs after it.
"""

from collections import Counter
from dataclasses import dataclass

from ...ir.module import IRModule
from ...ir.transform import ModulePass, PassInfo, register_pass
from ..analysis.purity import let_purity
from ..expr import Let, Var
from ..expr_functor import ExprMutator, expr_children
from ..function import Function


def _count_uses(func, is_pure):
    """``(bound_values, uses)`` keyed by ``Var.vid``: the value of every let-bound variable of ``func`` and how many
    times it is used (see the module docstring), walked with an explicit stack."""
    values: dict = {}
    uses: Counter = Counter()
    level_of: dict = {}
    visits: Counter = Counter()
    stack = [(func, 0)]
    while stack:
        expr, level = stack.pop()
        visits[expr] += 1
        if visits[expr] > 2:  # seen twice already: every variable under it has two uses, the most that matters
            continue
        if isinstance(expr, Let):
            todo = []
            while isinstance(expr, Let):
                vid = expr.var.vid
                values[vid], uses[vid], level_of[vid] = expr.value, 0, level
                if not is_pure(expr.var):
                    todo.append(expr.value)  # an impure value always runs: its uses count now
                expr = expr.body
            todo.append(expr)
            stack.extend((e, level) for e in reversed(todo))
        elif isinstance(expr, Var):
            vid = expr.vid
            if vid in values:
                uses[vid] += 1
                if uses[vid] == 1 and is_pure(expr):
                    stack.append((values[vid], level))  # first use: the value is needed, so its uses count
                if level_of[vid] < level:
                    uses[vid] += 1
        else:
            inner = level + 1 if isinstance(expr, Function) else level
            stack.extend((c, inner) for c in reversed(expr_children(expr)))
    return values, uses


class _Eliminator(ExprMutator):
    def __init__(self, values, uses, is_pure, inline_once):
        super().__init__()
        self.values, self.uses, self.is_pure, self.inline_once = values, uses, is_pure, inline_once

    def _action(self, var) -> str:
        if var.vid not in self.values or not self.is_pure(var):
            return "keep"
        n = self.uses[var.vid]
        if n == 0:
            return "drop"
        return "inline" if n == 1 and self.inline_once else "keep"

    def visit_var(self, var):
        if self._action(var) == "inline":
            return self.visit(self.values[var.vid])
        return var

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        kept = [b for b in chain if self._action(b.var) == "keep"]
        for binding in kept:  # values first, in order, as TVM's pre-visit
            self.visit(binding.value)
        result = self.visit(body)
        for binding in reversed(kept):
            result = binding.with_fields(value=self.visit(binding.value), body=result)
        self.memo_map[let] = result
        return result


def dead_code_elimination(expr, inline_once=False, ignore_impurity=False, mod=None):
    """Remove the unused pure let bindings of ``expr`` (and inline single-use ones when ``inline_once``).

    Parameters
    ----------
    expr : RelayExpr
        A typed expression (usually a function).
    inline_once : bool
        Inline a pure binding used once.
    ignore_impurity : bool
        Treat every bound value as pure.
    mod : IRModule, optional
        The module ``expr`` belongs to, whose global functions decide the purity of calls to them.
    """
    name = "__dead_code_elimination__"
    probe = mod.shallow_copy() if mod is not None else IRModule()
    probe[name] = expr if isinstance(expr, Function) else Function((), expr)
    result = _eliminate(probe, inline_once, ignore_impurity)[name]
    return result if isinstance(expr, Function) else result.body


def _eliminate(mod, inline_once, ignore_impurity) -> IRModule:
    purity = {} if ignore_impurity else let_purity(mod)

    def is_pure(var):
        return purity.get(var.vid, ignore_impurity)

    changed = {}
    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            values, uses = _count_uses(func, is_pure)
            new = _Eliminator(values, uses, is_pure, inline_once).visit(func) if values else func
            if new is not func:
                changed[gv] = new
    if not changed:
        return mod
    out = mod.shallow_copy()
    for gv, func in changed.items():
        out[gv] = func
    return out


@register_pass("DeadCodeElimination")
@dataclass(frozen=True)
class DeadCodeElimination(ModulePass):
    """Remove unused let bindings (TVM's ``relay.transform.DeadCodeElimination``): see the module docstring."""

    inline_once: bool = False
    ignore_impurity: bool = False
    info = PassInfo(1, "DeadCodeElimination", required=("InferType",))

    def transform_module(self, mod, ctx):
        return _eliminate(mod, self.inline_once, self.ignore_impurity)
