"""Iterator maps: what detect_iter_map finds is the composition it claims (its expressions evaluate to the indices on
every point of the domain), a bijective map hits every point of its codomain once, subspace division recomposes to
the bindings with each side using only its own iterators, and the inverse inverts."""

import itertools

import numpy as np
import pytest

from kiln import arith, ir, tir
from kiln.error import TIRError
from kiln.tir.evaluator import evaluate_expr
from kiln.tir.stmt_functor import post_order_visit

fld, flm = tir.floordiv, tir.floormod


def _vars(*names):
    return [tir.Var(n, "int32") for n in names]


def _points(dom):
    keys = list(dom)
    for values in itertools.product(*(range(int(dom[k].min), int(dom[k].min) + int(dom[k].extent)) for k in keys)):
        yield dict(zip(keys, values, strict=True))


def _eval(expr, env):
    return int(evaluate_expr(expr, env))


def _uses(expr, var):
    found = []
    post_order_visit(expr, lambda e: found.append(e) if e is var else None)
    return bool(found)


x, y, z = _vars("x", "y", "z")
BIJECTIVE = [
    ([fld(x, 4), flm(x, 4)], {x: 24}),
    ([x * 4 + y, z], {x: 3, y: 4, z: 2}),
    ([fld(x * 6 + y, 4), flm(x * 6 + y, 4)], {x: 4, y: 6}),
    ([fld(y, 3) * 15 + fld(x, 2) * 3 + flm(y, 3), flm(x, 2)], {x: 10, y: 9}),  # split both, fuse three digits
    ([fld(x, 6), fld(flm(x, 6), 2), flm(x, 2)], {x: 24}),
    ([y * 3 + x + 5], {x: 3, y: 4}),
]


@pytest.mark.parametrize("indices, extents", BIJECTIVE, ids=[str(c[0]) for c in BIJECTIVE])
def test_bijective_map_is_the_claimed_composition(indices, extents):
    dom = {v: ir.Range(0, e) for v, e in extents.items()}
    res = arith.detect_iter_map(indices, dom, check_level="bijective")
    assert len(res.indices) == len(indices), res.errors
    exprs = [arith.normalize_iter_map_to_expr(s) for s in res.indices]
    images = set()
    for env in _points(dom):
        got = tuple(_eval(e, env) for e in exprs)
        assert got == tuple(_eval(i, env) for i in indices)
        images.add(tuple(g - _eval(s.base, env) for g, s in zip(got, res.indices, strict=True)))
    # bijective: the image is exactly the box of the sums' extents
    box = [int(s.args[0].extent) * int(s.args[0].scale) if s.args else 1 for s in res.indices]
    assert len(images) == int(np.prod([int(e) for e in extents.values()]))
    assert all(0 <= v < b for img in images for v, b in zip(img, box, strict=True))


FAILURES = [
    ([x, x + 1], {x: 8}, "surjective"),  # overlapping
    ([x * y], {x: 3, y: 4}, "surjective"),  # product of iterators
    ([y * 4 + x], {x: 3, y: 4}, "bijective"),  # a hole in the fused range
    ([x * 7 + y], {x: 3, y: 8}, "bijective"),  # overlapping fuse
    ([fld(x, 4)], {x: 16, y: 2}, "bijective"),  # y unused
    ([tir.max(x, 2)], {x: 8}, "surjective"),
]


@pytest.mark.parametrize("indices, extents, level", FAILURES, ids=[str(c[0]) for c in FAILURES])
def test_non_maps_are_refused_with_a_reason(indices, extents, level):
    res = arith.detect_iter_map(indices, {v: ir.Range(0, e) for v, e in extents.items()}, check_level=level)
    assert res.indices == []
    assert res.errors


def test_surjective_map_with_padding_evaluates_to_the_indices():
    dom = {x: ir.Range(0, 26)}
    indices = [flm(fld(x, 3), 5), flm(x, 3)]  # 26 is padded to 30; both digits are still reached
    res = arith.detect_iter_map(indices, dom)
    assert len(res.indices) == 2, res.errors
    for env in _points(dom):
        for s, i in zip(res.indices, indices, strict=True):
            assert _eval(arith.normalize_iter_map_to_expr(s), env) == _eval(i, env)
    assert arith.detect_iter_map(indices + [fld(x, 15)], dom).indices == []  # the top digit would overlap


def test_predicate_narrows_the_extent_to_the_values_taken():
    dom = {x: ir.Range(0, 13), y: ir.Range(0, 10)}
    index, pred = x * 10 + y, tir.all(x * 10 + y >= 6, x * 10 + y < 128)
    res = arith.detect_iter_map([index], dom, predicate=pred)
    assert len(res.indices) == 1, res.errors
    taken = {_eval(index, env) for env in _points(dom) if _eval(pred, env)}
    s = res.indices[0]
    assert int(s.args[0].extent) == len(taken)
    assert int(s.base) == min(taken)


def test_single_iterator_predicate_narrows_its_range():
    i = tir.Var("i", "int32")
    res = arith.detect_iter_map([i], {i: ir.Range(0, 48)}, predicate=i < 10)
    assert int(res.indices[0].args[0].extent) == 10


@pytest.mark.parametrize("sub", [[z], [y, z]], ids=["z", "yz"])
def test_subspace_divide_recomposes_the_bindings(sub):
    dom = {x: ir.Range(0, 4), y: ir.Range(0, 8), z: ir.Range(0, 2)}
    bindings = [x * 2 + fld(y, 4), flm(y, 4) * 2 + z]
    res = arith.subspace_divide(bindings, dom, sub)
    assert len(res) == len(bindings) + 1
    for (outer, inner), b in zip(res[:-1], bindings, strict=True):
        o = arith.normalize_iter_map_to_expr(outer.source)
        n = arith.normalize_iter_map_to_expr(inner.source)
        for v in dom:
            assert not (_uses(o, v) and v in sub) and not (_uses(n, v) and v not in sub)
        for env in _points(dom):
            assert _eval(o, env) * int(inner.extent) + _eval(n, env) == _eval(b, env)


def test_subspace_divide_refuses_mixed_digits():
    dom = {x: ir.Range(0, 4), y: ir.Range(0, 8), z: ir.Range(0, 2)}
    assert arith.subspace_divide([x * 2 + fld(y, 4), flm(y, 4) * 2 + z], dom, [x, z]) == []


@pytest.mark.parametrize("indices, extents", BIJECTIVE[:5], ids=[str(c[0]) for c in BIJECTIVE[:5]])
def test_inverse_inverts(indices, extents):
    dom = {v: ir.Range(0, e) for v, e in extents.items()}
    sums = arith.detect_iter_map(indices, dom, check_level="bijective").indices
    outputs = [tir.Var(f"o{k}", "int32") for k in range(len(sums))]
    inverse = arith.inverse_affine_iter_map(sums, outputs)
    for env in _points(dom):
        out_env = {o: _eval(i, env) for o, i in zip(outputs, indices, strict=True)}
        for v, e in inverse.items():
            assert _eval(e, out_env) == env[v]


def test_normalize_to_iter_sum_orders_scales_and_evaluates():
    n = tir.Var("n", "int64")
    a, b, c = (tir.Var(s, "int64") for s in "abc")
    index = c + (b + a * 4 + 2) * n + 3
    s = arith.normalize_to_iter_sum(index, {a: ir.Range(0, 9), b: ir.Range(0, 4), c: ir.Range(0, 3)})
    assert [int(arg.scale) if isinstance(arg.scale, tir.IntImm) else None for arg in s.args][-1] == 1
    rng = np.random.default_rng(0)
    for _ in range(20):
        env = {a: int(rng.integers(9)), b: int(rng.integers(4)), c: int(rng.integers(3)), n: int(rng.integers(1, 9))}
        assert _eval(arith.normalize_iter_map_to_expr(s), env) == _eval(index, env)


def test_iter_map_simplify_removes_split_and_fuse():
    dom = {x: ir.Range(0, 64)}
    assert arith.iter_map_simplify([fld(x, 8) * 8 + flm(x, 8)], dom)[0] is x
    kept = [x * x]
    assert arith.iter_map_simplify(kept, dom)[0] is kept[0]


def test_trivial_iterators_become_their_value():
    res = arith.detect_iter_map([x, y], {x: ir.Range(0, 1), y: ir.Range(0, 5)})
    assert res.indices[0].args == () and int(res.indices[0].base) == 0


def test_bad_arguments_raise_kiln_errors():
    with pytest.raises(TIRError, match="check level"):
        arith.detect_iter_map([x], {x: ir.Range(0, 4)}, check_level="total")
    with pytest.raises(TIRError, match="IterMark"):
        arith.IterSplitExpr(x, 1, 4, 1)
    with pytest.raises(TIRError, match="outputs"):
        arith.inverse_affine_iter_map([], [x])
    with pytest.raises(TIRError, match="IterSumExpr"):
        arith.inverse_affine_iter_map([x], [y])
