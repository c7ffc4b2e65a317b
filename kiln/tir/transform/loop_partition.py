"""``tir.LoopPartition``: split a loop where its conditions change value (TVM's ``tir.transform.LoopPartition``).

A loop over tiles whose last tile runs past the edge (a split that does not divide its extent) or whose first and
last tiles read padding carries those tiles' conditions on every iteration: ``if likely(xo < 3)`` around the last
tile's columns, ``if_then_else(1 <= xo, x[...], 0)`` around the padded input. Partitioning peels the iterations
where a condition can be false off the loop, so the loop between them runs without them::

    for xo in range(4):              for xo in range(1, 3):      # no conditions left
        if likely(xo < 3): A             A
                               ->    A[xo := 0]
                                     (the last tile without A: its condition is false)

The partitioned loops are those of constant bounds carrying the ``pragma_loop_partition_hint`` attribute (what
``s[stage].pragma(axis, "loop_partition_hint")`` gives), and, with the config ``{"tir.LoopPartition":
{"partition_const_loop": True}}``, every serial loop of constant bounds whose body has ``likely`` conditions. A
loop is searched for the interior that leaves it the fewest conditions on its variable, peeling at most
:data:`MAX_PEELED` iterations at each end; the conditions are the atoms (operands of ``and``) of branches,
``if_then_else`` and ``likely``, proved true or false over the interior by :class:`~kiln.arith.Analyzer` with
every loop around and inside the loop bound to its range. Peeled iterations are copies of the body with the
loop variable replaced by its value; the Simplify pass that follows folds their conditions. An interior of one
iteration is its body (TVM's default). TVM's other options (``no_unroll_loop_with_extent_one``,
``unroll_loop_with_partition_hint_no_interval``) are accepted and change nothing; an unknown option is an error.
"""

from dataclasses import dataclass

from ...arith.analyzer import Analyzer
from ...ir.pass_context import register_config
from ...ir.transform import PassContext, PassInfo, register_pass
from .. import expr as E
from .. import op as _op
from .. import stmt as S
from ..analysis import stmt_contains
from ..expr_reduce import Range
from ..functor import StmtExprMutator
from ..stmt_functor import post_order_visit, renew_defs, substitute
from .function_pass import PrimFuncPass, pass_options

__all__ = ["LoopPartition", "loop_partition", "MAX_PEELED"]

DEFAULTS = {"partition_const_loop": False, "no_unroll_loop_with_extent_one": False,
            "unroll_loop_with_partition_hint_no_interval": False}
register_config("tir.LoopPartition", dict, dict(DEFAULTS))

#: At most this many iterations are peeled off each end of a loop (each is a copy of the body).
MAX_PEELED = 2

HINT = "pragma_loop_partition_hint"


def _atoms(cond):
    """The operands of ``cond``'s ``and`` chain (``likely`` unwrapped)."""
    if isinstance(cond, E.Call) and cond.op.name == "tir.likely":
        return _atoms(cond.args[0])
    if isinstance(cond, E.And):
        return _atoms(cond.a) + _atoms(cond.b)
    return [cond]


def _conditions(body, only_likely):
    """Every condition atom of ``body``: of ``likely`` calls, and unless ``only_likely`` of branches and
    ``if_then_else``."""
    found = []

    def visit(node):
        if isinstance(node, E.Call) and (node.op.name == "tir.likely"
                                         or node.op.name == "tir.if_then_else" and not only_likely):
            found.extend(_atoms(node.args[0]))
        elif isinstance(node, S.IfThenElse) and not only_likely:
            found.extend(_atoms(node.condition))

    post_order_visit(body, visit)
    return found


def _inner_loops(body):
    loops = []
    post_order_visit(body, lambda node: loops.append(node) if isinstance(node, S.For) else None)
    return loops


class _AtomFolder(StmtExprMutator):
    """Replaces the condition atoms of ``values`` (matched by identity) by their constant truth values."""

    def __init__(self, values):
        super().__init__()
        self.values = values

    def fold(self, cond):
        """``cond`` with its atoms of ``values`` replaced."""
        if id(cond) in self.values:
            return _op.const(self.values[id(cond)], "bool")
        if isinstance(cond, E.Call) and cond.op.name == "tir.likely":
            arg = self.fold(cond.args[0])
            return cond if arg is cond.args[0] else cond.with_fields(args=(arg,))
        if isinstance(cond, E.And):
            a, b = self.fold(cond.a), self.fold(cond.b)
            return cond if a is cond.a and b is cond.b else _op.logical_and(a, b)
        return cond

    def visit_call(self, op):
        if op.op.name not in ("tir.likely", "tir.if_then_else"):
            return super().visit_call(op)
        args = [self.fold(op.args[0]), *(self.visit_expr(a) for a in op.args[1:])]
        return op if all(a is b for a, b in zip(args, op.args, strict=True)) else op.with_fields(args=tuple(args))

    def visit_if_then_else(self, op):
        return super().visit_if_then_else(op.with_fields(condition=self.fold(op.condition)))


class LoopPartitioner(StmtExprMutator):
    """Partitions the loops the module docstring names, innermost first."""

    def __init__(self, partition_const_loop=False, **_):
        super().__init__()
        self.partition_const_loop = bool(partition_const_loop)
        self.ranges = {}  # enclosing loop variables -> Range

    def visit_expr(self, expr):
        return expr

    def visit_attr_stmt(self, op):
        if op.attr_key == HINT and isinstance(op.body, S.For):
            loop = self._visit_loop_body(op.body)
            return self._partition(loop, only_likely=False) or loop
        return super().visit_attr_stmt(op)

    def visit_for(self, op):
        loop = self._visit_loop_body(op)
        if self.partition_const_loop and loop.kind == S.ForKind.SERIAL:
            return self._partition(loop, only_likely=True) or loop
        return loop

    def _visit_loop_body(self, op):
        self.ranges[op.loop_var] = Range.from_min_extent(op.min, op.extent)
        try:
            return op.with_fields(body=self.visit_stmt(op.body))
        finally:
            del self.ranges[op.loop_var]

    def _partition(self, loop, only_likely):
        """``loop`` split into peeled iterations and an interior with fewer conditions, or None."""
        if not (isinstance(loop.min, E.IntImm) and isinstance(loop.extent, E.IntImm)):
            return None
        lo, n = loop.min.value, loop.extent.value
        var = loop.loop_var
        if n < 2:
            return None
        atoms = [a for a in _conditions(loop.body, only_likely) if stmt_contains(a, lambda node: node is var)]
        if not atoms:
            return None
        ranges = dict(self.ranges)
        ranges.update({inner.loop_var: Range.from_min_extent(inner.min, inner.extent)
                       for inner in _inner_loops(loop.body)})
        best = None
        for head in range(min(MAX_PEELED, n - 1) + 1):
            for tail in range(min(MAX_PEELED, n - 1 - head) + 1):
                values = _resolve(atoms, ranges, var, lo + head, n - head - tail)
                if best is None or len(values) > len(best[2]):
                    best = (head, tail, values)
        head, tail, values = best
        if not values:
            return None
        interior = loop.with_fields(min=_op.const(lo + head, var.dtype), extent=_op.const(n - head - tail, var.dtype),
                                    body=_AtomFolder(values).visit_stmt(loop.body))
        if interior.extent.value == 1:
            interior = substitute(interior.body, {var: interior.min})

        def peel(k):
            return renew_defs(substitute(loop.body, {var: _op.const(k, var.dtype)}), keep_allocations=True)

        return S.stmt_seq(*map(peel, range(lo, lo + head)), interior, *map(peel, range(lo + n - tail, lo + n)))


def _resolve(atoms, ranges, var, start, extent):
    """``{id(atom): truth}`` of the atoms constant while ``var`` runs ``[start, start + extent)`` and the variables
    of ``ranges`` (the loops around and inside its loop) theirs."""
    ana = Analyzer()
    for other, rng in ranges.items():
        ana.bind(other, rng)
    ana.bind(var, Range.from_min_extent(_op.const(start, var.dtype), _op.const(extent, var.dtype)))
    values = {}
    for atom in atoms:
        if ana.can_prove(atom):
            values[id(atom)] = True
        elif ana.can_prove(_op.logical_not(atom)):
            values[id(atom)] = False
    return values


def loop_partition(func, **options):
    """Return ``func`` with its loops partitioned as ``options`` (the ``tir.LoopPartition`` config keys) say."""
    partitioner = LoopPartitioner(**pass_options("tir.LoopPartition", DEFAULTS, options))
    return func.with_body(partitioner.visit_stmt(func.body))


@register_pass("tir.LoopPartition")
@dataclass(frozen=True)
class LoopPartition(PrimFuncPass):
    """Peel the iterations where conditions change off hinted loops (TVM's ``tir.transform.LoopPartition``)."""

    info = PassInfo(0, "tir.LoopPartition")

    def transform_function(self, func, mod, ctx):
        ctx = ctx or PassContext.current()
        return loop_partition(func, **(ctx.config.get("tir.LoopPartition") or {}))
