"""kiln/tir/dtype_semantics.py and the TIR builders that follow it: saturating bool arithmetic, wrap-around,
float16 computed in float32, and index arithmetic promoted to the wider type when a rewrite mixes widths."""

import numpy as np
import pytest

from kiln import tir
from kiln.tir import expr as E
from kiln.tir.dtype_semantics import compute_dtype, overflow_is_undefined, promoted_by_c, wrap_int
from kiln.tir.evaluator import evaluate_expr
from kiln.tir.stmt_functor import substitute


def test_compute_dtype_widens_only_float16():
    assert compute_dtype("float16") == "float32"
    assert compute_dtype("float16x16") == "float32x16"
    assert [compute_dtype(d) for d in ("float32", "float64", "int8", "bool")] == ["float32", "float64", "int8", "bool"]


@pytest.mark.parametrize("value, dtype, wrapped", [(200, "int8", -56), (-1, "uint8", 255), (2**31, "int32", -2**31),
                                                   (2**64 + 3, "uint64", 3), (2, "bool", 1), (0, "bool", 0)])
def test_wrap_int(value, dtype, wrapped):
    assert wrap_int(value, dtype) == wrapped


def test_which_types_c_promotes_and_which_may_not_overflow():
    assert [promoted_by_c(d) for d in ("bool", "int8", "uint16", "int32", "uint32", "int8x16")] == [
        True, True, True, False, False, False]
    assert [overflow_is_undefined(d) for d in ("int32", "int64", "int32x4", "uint32", "int8", "bool")] == [
        True, True, True, False, False, False]


def test_bool_arithmetic_saturates():
    a, b = tir.Var("a", "bool"), tir.Var("b", "bool")
    assert isinstance(a + b, E.Or) and isinstance(a * b, E.And)
    assert isinstance(tir.max(a, b), E.Or) and isinstance(tir.min(a, b), E.And)
    assert isinstance(tir.bitwise_not(a), E.Not)
    assert (tir.const(True, "bool") + tir.const(True, "bool")).value == 1  # not 2, not 0 (parity)
    x = tir.Var("x", "int8")
    assert isinstance(x + x, E.Add)  # other dtypes keep their arithmetic


def test_constant_folding_wraps():
    assert tir.bitwise_not(tir.const(5, "uint8")).value == 250
    assert (tir.const(100, "int8") + tir.const(100, "int8")).value == -56


def test_a_wider_index_substituted_into_narrower_arithmetic_promotes_it():
    """Inlining an int64 ``take`` index into a producer indexed by int32 loop variables (issue #10.7)."""
    j = tir.Var("j", "int32")
    k = tir.Var("k", "int64")
    body = E.Add(E.Mul(j, E.IntImm("int32", 5)), E.IntImm("int32", 1))
    cond = E.Select(E.GE(j, E.IntImm("int32", 0)), j, E.IntImm("int32", 0))
    new = substitute(body, {j: k + 1})
    assert new.dtype == "int64" and new.a.dtype == "int64"
    assert substitute(cond, {j: k}).dtype == "int64"
    assert evaluate_expr(new, {k: np.int64(2**33)}) == (2**33 + 1) * 5 + 1  # nothing narrowed to int32 on the way
