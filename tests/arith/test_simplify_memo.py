"""The simplifier's memo (kiln/arith/rewrite_simplify.py) and the analyzer's versions (kiln/arith/analyzer.py):
memoized simplification gives exactly what a fresh analyzer gives, across shared subtrees, scopes, let bindings and
the nesting limit."""

import random

import pytest

from kiln import arith, tir
from kiln.arith import rewrite_simplify

x, y, z = tir.Var("x", "int32"), tir.Var("y", "int32"), tir.Var("z", "int32")


def random_expr(rng, depth):
    """A random integer expression over x, y, z (sums, products, floor and trunc division, min/max, selects)."""
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([x, y, z]) if rng.random() < 0.6 else tir.const(rng.randint(-8, 8))
    a, b = random_expr(rng, depth - 1), random_expr(rng, depth - 1)
    c = tir.const(rng.choice([1, 2, 3, 4, 8, 16]))
    build = rng.choice([
        lambda: tir.Add(a, b), lambda: tir.Sub(a, b), lambda: tir.Mul(a, tir.const(rng.randint(-4, 4))),
        lambda: tir.FloorDiv(a, c), lambda: tir.FloorMod(a, c), lambda: tir.Min(a, b), lambda: tir.Max(a, b),
        lambda: tir.Select(tir.LT(a, b), a, b), lambda: tir.Div(a, c), lambda: tir.Mod(a, c), lambda: tir.Mul(a, b),
    ])
    return build()


def random_cond(rng, depth):
    compare = rng.choice([tir.LT, tir.LE, tir.GT, tir.GE, tir.EQ, tir.NE])
    cond = compare(random_expr(rng, depth), random_expr(rng, depth))
    if rng.random() < 0.3:
        other = rng.choice([tir.LT, tir.EQ])(random_expr(rng, 1), random_expr(rng, 1))
        return rng.choice([tir.And, tir.Or])(cond, other)
    return cond


def fresh(expr, ranges):
    ana = arith.Analyzer()
    for var, (lo, hi) in ranges.items():
        ana.bind(var, tir.Range(lo, hi))
    return ana.simplify(expr)


def shared_expressions(rng, count):
    """Random expressions built over a pool of shared subexpressions (as unrolled loop bodies are)."""
    pool = [random_expr(rng, 2) for _ in range(6)]
    out = []
    for _ in range(count):
        a, b = rng.choice(pool), rng.choice(pool)
        out.append(rng.choice([tir.Add, tir.Sub, tir.Min, tir.Max])(a, b) if rng.random() < 0.7
                   else tir.Select(random_cond(rng, 1), a, b))
        pool.append(out[-1])
    return out


@pytest.mark.parametrize("seed", range(4))
def test_memoized_equals_fresh(seed):
    rng = random.Random(seed)
    ranges = {x: (0, 16), y: (-4, 4)}
    ana = arith.Analyzer()
    for var, (lo, hi) in ranges.items():
        ana.bind(var, tir.Range(lo, hi))
    for expr in shared_expressions(rng, 40):
        assert arith.expr_key(ana.simplify(expr)) == arith.expr_key(fresh(expr, ranges)), str(expr)


def test_memo_respects_the_nesting_limit(monkeypatch):
    """Rewrite chains are cut short at the nesting limit, so a result computed at the top level must not be reused
    where its computation would have hit the limit. Two synthetic rule chains: ``floordiv(a, k) -> floordiv(a, k-1)``
    down to 1, and ``min(a, k) -> min(a, k-1)`` down to 100, where it becomes the original ``floordiv(x, 3)``, met
    again two levels deep."""
    inner = tir.FloorDiv(x, tir.const(3))

    def countdown_div(node, s):
        k = node.b.value
        return tir.FloorDiv(node.a, tir.const(k - 1)) if k > 1 else None

    def countdown_min(node, s):
        k = node.b.value
        return tir.Min(node.a, tir.const(k - 1)) if k > 100 else inner if k == 100 else None

    monkeypatch.setattr(rewrite_simplify, "RULES", {tir.FloorDiv: (countdown_div,), tir.Min: (countdown_min,)})
    monkeypatch.setattr(rewrite_simplify, "_NESTING_LIMIT", 3)
    outer = tir.Min(y, tir.const(101))
    ana = arith.Analyzer()
    assert str(ana.rewrite_simplify(inner)) == str(fresh_rewrite(inner))  # memoized at the top level
    assert str(ana.rewrite_simplify(outer)) == str(fresh_rewrite(outer))  # inner met at level 2: cut short there
    assert str(fresh_rewrite(outer)) != str(fresh_rewrite(inner))
    ana = arith.Analyzer()  # the other order: a result cut short must not be remembered for the top level
    assert str(ana.rewrite_simplify(outer)) == str(fresh_rewrite(outer))
    assert str(ana.rewrite_simplify(inner)) == str(fresh_rewrite(inner))


def fresh_rewrite(expr):
    return arith.Analyzer().rewrite_simplify(expr)


def test_scopes_give_back_their_version_and_memo():
    ana = arith.Analyzer()
    ana.bind(x, tir.Range(0, 16))
    expr = tir.Min(x, tir.const(4))
    assert str(ana.simplify(expr)) == str(expr)
    before = ana._version
    with ana.constraint_scope(tir.LT(x, tir.const(4))):
        assert ana._version != before
        assert ana.simplify(expr) is x  # known inside the scope only
    assert ana._version == before  # the knowledge is what it was: so is the version
    assert str(ana.simplify(expr)) == str(expr)  # the scope's result did not leak out


def test_lasting_fact_inside_a_scope_gets_a_new_version():
    ana = arith.Analyzer()
    before = ana._version
    with ana.constraint_scope(tir.LT(y, tir.const(4))):
        ana.bind(z, tir.Range(0, 2))
    assert ana._version not in (before,)
    assert ana.can_prove(tir.LT(z, tir.const(2)))  # the lasting fact stays


def test_let_substitution_does_not_leak():
    v = tir.Var("v", "int32")
    ana = arith.Analyzer()
    body = tir.Add(v, y)
    let = tir.Let(v, tir.const(3), body)
    assert arith.expr_key(ana.simplify(let)) == arith.expr_key(y + 3)
    assert ana.simplify(body) is body  # outside the let, v is free again


def test_memo_tables_are_bounded(monkeypatch):
    monkeypatch.setattr(rewrite_simplify, "MEMO_LIMIT", 10)
    ana = arith.Analyzer()
    ana.bind(x, tir.Range(0, 16))
    rng = random.Random(7)
    for expr in shared_expressions(rng, 30):
        assert arith.expr_key(ana.simplify(expr)) == arith.expr_key(fresh(expr, {x: (0, 16)}))
        with ana.constraint_scope(tir.LT(x, tir.const(8))):
            ana.simplify(expr)
    simp = ana._simplifier
    assert len(simp._results) <= 10 + 64 and simp._entries <= 10 + 64 and len(simp.key_memo) < 10_000


def test_the_same_scope_entered_again_shares_its_version():
    ana = arith.Analyzer()
    ana.bind(x, tir.Range(0, 16))
    versions = []
    for bound in (4, 4, 5):
        with ana.constraint_scope(tir.LT(x, tir.const(bound))):
            versions.append(ana._version)
            assert arith.expr_key(ana.simplify(tir.Min(x, tir.const(bound)))) == arith.expr_key(x)
    assert versions[0] == versions[1] != versions[2]
    ana.bind(y, tir.Range(0, 4))  # a lasting fact: the same scope now leads elsewhere
    with ana.constraint_scope(tir.LT(x, tir.const(4))):
        assert ana._version != versions[0]


@pytest.mark.parametrize("seed", range(3))
def test_memoized_equals_fresh_under_scopes(seed):
    rng = random.Random(50 + seed)
    ana = arith.Analyzer()
    ana.bind(x, tir.Range(0, 16))
    conds = [random_cond(rng, 1) for _ in range(3)]
    for expr in shared_expressions(rng, 30):
        cond = rng.choice(conds)
        with ana.constraint_scope(cond):
            got = ana.simplify(expr)
        other = arith.Analyzer()
        other.bind(x, tir.Range(0, 16))
        with other.constraint_scope(cond):
            want = other.simplify(expr)
        assert arith.expr_key(got) == arith.expr_key(want), f"{expr} under {cond}"
