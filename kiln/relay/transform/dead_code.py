"""DeadCodeElimination: drop let bindings nobody uses and, with ``inline_once``, inline those used exactly once.

Uses are counted once over the whole expression; bindings are then visited from the innermost outwards, so dropping a
binding releases the uses of its value and a whole chain of dead bindings disappears in one pass. An unused value is
dropped unless it is a call of a stateful operator (``TOpIsStateful``, the memory and VM dialects), which runs for its
effect.
"""

from collections import Counter
from dataclasses import dataclass

from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ..analysis.use_counts import var_use_counts
from ..expr import Call, Var
from ..expr_functor import ExprMutator
from .function_pass import FunctionPass


def _is_stateful(value) -> bool:
    """A call of a stateful operator (``TOpIsStateful``: the memory/VM dialect) runs even when nothing reads its
    value: ``vm.invoke_tvm_op`` writes its outputs, ``memory.kill`` frees a register."""
    return isinstance(value, Call) and isinstance(value.op, Op) and bool(value.op.get_attr("TOpIsStateful"))


class _Eliminator(ExprMutator):
    def __init__(self, counts, inline_once):
        super().__init__()
        self.counts = counts
        self.inline_once = inline_once
        self.inlined: dict = {}

    def visit_var(self, var):
        value = self.inlined.get(var)
        return var if value is None else self.visit(value)

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        kept = []
        for binding in reversed(chain):
            uses = self.counts[binding.var]
            if uses == 0 and not _is_stateful(binding.value):
                for v, n in var_use_counts(binding.value).items():
                    self.counts[v] -= n
                if isinstance(binding.value, Var):
                    self.counts[binding.value] -= 1
                continue
            if self.inline_once and uses == 1:
                self.inlined[binding.var] = binding.value
                continue
            kept.append(binding)
        result = self.visit(body)
        for binding in kept:  # innermost first
            result = binding.with_fields(var=self.visit(binding.var), value=self.visit(binding.value), body=result)
        self.memo_map[let] = result
        return result


def dead_code_elimination(expr, inline_once=False, use_counts=None):
    """Remove unused let bindings of ``expr`` (and inline single-use ones when ``inline_once``).

    ``use_counts`` may pass in :func:`var_use_counts` of ``expr`` (it is copied, not modified).
    """
    counts = Counter(use_counts if use_counts is not None else var_use_counts(expr))
    return _Eliminator(counts, inline_once).visit(expr)


@register_pass("DeadCodeElimination")
@dataclass(frozen=True)
class DeadCodeElimination(FunctionPass):
    """Remove unused let bindings (TVM's ``relay.transform.DeadCodeElimination``)."""

    inline_once: bool = False
    ignore_impurity: bool = False
    info = PassInfo(1, "DeadCodeElimination")

    def transform_function(self, func, mod, ctx):
        return dead_code_elimination(func, self.inline_once, ctx.analysis_manager.get("relay.VarUseCounts", func))
