"""A representative subset of operators built for the C target (every operator is checked on LLVM elsewhere): the
schedules' vector, parallel and unrolled loops must survive the C code generator too."""

import numpy as np
import pytest

from kiln.relay.op import attrs as A

pytestmark = pytest.mark.needs_cc


def test_c_target_subset(harness):
    x = harness.rand((2, 16, 9, 9), "float32", -2, 2)
    cases = [
        harness.Case("add", [x, harness.rand((16, 1, 1), seed=1)], label="broadcast add"),
        harness.Case("exp", [x], label="exp", rtol=1e-6, atol=1e-6),
        harness.Case("sum", [x], A.ReduceAttrs((1,)), label="sum over channels", rtol=1e-5, atol=1e-5),
        harness.Case("argmax", [x], A.ArgReduceAttrs((2, 3)), label="argmax"),
        harness.Case("nn.max_pool2d", [x], A.MaxPool2DAttrs((3, 3), (2, 2), (1, 1), (1, 1)), label="max_pool"),
        harness.Case("nn.avg_pool2d", [x.transpose(0, 2, 3, 1).copy()],
                     A.AvgPool2DAttrs((2, 2), (2, 2), layout="NHWC", ceil_mode=True), label="avg_pool NHWC"),
        harness.Case("nn.softmax", [harness.rand((4, 40))], A.SoftmaxAttrs(-1), label="softmax", rtol=1e-5,
                     atol=1e-6),
        harness.Case("nn.dense", [harness.rand((24, 32)), harness.rand((48, 32), seed=2)], A.DenseAttrs(),
                     label="dense packed", rtol=1e-4, atol=1e-4),
        harness.Case("nn.dense", [harness.rand((1, 64)), harness.rand((10, 64), seed=2)], A.DenseAttrs(),
                     label="dense split-K", rtol=1e-4, atol=1e-4),
        harness.Case("concatenate", [(x, x[:, :3])], A.ConcatenateAttrs(1), label="concatenate"),
        harness.Case("image.resize2d", [x], A.Resize2DAttrs((5, 13)), label="resize linear", rtol=1e-5, atol=1e-5),
        harness.Case("nn.layer_norm", [x, harness.rand((9,)), harness.rand((9,))], A.LayerNormAttrs(-1),
                     label="layer_norm", rtol=1e-4, atol=1e-4),
        harness.Case("topk", [np.round(x * 2)], A.TopKAttrs(3, 1), label="topk"),
    ]
    harness.run_cases(cases, "c")
