"""Generic computes of the convolutions and poolings of :mod:`kiln.relay.op.nn_conv` (1-D/3-D, transposed,
adaptive) and the other ``relay.nn`` operators beyond the seed set: adapters from each call's attributes to
:mod:`kiln.topi.nn.convnd`, :mod:`kiln.topi.nn.poolnd` and :mod:`kiln.topi.nn.extra`, merged into
:data:`.generic.COMPUTES`."""

from ....topi import regular_nms
from ....topi.image import crop, grid, resize_nd
from ....topi.nn import bitserial, conv_gemm, conv_winograd, convnd, extra, grad, loss, poolnd, sparse
from ....topi.nn.deformable_conv2d import deformable_conv2d
from ....topi.nn.softmax import softmax
from ....topi.sort import topk
from ....topi.vision import roi_align_nchw, roi_pool_nchw
from ....topi.vision_counts import get_valid_counts, multibox_transform_loc

__all__ = ["NN_COMPUTES"]


def _out_dtype(attrs, out_type):
    return attrs.out_dtype or out_type.dtype


def _conv(attrs, inputs, out_type):
    return [convnd.conv(inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.dilation, attrs.groups,
                        attrs.data_layout, attrs.kernel_layout, attrs.out_layout, _out_dtype(attrs, out_type))]


def _conv_transpose(attrs, inputs, out_type):
    return [convnd.conv_transpose(inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.output_padding,
                                  attrs.dilation, attrs.groups, attrs.data_layout, attrs.kernel_layout,
                                  attrs.out_layout, _out_dtype(attrs, out_type))]


def _relayout(out, attrs):
    from ....topi.transform import layout_transform

    return layout_transform(out, attrs.layout, attrs.out_layout) if attrs.out_layout and \
        attrs.out_layout != attrs.layout else out


def _pool(kind):
    def fcompute(attrs, inputs, out_type):
        out = poolnd.pool(inputs[0], attrs.pool_size, attrs.strides, attrs.dilation, attrs.padding, kind,
                          attrs.ceil_mode, attrs.layout, getattr(attrs, "count_include_pad", False))
        return [_relayout(out, attrs)]

    return fcompute


def _adaptive(kind):
    def fcompute(attrs, inputs, out_type):
        return [_relayout(poolnd.adaptive_pool(inputs[0], attrs.output_size, kind, attrs.layout), attrs)]

    return fcompute


def _conv2d_generic(attrs, inputs, out_type):
    from ....topi import nn as topi_nn

    return [topi_nn.conv2d(inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.dilation, attrs.data_layout,
                           attrs.kernel_layout, attrs.out_dtype or out_type.dtype, groups=attrs.groups,
                           out_layout=attrs.out_layout)]


def _resize(fn):
    def fcompute(attrs, inputs, out_type):
        return [fn(inputs[0], attrs.roi, attrs.size, attrs.layout, attrs.method, attrs.coordinate_transformation_mode,
                   attrs.rounding_method, attrs.cubic_alpha, attrs.cubic_exclude, attrs.extrapolation_value,
                   attrs.out_dtype or out_type.dtype)]

    return fcompute


def _mirror_pad(attrs, inputs, out_type):
    return [extra.mirror_pad(inputs[0], [p[0] for p in attrs.pad_width], [p[1] for p in attrs.pad_width],
                             attrs.mode)]


def _winograd(attrs, inputs, out_type):
    """The Winograd convolutions in their primal layout (NCHW/NCDHW), the data and result transformed around it."""
    from ....topi.transform import layout_transform

    nd = len(attrs.strides)
    primal = "NCHW" if nd == 2 else "NCDHW"
    data = inputs[0] if attrs.data_layout == primal else layout_transform(inputs[0], attrs.data_layout, primal)
    # a 2-D kernel_size the relation read off the weight: alpha - tile_size + 1
    ksize = attrs.kernel_size or (int(inputs[1].shape[0]) - attrs.tile_size + 1,) * 2
    transformed = (True, True) if nd == 2 else (conv_winograd.depth_transformed(ksize[0]), True, True)
    out = conv_winograd.winograd_conv(data, inputs[1], attrs.tile_size, ksize, transformed,
                                      attrs.padding, out_type.dtype, "winograd_without_weight_transform")
    out_layout = attrs.out_layout or attrs.data_layout
    return [out if out_layout == primal else layout_transform(out, primal, out_layout)]


def _gemm(attrs, inputs, out_type):
    """The GEMM convolution in NHWC, the data and result transformed around it."""
    from ....topi.transform import layout_transform

    data = inputs[0] if attrs.data_layout == "NHWC" else layout_transform(inputs[0], attrs.data_layout, "NHWC")
    out = conv_gemm.conv2d_gemm_without_weight_transform(data, inputs[1], attrs.strides, attrs.padding,
                                                         attrs.dilation, out_type.dtype, attrs.kernel_size,
                                                         attrs.channels)
    out_layout = attrs.out_layout or attrs.data_layout
    return [out if out_layout == "NHWC" else layout_transform(out, "NHWC", out_layout)]


NN_COMPUTES = {
    "vision.regular_non_max_suppression": lambda attrs, inputs, out_type: regular_nms.regular_non_max_suppression(
        inputs[0], inputs[1], attrs.max_detections_per_class, attrs.max_detections, attrs.num_classes,
        attrs.iou_threshold, attrs.score_threshold),
    "nn.sparse_conv2d": lambda attrs, inputs, out_type: [sparse.sparse_conv2d(
        inputs[0], inputs[1], inputs[2], inputs[3], attrs.layout, attrs.kernel_size)],
    "nn.sparse_transpose": lambda attrs, inputs, out_type: sparse.sparse_transpose(inputs[0], inputs[1], inputs[2]),
    "image.resize1d": _resize(resize_nd.resize1d),
    "image.resize3d": _resize(resize_nd.resize3d),
    "nn.upsampling": lambda attrs, inputs, out_type: [resize_nd.upsampling(
        inputs[0], attrs.scale_h, attrs.scale_w, attrs.layout, attrs.method, attrs.align_corners)],
    "nn.upsampling3d": lambda attrs, inputs, out_type: [resize_nd.upsampling3d(
        inputs[0], attrs.scale_d, attrs.scale_h, attrs.scale_w, attrs.layout, attrs.method,
        attrs.coordinate_transformation_mode)],
    "nn.prelu": lambda attrs, inputs, out_type: [extra.prelu(inputs[0], inputs[1], attrs.axis)],
    "nn.depth_to_space": lambda attrs, inputs, out_type: [extra.depth_to_space(inputs[0], attrs.block_size,
                                                                               attrs.layout, attrs.mode)],
    "nn.space_to_depth": lambda attrs, inputs, out_type: [extra.space_to_depth(inputs[0], attrs.block_size,
                                                                               attrs.layout)],
    "nn.l2_normalize": lambda attrs, inputs, out_type: [extra.l2_normalize(inputs[0], attrs.eps, attrs.axis)],
    "nn.instance_norm": lambda attrs, inputs, out_type: [extra.instance_norm(
        inputs[0], inputs[1], inputs[2], attrs.axis, attrs.epsilon, attrs.center, attrs.scale)],
    "nn.group_norm": lambda attrs, inputs, out_type: [extra.group_norm(
        inputs[0], inputs[1], inputs[2], attrs.num_groups, attrs.axis, attrs.epsilon, attrs.center, attrs.scale)],
    "nn.mirror_pad": _mirror_pad,
    "vision.roi_align": lambda attrs, inputs, out_type: [roi_align_nchw(
        inputs[0], inputs[1], attrs.pooled_size, attrs.spatial_scale, attrs.mode, attrs.sample_ratio, attrs.layout)],
    "vision.roi_pool": lambda attrs, inputs, out_type: [roi_pool_nchw(inputs[0], inputs[1], attrs.pooled_size,
                                                                      attrs.spatial_scale)],
    "image.crop_and_resize": lambda attrs, inputs, out_type: [crop.crop_and_resize(
        inputs[0], inputs[1], inputs[2], attrs.crop_size, attrs.layout, attrs.method, attrs.extrapolation_value,
        out_type.dtype)],
    "image.dilation2d": lambda attrs, inputs, out_type: [crop.dilation2d(
        inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.dilations, attrs.data_layout, out_type.dtype)],
    "nn.deformable_conv2d": lambda attrs, inputs, out_type: [deformable_conv2d(
        inputs[0], inputs[1], inputs[2], attrs.strides, attrs.padding, attrs.dilation, attrs.deformable_groups,
        attrs.groups, attrs.data_layout, out_type.dtype)],
    "sort": lambda attrs, inputs, out_type: [topk(inputs[0], 0, attrs.axis, "values", attrs.is_ascend)],
    "nn.dilate": lambda attrs, inputs, out_type: [loss.dilate(inputs[0], attrs.strides, attrs.dilation_value)],
    "nn.space_to_batch_nd": lambda attrs, inputs, out_type: [loss.space_to_batch_nd(
        inputs[0], attrs.block_shape, attrs.paddings, attrs.pad_value)],
    "nn.batch_to_space_nd": lambda attrs, inputs, out_type: [loss.batch_to_space_nd(inputs[0], attrs.block_shape,
                                                                                    attrs.crops)],
    "nn.cross_entropy": lambda attrs, inputs, out_type: [loss.cross_entropy(inputs[0], inputs[1])],
    "nn.cross_entropy_with_logits": lambda attrs, inputs, out_type: [loss.cross_entropy(inputs[0], inputs[1], True)],
    "nn.nll_loss": lambda attrs, inputs, out_type: [loss.nll_loss(inputs[0], inputs[1], inputs[2], attrs.reduction,
                                                                  attrs.ignore_index)],
    "image.affine_grid": lambda attrs, inputs, out_type: [grid.affine_grid(inputs[0], attrs.target_shape)],
    "image.grid_sample": lambda attrs, inputs, out_type: [grid.grid_sample(
        inputs[0], inputs[1], attrs.method, attrs.padding_mode, attrs.align_corners, attrs.layout)],
    "vision.yolo_reorg": lambda attrs, inputs, out_type: [grid.reorg(inputs[0], attrs.stride)],
    "nn.contrib_conv2d_NCHWc": lambda attrs, inputs, out_type: _conv2d_generic(attrs, inputs, out_type),
    "nn.contrib_depthwise_conv2d_NCHWc": lambda attrs, inputs, out_type: _conv2d_generic(attrs, inputs, out_type),
    "nn.correlation": lambda attrs, inputs, out_type: [crop.correlation_nchw(
        inputs[0], inputs[1], attrs.kernel_size, attrs.max_displacement, attrs.stride1, attrs.stride2, attrs.padding,
        attrs.is_multiply)],
    "vision.get_valid_counts": lambda attrs, inputs, out_type: get_valid_counts(inputs[0], inputs[1](),
                                                                                attrs.id_index, attrs.score_index),
    "nn.conv2d_backward_weight": lambda attrs, inputs, out_type: [grad.conv2d_backward_weight_nchw(
        inputs[0], inputs[1], attrs.kernel_size, attrs.strides, attrs.padding, attrs.dilation, attrs.groups,
        out_type.dtype)],
    "nn.max_pool2d_grad": lambda attrs, inputs, out_type: [grad.pool_grad_nchw(
        inputs[0], inputs[1], attrs.pool_size, attrs.strides, attrs.padding, "max", attrs.ceil_mode)],
    "nn.avg_pool2d_grad": lambda attrs, inputs, out_type: [grad.pool_grad_nchw(
        inputs[0], inputs[1], attrs.pool_size, attrs.strides, attrs.padding, "avg", attrs.ceil_mode,
        attrs.count_include_pad)],
    "vision.multibox_transform_loc": lambda attrs, inputs, out_type: multibox_transform_loc(
        inputs[0], inputs[1], inputs[2], attrs.clip, attrs.threshold, attrs.variances, attrs.keep_background),
    "nn.fast_softmax": lambda attrs, inputs, out_type: [softmax(inputs[0], attrs.axis)],
    "nn.bitpack": lambda attrs, inputs, out_type: [bitserial.bitpack(
        inputs[0], attrs.bits, attrs.pack_axis % len(inputs[0].shape), attrs.bit_axis % (len(inputs[0].shape) + 1),
        attrs.pack_type, attrs.name)],
    "nn.bitserial_conv2d": lambda attrs, inputs, out_type: [bitserial.bitserial_conv2d(
        inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.activation_bits, attrs.weight_bits,
        attrs.out_dtype, attrs.unipolar, attrs.data_layout, attrs.kernel_layout)],
    "nn.bitserial_dense": lambda attrs, inputs, out_type: [bitserial.bitserial_dense(
        inputs[0], inputs[1], attrs.data_bits, attrs.weight_bits, attrs.out_dtype, attrs.unipolar)],
    "nn.contrib_conv2d_winograd_weight_transform": lambda attrs, inputs, out_type: [
        conv_winograd.conv2d_winograd_weight_transform(inputs[0], attrs.tile_size)],
    "nn.contrib_conv3d_winograd_weight_transform": lambda attrs, inputs, out_type: [
        conv_winograd.conv3d_winograd_weight_transform(inputs[0], attrs.tile_size)],
    "nn.contrib_conv2d_gemm_weight_transform": lambda attrs, inputs, out_type: [
        conv_gemm.conv2d_gemm_weight_transform(inputs[0], attrs.tile_N, attrs.tile_K)],
    "nn.contrib_conv2d_winograd_without_weight_transform": _winograd,
    "nn.contrib_conv3d_winograd_without_weight_transform": _winograd,
    "nn.contrib_conv2d_gemm_without_weight_transform": _gemm,
    **{name: _conv for name in ("nn.conv1d", "nn.conv3d")},
    **{name: _conv_transpose for name in ("nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose")},
    **{f"nn.{kind}_pool{n}d": _pool(kind) for kind in ("max", "avg") for n in (1, 3)},
    **{f"nn.adaptive_{kind}_pool{n}d": _adaptive(kind) for kind in ("max", "avg") for n in (1, 2, 3)},
}
"""Relay operator name -> ``FTVMCompute`` of the operators this module covers."""
