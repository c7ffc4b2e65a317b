"""kiln.topi.mali: TVM's Mali GPU entry points that its tests name (``conv2d_nchw_winograd``): the
target-independent computes with the thread-binding schedule, as :mod:`kiln.topi.cuda` has them; kiln compiles for
CPUs only."""

from ..cuda.conv2d_winograd import conv2d_nchw_winograd, schedule_conv2d_nchw_winograd

__all__ = ["conv2d_nchw_winograd", "schedule_conv2d_nchw_winograd"]
