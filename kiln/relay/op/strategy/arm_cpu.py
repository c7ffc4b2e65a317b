"""Arm CPU strategies and layout hook (TVM's ``relay/op/strategy/arm_cpu.py`` and ``topi/arm_cpu/conv2d_alter_op.py``)
for the convolutions kiln computes on AArch64 as a matrix product of a pre-tiled weight.

On a target with the ``arm_cpu`` key generating AArch64 code (``llvm -device=arm_cpu -mtriple=aarch64-linux-gnu``),
an ``nn.conv2d`` in NHWC/HWIO without groups takes TVM's GEMM templates (:mod:`kiln.topi.arm_cpu.conv2d_gemm`):
``conv2d_NHWC_quantized_interleaved.arm_cpu`` for 8-bit data (``..._native`` with the dot product but without
``i8mm``), ``conv2d_NHWC_hybrid.arm_cpu`` for floats. AlterOpLayout then splits such a convolution into
``nn.contrib_conv2d_gemm_weight_transform`` (which FoldConstant computes once for a constant weight) and
``nn.contrib_conv2d_gemm_without_weight_transform``, and hands the tuning config of the original workload to the new
one, as TVM's hook does. Every other call keeps the CPU strategy and hook of :mod:`.x86`.
"""

from ....autotvm.task import DispatchContext, args_to_workload
from ....target.target import Target
from ....te.operation import placeholder
from ....topi.arm_cpu import arm_utils
from ....topi.nn import conv2d_alter_layout
from ....topi.nn.conv_gemm import gemm_transformed_shape
from .. import nn as _nn
from . import generic
from .base import OpStrategy
from .x86 import STRATEGIES, _template, alter_conv2d_layout

__all__ = ["gemm_form", "alter_conv2d_layout_arm"]


def gemm_form(attrs, data_dtype, target):
    """The GEMM template form (``conv2d_NHWC_quantized_interleaved`` ...) of a conv2d call on ``target``, or None
    when the call is not computed so (not an AArch64 ``arm_cpu`` target, groups, another layout or dtype)."""
    if target is None or "arm_cpu" not in target.keys or not arm_utils.is_aarch64(target) or attrs.groups != 1:
        return None
    if (attrs.data_layout, attrs.kernel_layout, attrs.out_layout or "NHWC") != ("NHWC", "HWIO", "NHWC"):
        return None
    if data_dtype in ("int8", "uint8"):
        native = arm_utils.has_dotprod(target) and not arm_utils.has_matmul_i8(target)
        return "conv2d_NHWC_quantized_native" if native else "conv2d_NHWC_quantized_interleaved"
    if data_dtype in ("float32", "float16"):
        return "conv2d_NHWC_hybrid"
    return None


def _out_dtype(attrs, out_type):
    return attrs.out_dtype or out_type.dtype


def _with_arm(fstrategy):
    def strategy(attrs, inputs, out_type, target):
        form = gemm_form(attrs, inputs[0].dtype, target)
        if form is None:
            return fstrategy(attrs, inputs, out_type, target)
        args = (inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.dilation, _out_dtype(attrs, out_type))
        return _template(OpStrategy(), f"{form}.arm_cpu", args, target)

    return strategy


def _gemm_without_transform_strategy(attrs, inputs, out_type, target):
    form = gemm_form(attrs, inputs[0].dtype, target)
    if form is None:
        return generic.default_strategy("nn.contrib_conv2d_gemm_without_weight_transform")(attrs, inputs, out_type,
                                                                                         target)
    args = (inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.dilation, _out_dtype(attrs, out_type),
            attrs.kernel_size, attrs.channels)
    return _template(OpStrategy(), f"{form}_without_transform.arm_cpu", args, target)


def alter_conv2d_layout_arm(attrs, inputs, tinfos, out_type):
    """``topi.nn.conv2d_alter_layout`` on ``arm_cpu`` targets (see the module docstring); other calls go to the CPU
    hook (:func:`.x86.alter_conv2d_layout`)."""
    target = Target.current(allow_none=True)
    data, kernel = tinfos
    form = gemm_form(attrs, data.dtype, target)
    if form is None:
        return alter_conv2d_layout(attrs, inputs, tinfos, out_type)
    shapes = [tuple(int(d) for d in t.shape) for t in tinfos]
    data_t, kernel_t = (placeholder(s, t.dtype) for s, t in zip(shapes, tinfos, strict=True))
    out_dtype = _out_dtype(attrs, out_type)
    common = (attrs.strides, attrs.padding, attrs.dilation, out_dtype)
    # DispatchContext.current is a per-thread descriptor set after the class
    ctx = DispatchContext.current  # type: ignore[attr-defined]
    cfg = ctx.query(target, args_to_workload((data_t, kernel_t, *common), f"{form}.arm_cpu"))
    tile_n, tile_k = arm_utils.get_tiling_B_transformed(form == "conv2d_NHWC_quantized_interleaved", data.dtype,
                                                        target)
    kh, kw, _, oc = shapes[1]
    new_kernel = placeholder(gemm_transformed_shape(shapes[1], tile_n, tile_k, kernel.dtype), kernel.dtype)
    new_workload = args_to_workload((data_t, new_kernel, *common, (kh, kw), oc),
                                    f"{form}_without_transform.arm_cpu")
    if hasattr(ctx, "update"):  # the tuned (or test-supplied) config follows the convolution to its new form
        ctx.update(target, new_workload, cfg)
    tiled = _nn.contrib_conv2d_gemm_weight_transform(inputs[1], tile_n, tile_k)
    return _nn.contrib_conv2d_gemm_without_weight_transform(inputs[0], tiled, **dict(attrs))


# registered over the CPU entries: the strategies fall back to them, and the "arm_cpu" key comes before "cpu"
STRATEGIES["nn.conv2d"] = _with_arm(STRATEGIES["nn.conv2d"])
STRATEGIES["nn.contrib_conv2d_gemm_without_weight_transform"] = _gemm_without_transform_strategy
conv2d_alter_layout.register("arm_cpu", alter_conv2d_layout_arm)
