"""The rule tables of TVM's rewrite simplifier (:mod:`kiln.arith.pattern_simplify`), one module per family of node
kinds: each table is a sequence of ``(guard, rules)`` sections, a rule a function ``rule(node, s) -> expr | None``
(most built by :func:`kiln.arith.pattern.rewrite` from a source and a result pattern)."""

from ...tir import expr as E
from .add_sub import ADD, SUB
from .floor import FLOORDIV, FLOORMOD
from .logical import AND, OR
from .min_max import MAX, MIN
from .mul_div import DIV, MOD, MUL

RULES = {
    E.Add: ADD, E.Sub: SUB, E.Mul: MUL, E.Div: DIV, E.Mod: MOD, E.FloorDiv: FLOORDIV, E.FloorMod: FLOORMOD,
    E.Min: MIN, E.Max: MAX, E.And: AND, E.Or: OR,
}
"""Node kind -> its rule table."""
