"""Tests of kiln/ir/oracle.py: random arguments from types and the one comparison of results."""

import re

import numpy as np
import pytest

from kiln.error import KilnError
from kiln.ir import FuncType, TensorType, TupleType
from kiln.ir.oracle import compare_results, flatten_results, random_arguments
from kiln.runtime.ndarray import array


def test_random_arguments_by_type_and_seed():
    types = [("%x", TensorType((2, 3))), ("%t", TupleType([TensorType((4,), "int8"), TensorType((), "bool")]))]
    x, (i, b) = random_arguments(types, seed=1)
    assert (x.dtype, x.shape, i.dtype, i.shape, b.dtype, b.shape) == (np.float32, (2, 3), np.int8, (4,), np.bool_, ())
    again = random_arguments(types, seed=1)
    assert np.array_equal(again[0], x) and not np.array_equal(random_arguments(types, seed=2)[0], x)


@pytest.mark.parametrize(
    "ttype,message",
    [
        (FuncType([], TensorType((1,))), "for %p: its type .* is not a tensor type"),
        (TensorType((2,), "float32x4"), "for %p of dtype float32x4"),
        (TupleType([TensorType((1,)), TensorType((1,), "handle")]), r"for %p\[1\] of dtype handle"),
    ],
)
def test_random_arguments_name_what_they_cannot_make(ttype, message):
    with pytest.raises(KilnError, match=message):
        random_arguments([("%p", ttype)])


def test_flatten_results_keeps_order_and_converts():
    a, b, c = np.zeros(1), np.ones(2), np.full(3, 2.0)
    flat = flatten_results((a, [array(b), (c,)]))
    assert [f.shape for f in flat] == [(1,), (2,), (3,)] and all(isinstance(f, np.ndarray) for f in flat)


def test_compare_results_agrees_within_tolerance():
    x = np.linspace(0, 1, 6, dtype="float32").reshape(2, 3)
    assert compare_results((x, np.arange(3)), (x + 1e-7, np.arange(3))) is None
    assert compare_results(np.array([np.nan]), np.array([np.nan])) is None


@pytest.mark.parametrize(
    "expected,actual,message",
    [
        ((np.zeros(2), np.ones(2)), (np.zeros(2),), r"1 output\(s\) instead of 2"),
        (np.zeros(2), (np.zeros(2), np.zeros(2)), r"2 output\(s\) instead of 1"),
        (np.zeros(2, "float32"), np.zeros(2, "float64"), r"output 0 is float64\[2\] instead of float32\[2\]"),
        (np.zeros((2, 3)), np.zeros((3, 2)), r"output 0 is float64\[3, 2\] instead of float64\[2, 3\]"),
        (np.array([1, 2, 3]), np.array([1, 2, 4]), r"output 0 differs at index \[2\]: 4 instead of 3 \(1 of 3"),
        (np.zeros(4), np.array([0, 0, 1e-3, 0]), r"differs at index \[2\].*rtol=1e-05, atol=1e-05"),
    ],
)
def test_compare_results_names_the_first_difference(expected, actual, message):
    problem = compare_results(expected, actual)
    assert problem is not None
    assert re.search(message, problem), problem
