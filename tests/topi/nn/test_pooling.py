"""Pooling (kiln/topi/nn/pooling.py, x86/pooling.py) in NCHW, NHWC and NCHW16c against the numpy reference."""

import re

import pytest

import kiln
from kiln import te
from kiln.ir import TensorType
from kiln.relay.backend.schedule_builder import ScheduleBuilder
from kiln.relay.op.attrs import AvgPool2DAttrs, GlobalPool2DAttrs, MaxPool2DAttrs


def _variants():
    # (pool_size, strides, dilation, padding, ceil_mode)
    return [((3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False), ((2, 2), (2, 2), (1, 1), (0, 0, 0, 0), True),
            ((3, 2), (1, 2), (2, 1), (1, 0, 2, 1), True), ((2, 3), (3, 2), (1, 1), (0, 1, 0, 0), False)]


@pytest.mark.parametrize("layout,shape", [("NCHW", (2, 3, 9, 10)), ("NHWC", (1, 9, 10, 16)),
                                          ("NCHW16c", (1, 2, 7, 8, 16))])
def test_pool2d(harness, target, layout, shape):
    x = harness.rand(shape, "float32", -5, 5)
    cases = []
    for k, (size, strides, dil, pad, ceil) in enumerate(_variants()):
        cases.append(harness.Case("nn.max_pool2d", [x], MaxPool2DAttrs(size, strides, dil, pad, layout, "", ceil),
                                  label=f"max {layout} #{k}"))
        for include in (False, True):
            cases.append(harness.Case("nn.avg_pool2d", [x],
                                      AvgPool2DAttrs(size, strides, dil, pad, layout, "", ceil, include),
                                      label=f"avg {layout} #{k} include_pad={include}"))
    cases += [harness.Case("nn.global_avg_pool2d", [x], GlobalPool2DAttrs(layout), label=f"global avg {layout}"),
              harness.Case("nn.global_max_pool2d", [x], GlobalPool2DAttrs(layout), label=f"global max {layout}")]
    harness.run_cases(cases, target)


def test_pool2d_int_and_out_layout(harness, target):
    x = harness.rand((1, 4, 7, 7), "int32", -50, 50)
    cases = [
        harness.Case("nn.avg_pool2d", [x], AvgPool2DAttrs((3, 3), (2, 2), (1, 1), (1, 1, 1, 1)), label="avg int"),
        harness.Case("nn.global_avg_pool2d", [x], GlobalPool2DAttrs("NCHW"), label="global avg int"),
        harness.Case("nn.max_pool2d", [x.astype("float32")],
                     MaxPool2DAttrs((2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "NCHW", "NHWC"), label="max out NHWC"),
    ]
    harness.run_cases(cases, target)


@pytest.mark.parametrize("target,lanes", [("llvm -mcpu=skylake-avx512", 16), ("llvm -mcpu=haswell", 8)])
@pytest.mark.parametrize("op", ["nn.global_avg_pool2d", "nn.global_max_pool2d"])
def test_blocked_global_pool_accumulates_whole_vectors(target, lanes, op):
    """A global pool over NCHW[b]c sums (or maxes) each channel block as one vector per pixel (the squeeze-excite
    pools of mobile networks), not lane by lane."""
    x = te.placeholder((1, 3, 7, 7, lanes), name="x")
    builder = ScheduleBuilder(target)
    (out,) = builder.call(op, GlobalPool2DAttrs(f"NCHW{lanes}c"), [x], TensorType((1, 3, 1, 1, lanes), "float32"))
    ir = kiln.build(builder.schedule([out]), [x, out], target=target, name="f").get_source("ll")
    assert re.search(rf"(fadd|maxnum|fcmp)[^\n]*<{lanes} x float>", ir)
