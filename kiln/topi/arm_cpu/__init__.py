"""kiln.topi.arm_cpu: the Arm CPU computes TVM's Arm strategies name (the GEMM convolutions of a transformed weight),
as autotvm templates, and the Arm facts they read off the target (:mod:`.arm_utils`)."""

from . import arm_utils, conv2d_gemm, conv2d_winograd
from .conv2d_gemm import (
    compute_conv2d_NHWC_hybrid,
    compute_conv2d_NHWC_hybrid_without_transform,
    compute_conv2d_NHWC_quantized_interleaved,
    compute_conv2d_NHWC_quantized_interleaved_without_transform,
    compute_conv2d_NHWC_quantized_native,
    compute_conv2d_NHWC_quantized_native_without_transform,
    schedule_conv2d_gemm,
)
from .conv2d_winograd import conv2d_nchw_winograd, schedule_conv2d_nchw_winograd

__all__ = ["arm_utils", "conv2d_gemm", "compute_conv2d_NHWC_hybrid", "compute_conv2d_NHWC_hybrid_without_transform",
           "compute_conv2d_NHWC_quantized_interleaved", "compute_conv2d_NHWC_quantized_interleaved_without_transform",
           "compute_conv2d_NHWC_quantized_native", "compute_conv2d_NHWC_quantized_native_without_transform",
           "schedule_conv2d_gemm", "conv2d_winograd", "conv2d_nchw_winograd", "schedule_conv2d_nchw_winograd"]
