"""Reductions, scans and topk (kiln/topi/reduction.py, scan.py, sort.py) against the numpy reference."""

import numpy as np
import pytest

from kiln import te, topi
from kiln.relay.op import attrs as A


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_reductions(harness, target, dtype):
    x = harness.rand((3, 4, 5, 6), dtype, -9, 9)
    variants = [(None, False, False), ((1,), False, False), ((1, 3), True, False), ((-1,), False, True),
                ((0, 2), True, True), ((2,), False, False)]
    cases = []
    for name in ("sum", "mean", "max", "min", "prod"):
        for axis, keepdims, exclude in variants:
            data = x if name != "prod" else (x % 3 + 1 if dtype == "int32" else x / 8)
            cases.append(harness.Case(name, [data], A.ReduceAttrs(axis, keepdims, exclude),
                                      label=f"{name} {axis} keep={keepdims} excl={exclude}", rtol=1e-5, atol=1e-4))
    harness.run_cases(cases, target)


def test_arg_reductions_ties(harness, target):
    x = harness.rand((3, 4, 5), "int32", 0, 3)  # many ties
    cases = []
    for name in ("argmax", "argmin"):
        for axis, keepdims, exclude, last in [(None, False, False, False), ((1,), False, False, False),
                                              ((1,), True, False, True), ((0, 2), False, False, False),
                                              ((2,), False, True, True)]:
            cases.append(harness.Case(name, [x], A.ArgReduceAttrs(axis, keepdims, last, exclude),
                                      label=f"{name} {axis} keep={keepdims} last={last} excl={exclude}"))
    lowest = np.full((2, 3), np.finfo("float32").min, "float32")
    cases.append(harness.Case("argmax", [lowest], A.ArgReduceAttrs((1,)), label="argmax of the lowest value"))
    harness.run_cases(cases, target)


def test_scans_and_topk(harness, target):
    x = harness.rand((3, 7), "float32")
    i = harness.rand((2, 6), "int32", -3, 4)
    cases = [
        harness.Case("cumsum", [x], A.ScanopAttrs(1), label="cumsum axis 1"),
        harness.Case("cumsum", [x], A.ScanopAttrs(None, "float64", True), label="cumsum flat exclusive"),
        harness.Case("cumprod", [i], A.ScanopAttrs(0, "int64"), label="cumprod int64"),
        harness.Case("cumprod", [x], A.ScanopAttrs(-1, "", True), label="cumprod exclusive"),
        harness.Case("topk", [i], A.TopKAttrs(3, 1), label="topk ties"),
        harness.Case("topk", [i], A.TopKAttrs(0, 1, "both", True, "int64"), label="topk all ascending"),
        harness.Case("topk", [x], A.TopKAttrs(2, 0, "values"), label="topk values"),
        harness.Case("topk", [x], A.TopKAttrs(4, -1, "indices", False, "int32"), label="topk indices"),
    ]
    harness.run_cases(cases, target)


def test_reduce_axes_and_tags():
    x = te.placeholder((2, 3, 4), name="x")
    assert topi.reduction.reduce_axes(3, (0, -1), exclude=True) == [1]
    assert topi.sum(x, axis=1).op.tag == "comm_reduce"
    assert topi.argmax(x, axis=2).op.tag == "comm_reduce_idx"
    assert [int(d) for d in topi.mean(x, axis=(0, 2), keepdims=True).shape] == [1, 3, 1]
    f16 = te.placeholder((4, 8), "float16", name="h")
    out = topi.sum(f16, axis=1)
    assert out.dtype == "float16" and out.op.input_tensors[0].dtype == "float32"
