"""Every rule of kiln/arith/rules/ is an identity: each source pattern is instantiated with random operands and
constants, the rule applied alone, and both sides evaluated on random values of the variables inside their bounds."""

import random

import numpy as np
import pytest

from kiln import arith, tir
from kiln.arith import pattern as P
from kiln.arith.pattern_simplify import PatternSimplifier
from kiln.arith.rules import RULES
from kiln.arith.rules.compare import EQ_RULES, LT_RULES, NOT_RULES
from kiln.error import KilnError
from kiln.tir import expr as E
from kiln.tir.evaluator import evaluate_expr

X, Y, Z = tir.Var("x", "int32"), tir.Var("y", "int32"), tir.Var("z", "int32")
RANGES = ({X: (-6, 13), Y: (0, 10), Z: (1, 7)}, {X: (0, 17), Y: (-5, 11), Z: (-3, 4)})
CONSTS = (-4, -2, -1, 1, 2, 3, 4, 6, 8)
_BOOL_KINDS = (E.And, E.Or, E.Not)


def _leaf(rng):
    v = rng.choice((X, Y, Z))
    r = rng.random()
    if r < 0.5:
        return v
    if r < 0.7:
        return v + rng.choice(CONSTS)
    if r < 0.85:
        return v * rng.choice(CONSTS)
    return tir.const(rng.choice(CONSTS + (0, 5, 7)))


def _cond(rng):
    return rng.choice((E.LT, E.LE, E.EQ, E.NE))(_leaf(rng), _leaf(rng))


def _instantiate(p, rng, bound, want_bool=False):
    """A random expression matching pattern ``p`` (placeholders bound once, consistently)."""
    if isinstance(p, P.PVar):
        if p.name not in bound:
            if p.name == "lanes":
                bound[p.name] = 4
            elif p.kind is E.IntImm:
                bound[p.name] = tir.const(rng.choice(CONSTS))
            elif p.kind is E.FloatImm:
                bound[p.name] = tir.const(rng.choice((0.0, 1.5)), "float32")
            else:
                bound[p.name] = _cond(rng) if want_bool else _leaf(rng)
        return bound[p.name]
    if isinstance(p, P.Lit):
        return tir.const(p.value, "int32")
    if isinstance(p, P.Const):
        return p.expr
    assert isinstance(p, P.Node)
    kind = p.kind
    if kind in (E.Ramp, E.Broadcast):
        args = [_instantiate(a, rng, bound) for a in p.args[:-1]]
        return kind(*args, _instantiate(p.args[-1], rng, bound))
    boolean = kind in _BOOL_KINDS
    if kind is E.Select:
        return E.Select(_instantiate(p.args[0], rng, bound, True), *(_instantiate(a, rng, bound) for a in p.args[1:]))
    return kind(*(_instantiate(a, rng, bound, boolean) for a in p.args))


def _value(e, env):
    v = evaluate_expr(e, env)
    return np.asarray(v).astype(np.int64)


def _all_rules():
    tables = list(RULES.items()) + [(E.EQ, EQ_RULES), (E.LT, LT_RULES), (E.Not, NOT_RULES)]
    for kind, table in tables:
        for _, rules in table:
            for i, rule in enumerate(rules):
                if hasattr(rule, "sources"):
                    yield pytest.param(rule, len(kind.__name__) * 1000 + i, id=f"{kind.__name__}-{i}")


TRIALS = 60


@pytest.mark.parametrize(("rule", "seed"), list(_all_rules()))
def test_rule_is_an_identity(rule, seed):
    rng = random.Random(seed)
    fired = 0
    for trial in range(TRIALS):
        ranges = RANGES[trial % 2]
        ana = arith.Analyzer()
        for var, (lo, hi) in ranges.items():
            ana.bind(var, tir.Range(lo, hi))
        src = rule.sources[trial % len(rule.sources)]
        try:
            node = _instantiate(src, rng, {})
        except KilnError:  # operands of the wrong kind for this node (a bool where an int goes)
            continue
        if src.match(node) is None:  # the constructor folded or reshaped it
            continue
        try:
            out = rule(node, PatternSimplifier(ana))
        except KilnError:
            continue
        if out is None:
            continue
        fired += 1
        for _ in range(8):
            env = {v: rng.randrange(lo, hi) for v, (lo, hi) in ranges.items()}
            try:
                before = _value(node, env)
            except KilnError:  # division by zero on this assignment
                continue
            after = _value(out, env)
            assert np.array_equal(before, after), f"{node} -> {out} at {env}: {before} != {after}"
    if not fired:
        pytest.skip("no random instance met the rule's condition")
