"""kiln/tir/transform/fp16_compute_legalize.py: float16 arithmetic computed in float32, rounded after each operation."""

import numpy as np

from kiln import tir
from kiln.tir import expr as E
from kiln.tir.analysis import stmt_contains
from kiln.tir.evaluator import evaluate
from kiln.tir.transform import FP16ComputeLegalize


def _func(helpers, lanes):
    A, B, C = (tir.decl_buffer((64,), dtype, name) for name, dtype in (("A", "float16"), ("B", "float16"),
                                                                       ("C", "float16")))
    D = tir.decl_buffer((64,), "bool", "D")
    i = tir.Var("i", "int32")
    idx = tir.Ramp(i * lanes, 1, lanes) if lanes > 1 else i
    a, b = A[idx], B[idx]
    value = tir.exp(tir.max(a * b + a, b) / b)
    body = tir.For(i, 0, 64 // lanes, tir.ForKind.SERIAL, tir.SeqStmt([
        tir.BufferStore(C, value, [idx]), tir.BufferStore(D, a < b, [idx])]))
    params = [tir.Var(n, "handle") for n in "abcd"]
    return helpers.make_func(params, body, dict(zip(params, (A, B, C, D), strict=True)))


def _half_arithmetic(node):
    arithmetic = (E.Add, E.Sub, E.Mul, E.Div, E.Min, E.Max, E.LT)
    return (isinstance(node, arithmetic) and node.a.dtype.startswith("float16")) or (
        isinstance(node, E.Call) and node.op.name == "tir.exp" and node.dtype.startswith("float16"))


def test_every_float16_operation_computes_in_float32_and_rounds(helpers):
    for lanes in (1, 8):
        before = _func(helpers, lanes)
        after = helpers.run_pass(FP16ComputeLegalize(), before)
        assert stmt_contains(before.body, _half_arithmetic)
        assert not stmt_contains(after.body, _half_arithmetic)
        rng = np.random.default_rng(lanes)
        a, b = rng.uniform(0.5, 2, 64).astype("float16"), rng.uniform(0.5, 2, 64).astype("float16")
        c, d = np.zeros(64, "float16"), np.zeros(64, bool)
        evaluate(after, a, b, c, d)
        # numpy's float16 ufuncs round after every operation too
        np.testing.assert_array_equal(c, np.exp(np.maximum(a * b + a, b) / b))
        np.testing.assert_array_equal(d, a < b)


def test_other_dtypes_are_left_alone(helpers):
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i", "int32")
    a = tir.Var("a", "handle")
    func = helpers.make_func([a], tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.BufferStore(A, A[i] * A[i], [i])), {a: A})
    assert helpers.run_pass(FP16ComputeLegalize(), func).body is func.body
