"""``topi.cuda.conv2d_nchw_winograd`` and its schedules at TVM's names, with the tile-size helper TVM keeps here
(:func:`kiln.topi.nn.winograd.infer_tile_size`): the computes are the target-independent Winograd convolutions of
:mod:`kiln.topi.nn.conv_winograd` at the tile TVM's CUDA path picks, the schedules bind each kernel's outputs to GPU
threads (:mod:`kiln.topi.thread_schedule`); TVM's tuned CUDA kernels are not reproduced."""

from ..nn import conv_winograd
from ..nn.winograd import infer_tile_size as _infer_tile_size
from ..thread_schedule import bind_gpu, schedule_threads

__all__ = ["_infer_tile_size", "conv2d_nchw_winograd", "schedule_conv2d_nchw_winograd",
           "conv2d_nchw_winograd_without_weight_transform", "schedule_conv2d_nchw_winograd_without_weight_transform",
           "schedule_winograd_threads"]


def schedule_winograd_threads(outs):
    """The GPU schedule of a Winograd convolution: each stage's outputs over blocks of threads."""
    return schedule_threads(outs, bind_gpu)


def conv2d_nchw_winograd(data, kernel, strides, padding, dilation, out_dtype):
    """Winograd convolution of NCHW data with an OIHW kernel, 4x4 tiles when the height is a multiple of 8, else
    2x2 (TVM's CUDA choice)."""
    return conv_winograd.conv2d_winograd_nchw(data, kernel, strides, padding, dilation, out_dtype,
                                              tile_size=_infer_tile_size(data, kernel))


def conv2d_nchw_winograd_without_weight_transform(data, kernel, strides, padding, dilation, out_dtype, tile_size=4):
    """Winograd convolution of NCHW data with a weight transformed to ``(alpha, alpha, CO, CI)``."""
    return conv_winograd.conv2d_winograd_nchw_without_weight_transform(data, kernel, strides, padding, dilation,
                                                                       out_dtype, tile_size)


schedule_conv2d_nchw_winograd = schedule_winograd_threads
schedule_conv2d_nchw_winograd_without_weight_transform = schedule_winograd_threads
