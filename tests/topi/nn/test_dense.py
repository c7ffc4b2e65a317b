"""nn.dense, nn.matmul, nn.batch_matmul (kiln/topi/nn/dense.py, x86/dense.py): packed, split-K and plain forms,
with fused consumers, against the numpy reference."""

import re

import numpy as np
import pytest

import kiln
from kiln import te, topi
from kiln.ir import TensorType
from kiln.relay.backend.schedule_builder import ScheduleBuilder
from kiln.relay.op.attrs import BatchMatmulAttrs, BiasAddAttrs, DenseAttrs, DensePackAttrs, MatmulAttrs
from kiln.relay.op.strategy import select_implementation


def test_dense_forms(harness, target):
    bias = harness.rand((48,), seed=3)
    cases = [
        harness.Case("nn.dense", [harness.rand((4, 64)), harness.rand((48, 64), seed=1)], DenseAttrs(),
                     label="split-K (few rows)", rtol=1e-4, atol=1e-4),
        harness.Case("nn.dense", [harness.rand((40, 24)), harness.rand((48, 24), seed=1)], DenseAttrs(),
                     label="packed", rtol=1e-4, atol=1e-4,
                     consumers=[("nn.bias_add", BiasAddAttrs(1), [bias]), ("nn.relu", None, [])]),
        harness.Case("nn.dense", [harness.rand((2, 9)), harness.rand((48, 9), seed=1)], DenseAttrs(),
                     label="split-K fallback (odd K)", rtol=1e-4, atol=1e-4,
                     consumers=[("nn.bias_add", BiasAddAttrs(-1), [bias])]),
        harness.Case("nn.dense", [harness.rand((20, 16)), harness.rand((7, 16), seed=1)], DenseAttrs(),
                     label="odd units (generic)", rtol=1e-4, atol=1e-4),
        harness.Case("nn.dense", [harness.rand((37, 40)), harness.rand((100, 40), seed=1)], DenseAttrs(),
                     label="units padded to whole panels", rtol=1e-4, atol=1e-4,
                     consumers=[("nn.relu", None, [])]),
        harness.Case("nn.dense", [harness.rand((2, 3, 16)), harness.rand((8, 16), seed=1)], DenseAttrs(),
                     label="3-D data", rtol=1e-4, atol=1e-4),
        harness.Case("nn.dense", [harness.rand((3, 8), "int8", -5, 5), harness.rand((16, 8), "int8", -5, 5)],
                     DenseAttrs(None, "int32"), label="int8 -> int32"),
        harness.Case("nn.dense", [harness.rand((2, 32)), harness.rand((16, 32), seed=1)], DenseAttrs(),
                     label="split-K + relu", rtol=1e-4, atol=1e-4, consumers=[("nn.relu", None, [])]),
    ]
    harness.run_cases(cases, target)


def test_dense_pack_with_units_in_the_last_panel(harness, target):
    weight = harness.rand((100, 40), seed=1)
    packed = np.zeros((4, 40, 32), "float32")
    packed.transpose(0, 2, 1).reshape(128, 40)[:100] = weight
    case = harness.Case("nn.contrib_dense_pack", [harness.rand((37, 40)), packed], DensePackAttrs(100, "", "NC32n"),
                        label="100 of 128 packed columns", rtol=1e-4, atol=1e-4)
    harness.run_cases([case], target)


@pytest.mark.parametrize("target,register", [("llvm -mcpu=skylake-avx512", "zmm"), ("llvm -mcpu=haswell", "ymm")])
@pytest.mark.parametrize("op", ["dense", "batch_matmul", "batch_matmul_nn"])
def test_padded_panels_run_vector_fmas(target, register, op):
    """Column counts without a vector dividing them (100, 37) keep the register-tiled FMA loop, whether the
    second operand comes transposed or not (attention's ``Q @ K^T`` with ``K^T`` materialized: 197 columns)."""
    if op == "dense":
        x, w = te.placeholder((37, 40), name="x"), te.placeholder((100, 40), name="w")
        call = ("nn.dense", DenseAttrs(), [x, w], TensorType((37, 100), "float32"))
    elif op == "batch_matmul":
        x, w = te.placeholder((2, 21, 16), name="x"), te.placeholder((2, 37, 16), name="w")
        call = ("nn.batch_matmul", BatchMatmulAttrs(), [x, w], TensorType((2, 21, 37), "float32"))
    else:
        x, w = te.placeholder((2, 21, 16), name="x"), te.placeholder((2, 16, 37), name="w")
        call = ("nn.batch_matmul", BatchMatmulAttrs("", False, False), [x, w], TensorType((2, 21, 37), "float32"))
    builder = ScheduleBuilder(target)
    (out,) = builder.call(*call)
    asm = kiln.build(builder.schedule([out]), [x, w, out], target=target, name="f").get_source("asm")
    accumulators = set(re.findall(rf"vfmadd231ps\s+[^\n]*(%{register}\d+)\s*$", asm, re.M))
    assert len(accumulators) >= 4  # a register tile, not one vector at a time


def test_matmul_forms(harness, target):
    a, b = harness.rand((24, 16)), harness.rand((16, 32), seed=1)
    cases = [
        harness.Case("nn.matmul", [a, b], MatmulAttrs(), label="A @ B", rtol=1e-4, atol=1e-4),
        harness.Case("nn.matmul", [a.T.copy(), b], MatmulAttrs(None, "", True, False), label="A.T @ B",
                     rtol=1e-4, atol=1e-4),
        harness.Case("nn.matmul", [a, b.T.copy()], MatmulAttrs(None, "", False, True), label="A @ B.T",
                     rtol=1e-4, atol=1e-4),
        harness.Case("nn.matmul", [a.T.copy(), b.T.copy()], MatmulAttrs(None, "", True, True), label="A.T @ B.T",
                     rtol=1e-4, atol=1e-4),
        harness.Case("nn.matmul", [harness.rand((16,)), b], MatmulAttrs(), label="vector @ B", rtol=1e-4, atol=1e-4),
        harness.Case("nn.matmul", [harness.rand((2, 3, 16)), b], MatmulAttrs(), label="3-D @ B", rtol=1e-4,
                     atol=1e-4),
    ]
    harness.run_cases(cases, target)


@pytest.mark.parametrize("tgt", ["llvm", "c"])
def test_matmul_whose_reduction_is_known_on_one_side_only(tgt):
    """(9, 1) @ (?, 3): the relation has matched the run-time size with the static 1, the compute reduces over the
    static size (fuzz seed 71173)."""
    from kiln import relay

    x, w = relay.var("x", shape=(9, 1)), relay.var("w", shape=(relay.Any(), 3))
    mod = kiln.IRModule.from_expr(relay.Function([x, w], relay.nn.matmul(x, w)))
    a, b = np.arange(9, dtype="float32").reshape(9, 1), np.array([[1.0, 2.0, 3.0]], "float32")
    got = relay.create_executor("vm", mod=mod, target=tgt).evaluate()(a, b).numpy()
    np.testing.assert_allclose(got, a @ b)


def test_batch_matmul_forms(harness, target):
    x, y = harness.rand((3, 8, 16)), harness.rand((3, 32, 16), seed=1)
    cases = [
        harness.Case("nn.batch_matmul", [x, y], BatchMatmulAttrs(), label="x @ y.T", rtol=1e-4, atol=1e-4),
        harness.Case("nn.batch_matmul", [x, y.transpose(0, 2, 1).copy()], BatchMatmulAttrs("", False, False),
                     label="x @ y", rtol=1e-4, atol=1e-4),
        harness.Case("nn.batch_matmul", [x.transpose(0, 2, 1).copy(), y[:1]], BatchMatmulAttrs("", True, True),
                     label="x.T @ y.T, batch 1 broadcast", rtol=1e-4, atol=1e-4),
        harness.Case("nn.batch_matmul", [x[:1], y[:, :5]], BatchMatmulAttrs(), label="odd N, x broadcast",
                     rtol=1e-4, atol=1e-4, consumers=[("nn.relu", None, [])]),
        harness.Case("nn.batch_matmul", [harness.rand((2, 21, 16)), harness.rand((2, 37, 16), seed=1)],
                     BatchMatmulAttrs(), label="N padded to whole panels", rtol=1e-4, atol=1e-4,
                     consumers=[("nn.relu", None, [])]),
        harness.Case("nn.batch_matmul", [harness.rand((2, 21, 16)), harness.rand((2, 16, 37), seed=1)],
                     BatchMatmulAttrs("", False, False), label="x @ y, y packed to whole panels", rtol=1e-4,
                     atol=1e-4, consumers=[("nn.relu", None, [])]),
    ]
    harness.run_cases(cases, target)


def test_dense_strategy_picks_by_rows():
    w = te.placeholder((64, 128), name="w")
    for rows, tag in ((1, "dense_nopack"), (64, "dense_pack")):
        x = te.placeholder((rows, 128), name="x")
        impl, (out,) = select_implementation("nn.dense", DenseAttrs(), [x, w], TensorType((rows, 64), "float32"),
                                             "llvm")
        assert impl.name == "dense.x86" and out.op.tag == tag
    x = te.placeholder((2, 4, 128), name="x")
    impl, (out,) = select_implementation("nn.dense", DenseAttrs(), [x, w], TensorType((2, 4, 64), "float32"), "llvm")
    assert impl.name == "nn.dense.generic" and out.op.tag == "dense"
    # two vectors of columns; rows within the accumulator budget of the register file (24 of 32, 12 of 16 registers)
    assert topi.x86.gemm_blocking(64, 64, "llvm -mcpu=skylake-avx512") == (8, 32)  # 16 accumulators
    assert topi.x86.gemm_blocking(64, 64, "llvm -mcpu=haswell") == (4, 16)  # 8 accumulators
    assert topi.x86.gemm_blocking(48, 64, "llvm -mcpu=haswell") == (6, 16)  # 12 accumulators
