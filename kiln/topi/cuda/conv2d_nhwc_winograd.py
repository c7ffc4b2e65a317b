"""``topi.cuda.conv2d_nhwc_winograd_direct`` / ``_tensorcore`` at TVM's names: the target-independent NHWC Winograd
convolution (:func:`kiln.topi.nn.conv_winograd.conv2d_winograd_nhwc`) at TVM's CUDA tile, with the thread-binding
schedule; kiln has no tensor-core batched GEMM, so both compute the same."""

from ..nn import conv_winograd
from ..nn.winograd import infer_tile_size
from .conv2d_winograd import schedule_winograd_threads

__all__ = ["conv2d_nhwc_winograd_direct", "conv2d_nhwc_winograd_tensorcore", "schedule_conv2d_nhwc_winograd_direct",
           "schedule_conv2d_nhwc_winograd_tensorcore"]


def conv2d_nhwc_winograd_direct(data, kernel, strides, padding, dilation, out_dtype):
    """Winograd convolution of NHWC data with an HWIO kernel."""
    return conv_winograd.conv2d_winograd_nhwc(data, kernel, strides, padding, dilation, out_dtype,
                                              tile_size=infer_tile_size(data, kernel, "NHWC"))


conv2d_nhwc_winograd_tensorcore = conv2d_nhwc_winograd_direct
schedule_conv2d_nhwc_winograd_direct = schedule_winograd_threads
schedule_conv2d_nhwc_winograd_tensorcore = schedule_winograd_threads
