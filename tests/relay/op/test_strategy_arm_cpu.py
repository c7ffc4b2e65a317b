"""The Arm CPU strategies and layout hook (kiln/relay/op/strategy/arm_cpu.py): which template a conv2d gets on an
AArch64 arm_cpu target, and AlterOpLayout splitting it into the GEMM weight transform and convolution, whose
result (compiled for the host, as the ops run on any CPU) equals the original convolution's."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.autotvm.task import FallbackContext
from kiln.relay.op.strategy import select_implementation
from kiln.target import Target
from kiln.te import placeholder

from .checks import check

ARM = "llvm -device=arm_cpu -mtriple=aarch64-linux-gnu"
RNG = np.random.default_rng(8)


def conv(dtype, layout=("NHWC", "HWIO"), groups=1, out_dtype=""):
    x = relay.var("x", shape=(1, 9, 8, 6) if layout[0] == "NHWC" else (1, 6, 9, 8), dtype=dtype)
    w = relay.var("w", shape=(3, 3, 6 // groups, 10) if layout[1] == "HWIO" else (10, 6 // groups, 3, 3), dtype=dtype)
    return relay.nn.conv2d(x, w, padding=(1, 1), channels=10, kernel_size=(3, 3), groups=groups,
                           data_layout=layout[0], kernel_layout=layout[1], out_dtype=out_dtype)


def implementation(call, target):
    call = relay.infer_type(relay.Function(relay.analysis.free_vars(call), call)).body
    tensors = [placeholder(tuple(int(d) for d in a.checked_type.shape), a.checked_type.dtype) for a in call.args]
    with Target(target):
        impl, _ = select_implementation(call.op, call.attrs, tensors, call.checked_type, target)
    return impl.name


@pytest.mark.parametrize("target, dtype, name", [
    (ARM, "int8", "conv2d_NHWC_quantized_interleaved.arm_cpu"),
    (ARM + " -mattr=+dotprod", "uint8", "conv2d_NHWC_quantized_native.arm_cpu"),
    (ARM + " -mattr=+dotprod,+i8mm", "int8", "conv2d_NHWC_quantized_interleaved.arm_cpu"),
    (ARM, "float32", "conv2d_NHWC_hybrid.arm_cpu"),
    ("llvm -device=arm_cpu", "int8", "conv2d_nhwc_direct.x86"),  # not AArch64: the CPU strategy
])
def test_aarch64_nhwc_convolutions_take_the_gemm_templates(target, dtype, name):
    assert implementation(conv(dtype, out_dtype="int32" if dtype != "float32" else ""), target) == name


def test_other_convolutions_keep_the_cpu_strategy():
    assert implementation(conv("float32", ("NCHW", "OIHW")), ARM) == "conv2d_nchw.x86"
    assert not implementation(conv("float32", groups=2), ARM).endswith(".arm_cpu")


def test_tiles_follow_the_features():
    from kiln.topi.arm_cpu.arm_utils import get_tiling_B_transformed

    assert get_tiling_B_transformed(True, "int8", Target(ARM)) == (4, 16)
    assert get_tiling_B_transformed(True, "int8", Target(ARM + " -mattr=+dotprod")) == (12, 4)
    assert get_tiling_B_transformed(False, "int8", Target(ARM + " -mattr=+dotprod")) == (16, 4)
    assert get_tiling_B_transformed(True, "uint8", Target(ARM + " -mattr=+i8mm")) == (12, 8)
    assert get_tiling_B_transformed(False, "float32", Target(ARM)) == (16, 4)
    assert get_tiling_B_transformed(False, "float16", Target(ARM + " -mattr=+fullfp16")) == (32, 4)


class Recording(FallbackContext):
    """Records the configs the layout hook hands to the new workloads."""

    def __init__(self):
        super().__init__()
        self.updates = []

    def update(self, target, workload, cfg):
        self.updates.append((workload, cfg))


@pytest.mark.parametrize("dtype, out_dtype, tiled_shape", [
    ("int8", "int32", (3, 4, 4, 16)),  # K = 54 padded to 64, N = 10 to 12; 8-bit tiles transposed
    ("float32", "", (1, 16, 4, 16)),  # K = 54 padded to 64 (a multiple of four tiles of 4), N = 10 to 16
])
def test_alter_op_layout_splits_the_convolution(dtype, out_dtype, tiled_shape):
    before = conv(dtype, out_dtype=out_dtype)
    mod = kiln.IRModule.from_expr(relay.Function(relay.analysis.free_vars(before), before))
    ctx = Recording()
    with Target(ARM), ctx, kiln.transform.PassContext(opt_level=3):
        altered = relay.transform.AlterOpLayout()(relay.transform.InferType()(mod))
    body = altered["main"].body
    assert body.op.name == "nn.contrib_conv2d_gemm_without_weight_transform"
    assert body.args[1].op.name == "nn.contrib_conv2d_gemm_weight_transform"
    assert tuple(body.args[1].checked_type.shape) == tiled_shape
    (workload, cfg), = ctx.updates
    form = "conv2d_NHWC_quantized_interleaved" if dtype == "int8" else "conv2d_NHWC_hybrid"
    assert workload[0] == f"{form}_without_transform.arm_cpu" and workload[2][1] == tiled_shape
    assert cfg is ctx.query(Target(ARM), (f"{form}.arm_cpu", *workload[1:2], ("TENSOR", (3, 3, 6, 10), dtype),
                                          *workload[3:7]))
    x = RNG.integers(-9, 9, (1, 9, 8, 6)).astype(dtype)
    w = RNG.integers(-9, 9, (3, 3, 6, 10)).astype(dtype)
    want = relay.create_executor("debug", mod=mod).evaluate()(x, w).numpy()
    check(body, {"x": x, "w": w}, want, rtol=1e-5)  # the interpreter and the host's llvm and c


def test_gemm_templates_compute_the_convolution_on_the_host():
    """The templates' computes are plain TE: built for the host under the Arm target's tiles."""
    from kiln.topi.arm_cpu import compute_conv2d_NHWC_quantized_interleaved, schedule_conv2d_gemm
    from kiln.topi.testing.conv import conv_ncx_python

    x, w = RNG.integers(-9, 9, (2, 7, 6, 5)).astype("int8"), RNG.integers(-9, 9, (3, 2, 5, 4)).astype("int8")
    xt, wt = placeholder(x.shape, "int8", "x"), placeholder(w.shape, "int8", "w")
    with Target(ARM):
        out = compute_conv2d_NHWC_quantized_interleaved(None, xt, wt, (1, 2), (1, 0, 1, 1), (2, 1), "int32")
        s = schedule_conv2d_gemm(None, [out])
    func = kiln.build(s, [xt, wt, out], "llvm")
    got = kiln.nd.empty(tuple(int(d) for d in out.shape), "int32")
    func(kiln.nd.array(x), kiln.nd.array(w), got)
    want = conv_ncx_python(x.transpose(0, 3, 1, 2).astype("float64"), w.transpose(3, 2, 0, 1).astype("float64"),
                           (1, 2), (1, 0, 1, 1), (2, 1)).transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(got.numpy(), want.astype("int32"))
