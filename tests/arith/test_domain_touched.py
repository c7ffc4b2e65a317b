"""domain_touched: the region equals the span of the indices enumerated over the loop nest; detect_common_subexpr
counts a computation where it occurs and its parts only when it is not common itself."""

import itertools

import pytest

from kiln import arith, tir
from kiln.error import TIRError
from kiln.script import tir as T
from kiln.tir.evaluator import evaluate_expr


@T.prim_func
def stencil(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (20, 12))
    B = T.match_buffer(b, (20, 12))
    for i, j in T.grid(18, 10):
        A[i + 1, j] = B[i, j * 1 + 2] + A[i, j + 1] * B[i + 2, j]


def _span(accesses, extents):
    values: list = [[], []]
    for access in accesses:
        for vi, vj in itertools.product(range(extents[0]), range(extents[1])):
            for d, e in enumerate(access(vi, vj)):
                values[d].append(e)
    return [(min(v), max(v) - min(v) + 1) for v in values]


@pytest.mark.parametrize("loads, stores, expect_a, expect_b", [
    (True, False, [lambda i, j: (i, j + 1)], [lambda i, j: (i, j + 2), lambda i, j: (i + 2, j)]),
    (False, True, [lambda i, j: (i + 1, j)], []),
    (True, True, [lambda i, j: (i, j + 1), lambda i, j: (i + 1, j)],
     [lambda i, j: (i, j + 2), lambda i, j: (i + 2, j)]),
])
def test_region_is_the_span_of_the_accesses(loads, stores, expect_a, expect_b):
    a, b = (stencil.buffer_map[p] for p in stencil.params)
    for buf, expect in ((a, expect_a), (b, expect_b)):
        got = arith.domain_touched(stencil.body, buf, loads, stores)
        want = _span(expect, (18, 10)) if expect else []
        assert [(int(r.min), int(r.extent)) for r in got] == want


def test_domain_touched_needs_loads_or_stores():
    with pytest.raises(TIRError, match="loads, stores"):
        arith.domain_touched(stencil.body, stencil.buffer_map[stencil.params[0]], False, False)


def test_common_subexpressions_are_counted_as_cse_sees_them():
    x, y, z = (tir.Var(n, "int32") for n in "xyz")
    f = (x + y) * 3
    expr = f + x + z * ((x + y) * 3)
    found = arith.detect_common_subexpr(expr, 2)
    assert list(found.values()) == [2] and next(iter(found)) is f
    assert arith.detect_common_subexpr(expr, 3) == {}
    assert arith.detect_common_subexpr(f + f, 1) == {f + f: 1} or len(arith.detect_common_subexpr(f + f, 1)) == 1
    env = {x: 2, y: 5, z: 7}
    for sub in found:
        assert int(evaluate_expr(sub, env)) == 21
