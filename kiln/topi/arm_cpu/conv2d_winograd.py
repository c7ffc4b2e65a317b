"""``topi.arm_cpu.conv2d_nchw_winograd`` at TVM's name: the Winograd F(4x4, 3x3) convolution of
:mod:`kiln.topi.nn.conv_winograd` (TVM's Arm tile), scheduled as any CPU group."""

from ..nn import conv_winograd
from ..x86.dispatch import schedule_auto

__all__ = ["conv2d_nchw_winograd", "schedule_conv2d_nchw_winograd"]


def conv2d_nchw_winograd(data, kernel, strides, padding, dilation, out_dtype):
    """Winograd convolution of NCHW data with an OIHW kernel, 4x4 output tiles."""
    return conv_winograd.conv2d_winograd_nchw(data, kernel, strides, padding, dilation, out_dtype, tile_size=4)


def schedule_conv2d_nchw_winograd(outs):
    """The CPU schedule of the group (:func:`kiln.topi.x86.schedule_auto`)."""
    return schedule_auto(outs)
