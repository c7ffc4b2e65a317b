"""Pooling (kiln/topi/nn/pooling.py) in NCHW, NHWC and NCHW16c against the numpy reference."""

import pytest

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
