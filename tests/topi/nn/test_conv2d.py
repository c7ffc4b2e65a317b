"""nn.conv2d (kiln/topi/nn/conv2d.py, x86/conv2d.py, x86/conv2d_direct.py) in every layout and attribute variant,
with and without fused element-wise consumers, against the numpy reference."""

import re

import numpy as np
import pytest

import kiln
from kiln import te, topi
from kiln.error import OpAttributeInvalid
from kiln.relay.op.attrs import BiasAddAttrs, Conv2DAttrs, LayoutTransformAttrs


def _case(harness, data_shape, weight_shape, label, consumers=(), dtype="float32", **attrs):
    data = harness.rand(data_shape, dtype, -3, 3, seed=1)
    weight = harness.rand(weight_shape, dtype, -3, 3, seed=2)
    return harness.Case("nn.conv2d", [data, weight], Conv2DAttrs(**attrs), label=label, rtol=1e-4, atol=1e-4,
                        consumers=list(consumers))


def test_conv2d_nchw_variants(harness, target):
    cases = [
        _case(harness, (1, 16, 10, 12), (32, 16, 3, 3), "3x3 pad 1", padding=(1, 1)),
        _case(harness, (2, 3, 11, 9), (8, 3, 3, 3), "stride 2 asymmetric pad", strides=(2, 2), padding=(0, 1, 2, 1)),
        _case(harness, (1, 8, 9, 9), (16, 8, 3, 3), "dilation 2", dilation=(2, 2), padding=(2, 2)),
        _case(harness, (1, 6, 7, 8), (5, 6, 1, 1), "1x1 odd channels"),
        _case(harness, (1, 8, 12, 12), (8, 2, 3, 3), "groups 4", groups=4, padding=(1, 1)),
        _case(harness, (1, 8, 12, 12), (16, 1, 3, 3), "depthwise multiplier 2", groups=8, padding=(1, 1),
              strides=(2, 2)),
        _case(harness, (1, 4, 6, 6), (8, 4, 3, 3), "int8 widened to int32", dtype="int8", out_dtype="int32"),
    ]
    harness.run_cases(cases, target)


def test_conv2d_other_layouts(harness, target):
    cases = [
        _case(harness, (1, 10, 12, 16), (3, 3, 16, 32), "NHWC/HWIO", padding=(1, 1), data_layout="NHWC",
              kernel_layout="HWIO"),
        _case(harness, (2, 9, 9, 8), (3, 3, 2, 8), "NHWC grouped", groups=4, data_layout="NHWC",
              kernel_layout="HWIO", strides=(2, 2)),
        _case(harness, (1, 2, 6, 6, 8), (4, 2, 3, 3, 8, 4), "NCHW8c/OIHW8i4o", padding=(1, 1),
              data_layout="NCHW8c", kernel_layout="OIHW8i4o"),
        _case(harness, (1, 2, 6, 6, 8), (4, 1, 3, 3, 8, 4), "NCHW8c/OIHW8i4o, 2 groups", padding=(1, 1), groups=2,
              data_layout="NCHW8c", kernel_layout="OIHW8i4o"),
        _case(harness, (1, 6, 6, 16), (32, 16, 3, 3), "NHWC/OIHW via NCHW", padding=(1, 1), data_layout="NHWC",
              kernel_layout="OIHW"),
        _case(harness, (1, 16, 7, 7), (3, 3, 16, 8), "NCHW/HWIO out NHWC", data_layout="NCHW", kernel_layout="HWIO",
              out_layout="NHWC"),
        _case(harness, (1, 16, 6, 6), (16, 16, 3, 3), "NCHW out NCHW4c", padding=(1, 1), out_layout="NCHW4c"),
    ]
    harness.run_cases(cases, target)


def test_conv2d_fused_consumers(harness, target):
    bias = harness.rand((32,), seed=5)
    chain = [("nn.bias_add", BiasAddAttrs(1), [bias]), ("nn.relu", None, []), ("multiply", None, [bias[:, None, None]])]
    bias_nhwc = harness.rand((24,), seed=6)
    cases = [
        _case(harness, (1, 16, 14, 14), (32, 16, 3, 3), "NCHW + bias + relu + mul", chain, padding=(1, 1)),
        _case(harness, (1, 16, 8, 8), (32, 16, 1, 1), "NCHW + layout_transform", padding=(0, 0),
              consumers=[("layout_transform", LayoutTransformAttrs("NCHW", "NCHW16c"), [])]),
        _case(harness, (1, 9, 9, 8), (3, 3, 8, 24), "NHWC + bias + relu", padding=(1, 1), data_layout="NHWC",
              kernel_layout="HWIO", consumers=[("nn.bias_add", BiasAddAttrs(3), [bias_nhwc]), ("nn.relu", None, [])]),
        _case(harness, (1, 8, 10, 10), (8, 1, 3, 3), "depthwise + relu", groups=8, padding=(1, 1),
              consumers=[("nn.relu", None, [])]),
    ]
    harness.run_cases(cases, target)


@pytest.mark.needs_cc
def test_conv2d_on_c_target(harness):
    bias = harness.rand((16,), seed=5)
    cases = [_case(harness, (1, 8, 9, 9), (16, 8, 3, 3), "C: NCHW + bias", padding=(1, 1),
                   consumers=[("nn.bias_add", BiasAddAttrs(1), [bias])]),
             _case(harness, (1, 9, 9, 8), (3, 3, 8, 16), "C: NHWC", data_layout="NHWC", kernel_layout="HWIO")]
    harness.run_cases(cases, "c")


def test_conv2d_rejects_foreign_layouts():
    x = te.placeholder((1, 4, 4, 4), name="x")
    w = te.placeholder((4, 4, 3, 3), name="w")
    with pytest.raises(OpAttributeInvalid, match="data_layout NCDW"):
        topi.nn.conv2d(x, w, data_layout="NCDW")
    with pytest.raises(OpAttributeInvalid, match="does not fit"):
        topi.nn.conv2d_nchw(x, te.placeholder((4, 4, 7, 7), name="k"), 1, 0, 1)


def test_packed_conv_structure():
    """The x86 NCHW convolution packs its operands and tags the blocked stage for the schedule."""
    x = te.placeholder((1, 32, 8, 8), name="x")
    w = te.placeholder((64, 32, 3, 3), name="w")
    out = topi.x86.conv2d_nchw(x, w, (1, 1), (1, 1, 1, 1), (1, 1), "float32", target="llvm")
    assert out.op.tag == "injective,unpack_nchwc"
    conv = out.op.input_tensors[0]
    assert conv.op.tag == "conv2d_NCHWc"
    data_vec, kernel_vec = conv.op.input_tensors
    assert data_vec.op.tag.endswith("data_vec") and kernel_vec.op.tag.endswith("kernel_vec")
    assert np.prod([int(d) for d in kernel_vec.shape]) == 64 * 32 * 9


def test_alter_layout_blocks_run_packed(harness, target):
    """The layouts conv2d_alter_layout proposes compute the same convolution directly on blocked tensors."""
    from kiln.relay.reference.transform import convert_layout

    attrs = Conv2DAttrs(strides=(2, 2), padding=(1, 1))
    data, weight = harness.rand((1, 32, 9, 9), seed=1), harness.rand((48, 32, 3, 3), seed=2)
    # blocks of one vector of float32 lanes: 16 with AVX-512, 8 with AVX2 (the largest divisors of 32 and 48)
    for cpu_target, block in (("llvm -mcpu=skylake-avx512", 16), ("llvm -mcpu=haswell", 8), ("c -mcpu=znver2", 8)):
        new = topi.x86.conv2d_alter_layout(attrs, data.shape, weight.shape, cpu_target)
        assert new == {"data_layout": f"NCHW{block}c", "kernel_layout": f"OIHW{block}i{block}o",
                       "out_layout": f"NCHW{block}c"}
    # two groups of 16 -> 24 channels: whole blocks of 8 (AVX2), not of 16 (AVX-512: left NCHW)
    grouped = Conv2DAttrs(groups=2)
    assert topi.x86.conv2d_alter_layout(grouped, data.shape, (48, 16, 3, 3), "llvm -mcpu=skylake-avx512") is None
    assert topi.x86.conv2d_alter_layout(grouped, data.shape, (48, 16, 3, 3), "llvm -mcpu=haswell") == {
        "data_layout": "NCHW8c", "kernel_layout": "OIHW8i8o", "out_layout": "NCHW8c"}
    new = topi.x86.conv2d_alter_layout(attrs, data.shape, weight.shape, target)
    blocked = Conv2DAttrs(strides=(2, 2), padding=(1, 1), **new)
    harness.run_cases([harness.Case("nn.conv2d", [convert_layout(data, "NCHW", new["data_layout"]),
                                                  convert_layout(weight, "OIHW", new["kernel_layout"])], blocked,
                                    label="blocked", rtol=1e-4, atol=1e-4,
                                    consumers=[("nn.relu", None, [])])], target)


def test_packed_depthwise(harness, target):
    """Depthwise convolutions in the packed layout (NCHW[b]c data, OIHW1i[b]o kernel), as the x86 layout hook makes
    them, with fused consumers, strides, dilation and a block narrower than a vector."""
    from kiln.relay.op.attrs import ClipAttrs

    bias = harness.rand((2, 1, 1, 16), seed=7)

    def packed(data_shape, weight_shape, label, consumers=(), **attrs):
        block = data_shape[-1]
        return _case(harness, data_shape, weight_shape, label, consumers, data_layout=f"NCHW{block}c",
                     kernel_layout=f"OIHW1i{block}o", groups=data_shape[1] * block, **attrs)

    cases = [
        packed((1, 2, 9, 10, 16), (2, 1, 3, 3, 1, 16), "3x3 pad 1 + bias + clip", padding=(1, 1),
               consumers=[("add", None, [bias]), ("clip", ClipAttrs(0.0, 6.0), [])]),
        packed((1, 3, 12, 12, 8), (3, 1, 5, 5, 1, 8), "5x5 stride 2", padding=(2, 2), strides=(2, 2)),
        packed((2, 1, 8, 8, 4), (1, 1, 3, 3, 1, 4), "dilation 2, 4-channel block", padding=(2, 2),
               dilation=(2, 2)),
    ]
    harness.run_cases(cases, target)
    for cpu_target, block in (("llvm -mcpu=skylake-avx512", 16), ("llvm -mcpu=haswell", 8)):
        new = topi.x86.conv2d_alter_layout(Conv2DAttrs(groups=48, padding=(1, 1)), (1, 48, 14, 14), (48, 1, 3, 3),
                                           cpu_target)
        assert new == {"data_layout": f"NCHW{block}c", "kernel_layout": f"OIHW1i{block}o",
                       "out_layout": f"NCHW{block}c"}
    # a depthwise convolution with a channel multiplier, or a grouped one, keeps its layout
    assert topi.x86.conv2d_alter_layout(Conv2DAttrs(groups=8), (1, 8, 8, 8), (16, 1, 3, 3), "llvm") is None
    assert topi.x86.conv2d_alter_layout(Conv2DAttrs(groups=4), (1, 8, 8, 8), (8, 2, 3, 3), "llvm") is None


@pytest.mark.needs_cc
def test_pointwise_grouped_conv_over_the_flattened_map(harness, target):
    """1-wide kernels at unit strides are computed over the flattened map (whole vectors, a guarded remainder)."""
    bias = harness.rand((136,), seed=5)
    cases = [
        _case(harness, (1, 136, 14, 14), (136, 34, 1, 1), "1x1 groups 4, 14x14", groups=4,
              consumers=[("nn.bias_add", BiasAddAttrs(1), [bias]), ("nn.relu", None, [])]),
        _case(harness, (1, 24, 7, 7), (40, 6, 1, 1), "1x1 groups 4, 7x7", groups=4),
        _case(harness, (1, 12, 9, 5), (12, 4, 3, 1), "3x1 groups 3, rows padded", groups=3, padding=(1, 0, 2, 0)),
        _case(harness, (2, 8, 6, 6), (8, 2, 1, 1), "1x1 groups 4, batch 2", groups=4),
    ]
    harness.run_cases(cases, target)
    harness.run_cases(cases[:2], "c")


@pytest.mark.parametrize("target,register", [("llvm -mcpu=skylake-avx512", "zmm"), ("llvm -mcpu=haswell", "ymm")])
def test_pointwise_grouped_conv_structure(target, register):
    x, w = te.placeholder((1, 272, 14, 14), name="x"), te.placeholder((272, 68, 1, 1), name="w")
    out = topi.nn.group_conv2d_nchw(x, w, 1, 0, 1, 4)
    (flat,) = out.op.input_tensors
    assert flat.op.tag == "group_conv2d_nchw" and tuple(int(d) for d in flat.shape) == (1, 272, 196)
    asm = kiln.build(topi.x86.schedule_conv2d_direct([out], target), [x, w, out], target=target,
                     name="f").get_source("asm")
    assert re.search(rf"vfmadd\w+ps\s+[^\n]*%{register}", asm)
