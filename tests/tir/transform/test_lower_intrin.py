"""Tests of kiln/tir/transform/lower_intrin.py: expansions are accurate, floor division becomes C division."""

import math

import numpy as np
import pytest

from kiln import tir
from kiln.tir.analysis import stmt_contains
from kiln.tir.evaluator import evaluate
from kiln.tir.transform import LowerIntrin


def _unary(helpers, builder, n=256, lanes=1):
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    i = tir.Var("i", "int32")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    if lanes > 1:
        idx = tir.Ramp(i * lanes, 1, lanes)
        body = tir.For(i, 0, n // lanes, tir.ForKind.SERIAL, tir.BufferStore(B, builder(A[idx]), [idx]))
    else:
        body = tir.For(i, 0, n, tir.ForKind.SERIAL, tir.BufferStore(B, builder(A[i]), [i]))
    return helpers.make_func([a, b], body, {a: A, b: B})


REFERENCES = {
    "exp": np.exp, "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh, "erf": np.vectorize(math.erf),
    "rsqrt": lambda x: 1 / np.sqrt(x), "log1p": np.log1p, "exp10": lambda x: 10.0 ** x, "tan": np.tan,
    "sinh": np.sinh, "cosh": np.cosh, "round": np.rint,
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("lanes", [1, 4])
def test_expansions_match_numpy(helpers, name, lanes):
    before = _unary(helpers, getattr(tir, name), lanes=lanes)
    after = helpers.run_pass(LowerIntrin(), before)
    assert not stmt_contains(after.body, lambda n: isinstance(n, tir.Call) and n.op.name == f"tir.{name}")
    x = np.linspace(-6, 6, 256).astype("float32")
    if name in ("rsqrt", "log1p"):
        x = np.abs(x) + 0.01
    y = np.zeros_like(x)
    evaluate(after, x, y)
    np.testing.assert_allclose(y, REFERENCES[name](x.astype("float64")), rtol=2e-6, atol=2e-6)


def test_predicates():
    f = tir.Var("f", "float32")
    from kiln.tir.evaluator import evaluate_expr
    from kiln.tir.transform.lower_intrin import lower_isfinite, lower_isinf, lower_isnan

    for value in (1.0, float("nan"), float("inf"), -float("inf")):
        assert bool(evaluate_expr(lower_isnan(f), {f: value})) == math.isnan(value)
        assert bool(evaluate_expr(lower_isinf(f), {f: value})) == math.isinf(value)
        assert bool(evaluate_expr(lower_isfinite(f), {f: value})) == math.isfinite(value)


def test_floor_division_becomes_truncating(helpers):
    A = tir.decl_buffer((64,), "int32", "A")
    B = tir.decl_buffer((64,), "int32", "B")
    C = tir.decl_buffer((64,), "int32", "C")
    i = tir.Var("i", "int32")
    a, b, c = tir.Var("a", "handle"), tir.Var("b", "handle"), tir.Var("c", "handle")
    body = tir.For(i, 0, 64, tir.ForKind.SERIAL, tir.stmt_seq(
        tir.BufferStore(B, tir.floordiv(A[i], 7) + tir.floormod(A[i], -5) + tir.floordiv(i, 8), [i]),
        tir.BufferStore(C, tir.floormod(A[i], A[(i + 1) % 64] * 0 + 6) + tir.floordiv(A[i], tir.max(A[i], 1)), [i]),
    ))
    before = helpers.make_func([a, b, c], body, {a: A, b: B, c: C})
    after = helpers.run_pass(LowerIntrin(), before)
    assert not stmt_contains(after.body, lambda n: isinstance(n, tir.FloorDiv | tir.FloorMod))
    # i // 8 with i >= 0 needs no correction
    assert stmt_contains(after.body, lambda n: isinstance(n, tir.Div) and n.a is i)
    for seed in range(3):
        helpers.assert_same_results(before, after, seed=seed)


def test_float_floor_division(helpers):
    A = tir.decl_buffer((16,), "float32", "A")
    i = tir.Var("i", "int32")
    a = tir.Var("a", "handle")
    body = tir.For(i, 0, 16, tir.ForKind.SERIAL, tir.BufferStore(A, tir.floormod(A[i], 0.75) + tir.floordiv(A[i], 0.5),
                                                                [i]))
    before = helpers.make_func([a], body, {a: A})
    after = helpers.run_pass(LowerIntrin(), before)
    assert not stmt_contains(after.body, lambda n: isinstance(n, tir.FloorDiv | tir.FloorMod))
    helpers.assert_same_results(before, after)


def test_llvm_target_contracts_fma_and_names_llvm_intrinsics(helpers):
    import kiln
    from kiln.ir import IRModule
    from kiln.tir.transform import Apply

    n = 8
    A, B, C, D = (tir.decl_buffer((n,), "float32", name) for name in "ABCD")
    i = tir.Var("i", "int32")
    body = tir.For(i, 0, n, tir.ForKind.SERIAL,
                   tir.BufferStore(D, A[i] * B[i] + tir.sqrt(C[i]), [i]))
    params = [tir.Var(x, "handle") for x in "abcd"]
    func = helpers.make_func(params, body, dict(zip(params, (A, B, C, D), strict=True)))
    plain = LowerIntrin()(IRModule({"main": func}))["main"]
    assert isinstance(plain.body.body.value, tir.Add)  # no target: left for the backend
    llvm = kiln.transform.Sequential([Apply(lambda f: f.with_attr("target", "llvm")), LowerIntrin()])
    lowered = llvm(IRModule({"main": func}))["main"]
    fma = lowered.body.body.value
    assert fma.op.name == "tir.call_llvm_pure_intrin" and fma.args[0].value == "llvm.fma.f32"
    assert fma.args[3].op.name == "tir.call_llvm_pure_intrin" and fma.args[3].args[0].value == "llvm.sqrt.f32"
