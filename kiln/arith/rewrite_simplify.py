"""The rewrite-rule driver of the simplifier (TVM's ``RewriteSimplifier``/``CanonicalSimplifier`` in one).

``RewriteSimplifier`` is a TIR mutator: children are simplified first (post-order), then the rules of
:data:`kiln.arith.rewrite_rules.RULES` for the node's kind are tried in order, preceded by constant folding through the
TVM-style builders of :mod:`kiln.tir.op`. When a rule fires, its result is simplified again (its new subexpressions may
match further rules), so each expression reaches a fixpoint; a nesting limit stops a pair of rules that would undo
each other. Bounds, modular sets, substitutions of bound variables and constraints in scope come from the owning
:class:`kiln.arith.Analyzer`.

Memoization. What an expression simplifies to depends only on the expression, on what the analyzer knows (its
``_version`` changes with every new fact and every fact withdrawn) and, through the nesting limit, on how deep the
driver already is. So each result is remembered by the identity of the expression it came from, with the deepest
relative nesting level its computation checked, in a table of the analyzer's version. A scope left returns to the
version it was entered with, and so to its table; the tables live across calls (a TIR statement's expressions are
simplified one call each, under the same loop facts). A result is reused only where the same computation would not
have met the nesting limit either, and a computation that met the limit is not remembered, so memoized and fresh
simplification give the same expression. This makes re-simplifying shared subtrees (unrolled loop bodies share every
subexpression that does not use the unrolled variable), the driver's re-simplification of a rule's result, and the
Analyzer's fixpoint check nearly free. Structural keys, bounds and modular sets are memoized the same way; the tables
are dropped when they grow past :data:`MEMO_LIMIT` entries.
"""

from ..error import TIRError
from ..tir import expr as E
from ..tir import op as _op
from ..tir.functor import StmtExprMutator
from .linear import expr_key
from .rewrite_rules import RULES

_BUILDERS = {
    E.Add: _op.add, E.Sub: _op.subtract, E.Mul: _op.multiply, E.Div: _op.div, E.Mod: _op.truncmod,
    E.FloorDiv: _op.floordiv, E.FloorMod: _op.floormod, E.Min: _op.minimum, E.Max: _op.maximum,
    E.LT: _op.less, E.LE: _op.less_equal, E.GT: _op.greater, E.GE: _op.greater_equal, E.EQ: _op.equal,
    E.NE: _op.not_equal, E.And: _op.logical_and, E.Or: _op.logical_or,
}
_NESTING_LIMIT = 24
MEMO_LIMIT = 200_000
"""Entries a memo table holds before it is emptied (bounds the memory an Analyzer kept for long may hold)."""


def fold_constants(node, s):
    """Fold what the TVM-style builders fold: two constants, ``x + 0``, ``x * 1``, ``x * 0`` (integers), ``x / 1``."""
    build = _BUILDERS.get(type(node))
    if build is None:
        return None
    try:
        result = build(node.a, node.b)
    except TIRError:  # a constant division by zero stays as written; it fails where it runs
        return None
    return None if type(result) is type(node) else result


class RewriteSimplifier(StmtExprMutator):
    """Simplifies expressions bottom-up with the rule table; use through :class:`kiln.arith.Analyzer`."""

    def __init__(self, analyzer):
        self.analyzer = analyzer
        self.key_memo: dict = {}
        self.bound_memo: dict = {}
        self._mod_memo: dict = {}
        self._results: dict = {}  # id(expr) -> (expr, result, relative nesting depth checked)
        self._version = -1  # the analyzer version the version-dependent tables hold results for
        self._tables: dict = {}  # analyzer version -> (results, bounds, modular sets) of that version
        self._entries = 0  # entries in the tables of versions other than the current one
        self._nesting = 0
        self._peak = 0  # the deepest nesting level whose limit check the current computation made
        self._truncated = 0  # how many times the nesting limit cut a rewrite chain short

    def simplify(self, expr):
        """Simplify one expression (calls may nest, as when a constraint is simplified while an expression is)."""
        if len(self.key_memo) > MEMO_LIMIT:
            self.key_memo = {}
        return self.visit_expr(E.convert(expr))

    def _sync(self):
        """Switch to the tables of the analyzer's current version (a scope left gives back the tables of the
        version it was entered with); all are dropped once they hold :data:`MEMO_LIMIT` entries."""
        version = self.analyzer._version
        if self._version == version:
            if len(self._results) > MEMO_LIMIT:
                self._results, self.bound_memo, self._mod_memo = {}, {}, {}
                self._tables[version] = (self._results, self.bound_memo, self._mod_memo)
            return
        self._entries += len(self._results)
        if self._entries > MEMO_LIMIT:
            self._tables, self._entries = {}, 0
        tables = self._tables.get(version)
        if tables is None:
            tables = self._tables[version] = ({}, {}, {})
        else:
            self._entries -= len(tables[0])
        self._results, self.bound_memo, self._mod_memo = tables
        self._version = version

    # ---- services the rules use
    def key(self, e):
        return expr_key(e, self.key_memo)

    def bound(self, e):
        self._sync()
        return self.analyzer._cib._bound(e, self.bound_memo)

    def modular(self, e):
        self._sync()
        return self.analyzer._mod._eval(e, self._mod_memo)

    def known_fact(self, cond):
        """True/False when a constraint in scope decides ``cond``, else None."""
        return self.analyzer._known_fact(self.key(cond))

    def rebuilt_if_changed(self, node, new):
        return None if self.key(new) == self.key(node) else new

    # ---- the driver
    def visit_expr(self, expr):
        self._sync()
        level = self._nesting
        hit = self._results.get(id(expr))
        if hit is not None and level + hit[2] < _NESTING_LIMIT:
            self._peak = max(self._peak, level + hit[2])
            return hit[1]
        version, truncated, outer_peak = self._version, self._truncated, self._peak
        self._peak = level
        try:
            result = self._rewrite(super().visit_expr(expr))
        finally:
            peak = self._peak
            self._peak = max(outer_peak, peak)
        if self._truncated == truncated and self.analyzer._version == version:
            self._sync()
            self._results[id(expr)] = (expr, result, peak - level)  # the entry keeps expr alive: ids stay unique
        return result

    def _rewrite(self, node):
        rules = RULES.get(type(node))
        if rules is None:
            return node
        new = fold_constants(node, self)
        if new is None:
            for rule in rules:
                new = rule(node, self)
                if new is not None:
                    break
            else:
                return node
        self._peak = max(self._peak, self._nesting)
        if self._nesting >= _NESTING_LIMIT:
            self._truncated += 1
            return new
        self._nesting += 1
        try:
            return self.visit_expr(new)
        finally:
            self._nesting -= 1

    def visit_var(self, op):
        value = self.analyzer._substitution(op)
        if value is op and op.dtype in ("int32", "int64"):
            known = self.analyzer._cib.get(op)
            if known is not None and known.min_value == known.max_value:  # pinned by a constraint (x == 5)
                return E.IntImm(op.dtype, known.min_value)
        return value

    def visit_let(self, op):
        value = self.visit_expr(op.value)
        if isinstance(value, E.IntImm | E.Var):  # a trivial binding is substituted, as TVM's simplifier does
            with self.analyzer._temporary_binding(op.var, value):
                return self.visit_expr(op.body)
        with self.analyzer._temporary_bound(op.var, self.bound(value)):
            body = self.visit_expr(op.body)
        if value is op.value and body is op.body:
            return op
        return E.Let(op.var, value, body)

    def visit_call(self, op):
        if op.op.name == "tir.if_then_else":  # each branch is simplified knowing which way the condition went
            cond = self.visit_expr(op.args[0])
            with self.analyzer.constraint_scope(cond):
                then_value = self.visit_expr(op.args[1])
            with self.analyzer.constraint_scope(_op.logical_not(cond)):
                else_value = self.visit_expr(op.args[2])
            if cond is op.args[0] and then_value is op.args[1] and else_value is op.args[2]:
                return op
            return op.with_fields(args=(cond, then_value, else_value))
        return super().visit_call(op)
