"""The Winograd and GEMM convolutions of :mod:`kiln.relay.op.nn_winograd` in numpy: topi's references
(:mod:`kiln.topi.testing.winograd`), with the data moved to the primal layout and back."""

from ...topi.nn.conv_winograd import depth_transformed
from ...topi.testing import winograd as W
from .common import np_dtype, register
from .transform import convert_layout


@register("nn.contrib_conv2d_winograd_weight_transform")
def conv2d_weight_transform(attrs, weight):
    """OIHW -> ``(alpha, alpha, CO, CI)``."""
    return W.conv2d_winograd_weight_transform_python(weight, attrs.tile_size)


@register("nn.contrib_conv3d_winograd_weight_transform")
def conv3d_weight_transform(attrs, weight):
    """OIDHW -> ``(alpha, alpha, alpha or KD, CO, CI)``."""
    return W.conv3d_winograd_weight_transform_python(weight, attrs.tile_size)


@register("nn.contrib_conv2d_winograd_without_weight_transform", "nn.contrib_conv3d_winograd_without_weight_transform")
def winograd_conv(attrs, data, weight):
    """Winograd convolution of a transformed weight, in any data layout with the primal axes."""
    primal = "NCHW" if len(attrs.strides) == 2 else "NCDHW"
    ksize = tuple(attrs.kernel_size) if attrs.kernel_size is not None else (weight.shape[0] - attrs.tile_size + 1,) * 2
    transformed = (True, True) if len(ksize) == 2 else (depth_transformed(ksize[0]), True, True)
    x = convert_layout(data, attrs.data_layout, primal)
    out = W.winograd_conv_python(x, weight, attrs.tile_size, ksize, transformed, attrs.padding,
                                 np_dtype(attrs.out_dtype or data.dtype))
    return convert_layout(out, primal, attrs.out_layout or attrs.data_layout)


@register("nn.contrib_conv2d_gemm_weight_transform")
def gemm_weight_transform(attrs, weight):
    """HWIO -> its tiles."""
    return W.conv2d_gemm_weight_transform_python(weight, attrs.tile_N, attrs.tile_K)


@register("nn.contrib_conv2d_gemm_without_weight_transform")
def gemm_conv(attrs, data, weight):
    """The GEMM convolution of a tiled weight, in any data layout with the NHWC axes."""
    x = convert_layout(data, attrs.data_layout, "NHWC")
    out = W.conv2d_gemm_nhwc_python(x, weight, attrs.kernel_size, attrs.channels, attrs.strides, attrs.padding,
                                    attrs.dilation, np_dtype(attrs.out_dtype or data.dtype))
    return convert_layout(out, "NHWC", attrs.out_layout or attrs.data_layout)
