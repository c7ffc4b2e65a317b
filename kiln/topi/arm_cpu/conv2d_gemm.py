"""The Arm CPU GEMM convolutions (TVM's ``topi.arm_cpu.conv2d_gemm`` templates): NHWC data, an HWIO kernel, computed
as im2col rows times the kernel tiled by :func:`kiln.topi.nn.conv_gemm.conv2d_gemm_weight_transform`.

TVM has three forms -- ``quantized_interleaved`` (8-bit, the data rows interleaved for ``smmla`` or plain SIMD),
``quantized_native`` (8-bit with the dot product) and ``hybrid`` (float) -- that differ in their tiles and their
hand-written Arm kernels; kiln's compute is one, tiled as :func:`.arm_utils.get_tiling_B_transformed` says for each
form, so the transformed weights have TVM's shapes, and the schedule is the generic CPU one. Each form is an autotvm
template under TVM's name, with and without the weight transform (the latter takes the transformed weight, the
kernel size and the output channels).
"""

from ...autotvm.task import register_topi_compute, register_topi_schedule
from ..nn.conv_gemm import conv2d_gemm_weight_transform, conv2d_gemm_without_weight_transform
from ..utils import get_const_tuple
from ..x86.dispatch import schedule_auto
from .arm_utils import get_tiling_B_transformed

__all__ = ["FORMS", "compute_conv2d_NHWC_quantized_interleaved", "compute_conv2d_NHWC_quantized_native",
           "compute_conv2d_NHWC_hybrid", "compute_conv2d_NHWC_quantized_interleaved_without_transform",
           "compute_conv2d_NHWC_quantized_native_without_transform", "compute_conv2d_NHWC_hybrid_without_transform",
           "schedule_conv2d_gemm"]

FORMS = {"conv2d_NHWC_quantized_interleaved": True, "conv2d_NHWC_quantized_native": False,
         "conv2d_NHWC_hybrid": False}
"""Form -> whether its data rows are interleaved (which picks the tiles)."""


def _with_transform(interleave):
    def fcompute(cfg, data, kernel, strides, padding, dilation, out_dtype):
        kh, kw, _, oc = get_const_tuple(kernel.shape)
        tile_n, tile_k = get_tiling_B_transformed(interleave, data.dtype)
        tiled = conv2d_gemm_weight_transform(kernel, tile_n, tile_k)
        return conv2d_gemm_without_weight_transform(data, tiled, strides, padding, dilation, out_dtype, (kh, kw),
                                                    oc)

    return fcompute


def _without_transform(cfg, data, kernel, strides, padding, dilation, out_dtype, kernel_size, output_channels):
    return conv2d_gemm_without_weight_transform(data, kernel, strides, padding, dilation, out_dtype, kernel_size,
                                                output_channels)


def schedule_conv2d_gemm(cfg, outs, target=None):
    """The schedule of every form: the generic CPU schedule of the group's anchor."""
    return schedule_auto(outs, target)


_COMPUTES = {}
for _form, _interleave in FORMS.items():
    _COMPUTES[_form] = register_topi_compute(f"{_form}.arm_cpu")(_with_transform(_interleave))
    _COMPUTES[f"{_form}_without_transform"] = register_topi_compute(f"{_form}_without_transform.arm_cpu")(
        _without_transform)
    register_topi_schedule(f"{_form}.arm_cpu")(schedule_conv2d_gemm)
    register_topi_schedule(f"{_form}_without_transform.arm_cpu")(schedule_conv2d_gemm)

compute_conv2d_NHWC_quantized_interleaved = _COMPUTES["conv2d_NHWC_quantized_interleaved"]
compute_conv2d_NHWC_quantized_native = _COMPUTES["conv2d_NHWC_quantized_native"]
compute_conv2d_NHWC_hybrid = _COMPUTES["conv2d_NHWC_hybrid"]
compute_conv2d_NHWC_quantized_interleaved_without_transform = \
    _COMPUTES["conv2d_NHWC_quantized_interleaved_without_transform"]
compute_conv2d_NHWC_quantized_native_without_transform = _COMPUTES["conv2d_NHWC_quantized_native_without_transform"]
compute_conv2d_NHWC_hybrid_without_transform = _COMPUTES["conv2d_NHWC_hybrid_without_transform"]
