"""``tir.UnrollLoop``: unroll loops, explicitly or by marking them, as TVM's ``tir.transform.UnrollLoop``.

Options come from the PassContext config ``"tir.UnrollLoop"`` (a dict, as in the seed's example
``PassContext(config={"tir.UnrollLoop": {"auto_max_step": 16, "explicit_unroll": True}})``):

* ``auto_max_step`` (0): a serial loop with a constant extent and no non-unrolled loop inside is unrolled when
  ``extent * steps <= auto_max_step``, where ``steps`` counts the statements one iteration runs (inner unrolled
  loops multiply their body's count);
* ``auto_max_depth`` (8): at most this many nested loops are unrolled automatically;
* ``auto_max_extent`` (0): a serial loop with a constant extent up to this is unrolled whatever its steps;
* ``explicit_unroll`` (True): unrolling copies the body once per iteration (the loop variable replaced by its value);
  when False the loop is only marked ``ForKind.UNROLLED`` and the code generator asks the compiler to unroll it;
* ``unroll_local_access`` (False): accepted for TVM compatibility.

A loop marked ``UNROLLED`` by a schedule is always unrolled; with a non-constant extent it cannot be, and becomes a
serial loop.
"""

from dataclasses import dataclass

from ...ir.pass_context import register_config
from ...ir.transform import PassContext, PassInfo, register_pass
from .. import expr as E
from .. import op as _op
from .. import stmt as S
from ..functor import StmtExprMutator
from ..stmt_functor import renew_defs, substitute
from .function_pass import PrimFuncPass, pass_options

DEFAULTS = {"auto_max_step": 0, "auto_max_depth": 8, "auto_max_extent": 0, "explicit_unroll": True,
            "unroll_local_access": False}
register_config("tir.UnrollLoop", dict, dict(DEFAULTS))


class LoopUnroller(StmtExprMutator):
    """Unrolls loops bottom-up, tracking the statement count and loop depths TVM's heuristic uses."""

    def __init__(self, auto_max_step=0, auto_max_depth=8, auto_max_extent=0, explicit_unroll=True, **_):
        self.auto_max_step = int(auto_max_step)
        self.auto_max_depth = int(auto_max_depth)
        self.auto_max_extent = int(auto_max_extent)
        self.explicit_unroll = bool(explicit_unroll)
        self.step_count = 0  # statements run by one iteration of the loop being visited
        self.unroll_depth = 0  # nested loops unrolled inside it
        self.normal_loop_depth = 0  # nested loops kept as loops inside it

    def visit_expr(self, expr):
        return expr

    def visit_buffer_store(self, op):
        self.step_count += 1
        return op

    def visit_evaluate(self, op):
        self.step_count += 1
        return op

    def visit_for(self, op):
        saved = (self.step_count, self.unroll_depth, self.normal_loop_depth)
        self.step_count = self.unroll_depth = self.normal_loop_depth = 0
        body = self.visit_stmt(op.body)
        extent = op.extent.value if isinstance(op.extent, E.IntImm) and isinstance(op.min, E.IntImm) else -1
        auto = (op.kind == S.ForKind.SERIAL and extent >= 0 and self.normal_loop_depth == 0
                and self.unroll_depth < self.auto_max_depth
                and (extent * max(self.step_count, 1) <= self.auto_max_step or extent <= self.auto_max_extent))
        if op.kind == S.ForKind.UNROLLED:
            if extent < 0:  # cannot unroll a loop of unknown trip count: run it as a normal loop
                auto = False
                op = op.with_fields(kind=S.ForKind.SERIAL)
            else:
                auto = True
        steps = self.step_count * max(extent, 1) if auto else self.step_count
        unroll_depth = self.unroll_depth + 1 if auto else self.unroll_depth
        normal_depth = self.normal_loop_depth if auto else self.normal_loop_depth + 1
        self.step_count = saved[0] + steps
        self.unroll_depth = max(saved[1], unroll_depth)
        self.normal_loop_depth = max(saved[2], normal_depth)
        if auto and self.explicit_unroll:
            return unroll(op.with_fields(body=body))
        if auto:
            return op.with_fields(kind=S.ForKind.UNROLLED, body=body)
        return op.with_fields(body=body)


def unroll(loop) -> S.Stmt:
    """The body of ``loop`` repeated once per iteration, its variable replaced by the iteration's value."""
    lo, n = loop.min.value, loop.extent.value
    if n == 0:
        return S.Evaluate(_op.const(0))
    copies = []
    for k in range(n):
        body = substitute(loop.body, {loop.loop_var: _op.const(lo + k, loop.loop_var.dtype)})
        # each copy binds its own inner variables (its allocations keep their handles for storage planning)
        copies.append(body if k == 0 else renew_defs(body, keep_allocations=True))
    return S.stmt_seq(*copies)


def unroll_loop(func, **options):
    """Return ``func`` with loops unrolled as ``options`` (the ``tir.UnrollLoop`` config keys) say."""
    return func.with_body(LoopUnroller(**pass_options("tir.UnrollLoop", DEFAULTS, options)).visit_stmt(func.body))


@register_pass("tir.UnrollLoop")
@dataclass(frozen=True)
class UnrollLoop(PrimFuncPass):
    """Unroll loops as the ``tir.UnrollLoop`` config says (TVM's ``tir.transform.UnrollLoop``)."""

    info = PassInfo(0, "tir.UnrollLoop")

    def transform_function(self, func, mod, ctx):
        ctx = ctx or PassContext.current()
        return unroll_loop(func, **(ctx.config.get("tir.UnrollLoop") or {}))
