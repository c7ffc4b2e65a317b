"""Normalizations, softmax, padding and the small nn operators (kiln/topi/nn/norm.py, softmax.py, pad.py,
elemwise.py) against the numpy reference."""

import numpy as np
import pytest

import kiln
from kiln.relay.op import attrs as A


def test_batch_norm_layer_norm_lrn(harness, target):
    x = harness.rand((2, 6, 5, 7), "float32", -3, 3)
    gamma, beta = harness.rand((6,), seed=1), harness.rand((6,), seed=2)
    mean, var = harness.rand((6,), seed=3), harness.rand((6,), "float32", 0.5, 2, seed=4)
    g7, b7 = harness.rand((7,), seed=5), harness.rand((7,), seed=6)
    cases = [
        harness.Case("nn.batch_norm", [x, gamma, beta, mean, var], A.BatchNormAttrs(1, 1e-3), label="batch_norm"),
        harness.Case("nn.batch_norm", [x.transpose(0, 2, 3, 1).copy(), gamma, beta, mean, var],
                     A.BatchNormAttrs(-1, 1e-5, False, False), label="batch_norm NHWC, no scale/center"),
        harness.Case("nn.layer_norm", [x, g7, b7], A.LayerNormAttrs(-1, 1e-5), label="layer_norm last",
                     rtol=1e-4, atol=1e-4),
        harness.Case("nn.layer_norm", [x, gamma, beta], A.LayerNormAttrs(1, 1e-5, False, True),
                     label="layer_norm axis 1", rtol=1e-4, atol=1e-4),
        harness.Case("nn.lrn", [x], A.LRNAttrs(5, 1, 2.0, 1e-4, 0.75), label="lrn 5", rtol=1e-5, atol=1e-5),
        harness.Case("nn.lrn", [x], A.LRNAttrs(4, 3, 1.0, 0.1, 0.5), label="lrn even size", rtol=1e-5, atol=1e-5),
        # beta a whole number of quarters (square roots) or not (pow), with alpha large enough to matter
        harness.Case("nn.lrn", [x], A.LRNAttrs(3, 1, 0.5, 2.0, 1.25), label="lrn beta 1.25", rtol=1e-5, atol=1e-6),
        harness.Case("nn.lrn", [x], A.LRNAttrs(3, 1, 0.5, 2.0, 2.0), label="lrn beta 2", rtol=1e-5, atol=1e-6),
        harness.Case("nn.lrn", [x], A.LRNAttrs(3, 1, 0.5, 2.0, 0.3), label="lrn beta 0.3", rtol=1e-5, atol=1e-6),
    ]
    harness.run_cases(cases, target)


@pytest.mark.parametrize("axis", [-1, 1, 0])
def test_softmax(harness, target, axis):
    x = harness.rand((3, 5, 32), "float32", -4, 4)
    cases = [harness.Case("nn.softmax", [x], A.SoftmaxAttrs(axis), label=f"softmax {axis}", rtol=1e-5, atol=1e-6),
             harness.Case("nn.log_softmax", [x], A.SoftmaxAttrs(axis), label=f"log_softmax {axis}", rtol=1e-5,
                          atol=1e-5),
             harness.Case("nn.softmax", [x], A.SoftmaxAttrs(axis), label=f"softmax {axis} + mul", rtol=1e-5,
                          atol=1e-6, consumers=[("multiply", None, [np.float32(3) * np.ones((32,), "float32")])])]
    harness.run_cases(cases, target)


def test_pad_modes(harness, target):
    x = harness.rand((2, 3, 4), "float32")
    i = harness.rand((3, 5), "int32", -9, 9)
    cases = [
        harness.Case("nn.pad", [x, np.array(1.5, "float32")], A.PadAttrs(((0, 1), (2, 0), (1, 3))), label="constant"),
        harness.Case("nn.pad", [x, np.array(0, "float32")], A.PadAttrs(((1, 1), (0, 2), (3, 3)), "edge"), label="edge"),
        harness.Case("nn.pad", [x, np.array(0, "float32")], A.PadAttrs(((1, 1), (2, 2), (3, 3)), "reflect"),
                     label="reflect"),
        harness.Case("nn.pad", [i, np.array(7.9, "float32")], A.PadAttrs(((1, 0), (0, 12)), "reflect"),
                     label="reflect wider than the axis"),
        harness.Case("nn.pad", [i, np.array(-2.7, "float32")], A.PadAttrs(((2, 1), (1, 1))), label="int constant"),
    ]
    harness.run_cases(cases, target)


def test_small_nn_ops(harness, target):
    x = harness.rand((2, 5, 3, 4), "float32", -2, 2)
    cases = [
        harness.Case("nn.bias_add", [x, harness.rand((5,), seed=1)], A.BiasAddAttrs(1), label="bias_add 1"),
        harness.Case("nn.bias_add", [x, harness.rand((4,), seed=1)], A.BiasAddAttrs(-1), label="bias_add -1"),
        harness.Case("nn.relu", [x], label="relu"),
        harness.Case("nn.leaky_relu", [x], A.LeakyReluAttrs(0.2), label="leaky_relu"),
        harness.Case("nn.dropout", [x], A.DropoutAttrs(0.3), label="dropout"),
        harness.Case("nn.relu", [harness.rand((9,), "int32", -5, 5)], label="relu int"),
    ]
    harness.run_cases(cases, target)


@pytest.mark.needs_cc
def test_lrn_with_beta_of_quarters_runs_vector_square_roots():
    """LRN's usual beta of 0.75 becomes ``sqrt(x) * sqrt(sqrt(x))``: vector square roots, no libm ``pow`` per
    element (target named: AVX2's 8-lane ``vsqrtps``)."""
    x = kiln.relay.var("x", shape=(1, 16, 7, 8))
    func = kiln.relay.Function([x], kiln.relay.nn.lrn(x, size=5, alpha=1e-4, beta=0.75, bias=2.0))
    with kiln.transform.PassContext(opt_level=3):
        lib = kiln.relay.build(kiln.IRModule.from_expr(func), target="llvm -mcpu=haswell")
    asm = lib.get_lib().get_source("asm")
    assert "vsqrtps\t%ymm" in asm or "vsqrtps %ymm" in asm, asm[:2000]
    assert "pow" not in asm
