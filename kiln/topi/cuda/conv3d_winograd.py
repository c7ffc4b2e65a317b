"""``topi.cuda.conv3d_ncdhw_winograd`` at TVM's name, with the tile-size helper TVM keeps here: the
target-independent 3-D Winograd convolution of :mod:`kiln.topi.nn.conv_winograd` (the depth transformed when the
kernel has 3..7 taps along it) with the thread-binding schedule."""

from ...error import OpAttributeInvalid
from ..nn import conv_winograd
from ..nn.winograd import infer_tile_size as _infer_tile_size
from ..utils import get_const_tuple
from .conv2d_winograd import schedule_winograd_threads

__all__ = ["_infer_tile_size", "conv3d_ncdhw_winograd", "schedule_conv3d_ncdhw_winograd"]


def conv3d_ncdhw_winograd(data, kernel, strides, padding, dilation, groups, out_dtype):
    """3-D Winograd convolution of NCDHW data with an OIDHW kernel (``groups`` must be 1)."""
    if groups != 1:
        raise OpAttributeInvalid(f"conv3d_ncdhw_winograd: groups must be 1, got {groups}")
    tile = _infer_tile_size(data, kernel)
    packed = conv_winograd.conv3d_winograd_weight_transform(kernel, tile)
    return conv_winograd.conv3d_winograd_without_weight_transform(data, packed, strides, padding, dilation,
                                                                  out_dtype, tile, get_const_tuple(kernel.shape)[2:])


schedule_conv3d_ncdhw_winograd = schedule_winograd_threads
