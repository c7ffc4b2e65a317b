"""More ``relay.nn`` operators: ``nn.prelu nn.upsampling nn.upsampling3d nn.depth_to_space nn.space_to_depth
nn.l2_normalize nn.instance_norm nn.group_norm nn.mirror_pad nn.fast_softmax nn.dilate nn.space_to_batch_nd
nn.batch_to_space_nd nn.cross_entropy nn.cross_entropy_with_logits nn.nll_loss``, and the gradients
``nn.conv2d_backward_weight nn.max_pool2d_grad nn.avg_pool2d_grad``."""

import math

from ...error import TypeInferenceError
from ...ir.op import register_op_attr
from ...ir.type import Any, TensorType, is_any
from ...tir.layout import layout as parse_layout
from ...topi.image.resize_nd import upsampled_size
from . import attrs as AS
from . import attrs_image as AI
from . import attrs_nn as A
from .attrs import SoftmaxAttrs
from .nn import per_channel_rel
from .op import OpPattern, make_call, register_relay_op
from .type_relations import (
    ALL,
    FLOAT,
    INTEGER,
    NUMERIC,
    channel_vector_types,
    identity_rel,
    nonpositive,
    normalize_axis,
    same_dtype,
    shapes_match,
    tensor_arg,
)

register_relay_op("nn.prelu", 2, per_channel_rel("nn.prelu", "alpha"), OpPattern.BROADCAST, A.PReluAttrs,
                  dtypes=NUMERIC)
register_op_attr("nn.prelu", "FInferArgTypes", channel_vector_types(1))


def prelu(data, alpha, axis=1):
    """``data`` where positive, ``alpha[c] * data`` elsewhere (``c`` the index along ``axis``)."""
    return make_call("nn.prelu", [data, alpha], A.PReluAttrs(int(axis)))


def _upsampling_rel(op, scales):
    def relation(types, attrs):
        data = tensor_arg(types, 0, "data")
        lay = parse_layout(attrs.layout)
        if lay.ndim != data.ndim or any(lay.index_of(a) < 0 for a in scales):
            raise TypeInferenceError(f"{op}: data {data} does not fit layout {attrs.layout}")
        shape = list(data.shape)
        for a, name in scales.items():
            size, scale = shape[lay.index_of(a)], getattr(attrs, name)
            # a size known only at run time gives one too (the same one when the scale is 1)
            shape[lay.index_of(a)] = (size if scale == 1 else Any()) if is_any(size) else upsampled_size(size, scale)
        return TensorType(tuple(shape), data.dtype)

    return relation


register_relay_op("nn.upsampling", 1, _upsampling_rel("nn.upsampling", {"H": "scale_h", "W": "scale_w"}),
                  OpPattern.INJECTIVE, AI.UpSamplingAttrs, dtypes=NUMERIC)
register_relay_op("nn.upsampling3d", 1, _upsampling_rel("nn.upsampling3d", {"D": "scale_d", "H": "scale_h",
                                                                            "W": "scale_w"}),
                  OpPattern.INJECTIVE, AI.UpSampling3DAttrs, dtypes=NUMERIC)


def _scale(value):
    """A scale given as a number or, as TVM's builders accept, a Relay constant."""
    data = getattr(value, "data", None)
    return float(data.numpy().item()) if data is not None and hasattr(data, "numpy") else float(value)


def _dynamic_scales(scales):
    """The scales as Relay expressions when one is known only at run time (numbers become float64 constants, as
    TVM's builders make them), else None."""
    from ...ir.expr import RelayExpr
    from ..expr import const
    from .dispatch import is_dynamic

    if not any(is_dynamic(s) for s in scales):
        return None
    return [s if isinstance(s, RelayExpr) else const(float(s), "float64") for s in scales]


def upsampling(data, scale_h=1, scale_w=1, layout="NCHW", method="nearest_neighbor", align_corners=False):
    """Upsample the H x W plane by ``scale_h`` x ``scale_w`` (nearest_neighbor, bilinear or bicubic); a scale that
    is a non-constant Relay expression (a numeric scalar) makes ``dyn.nn.upsampling``."""
    dynamic = _dynamic_scales([scale_h, scale_w])
    if dynamic is not None:
        from .dispatch import dyn_ops

        return dyn_ops().nn.upsampling(data, *dynamic, layout, method, align_corners)
    return make_call("nn.upsampling", [data], AI.UpSamplingAttrs(_scale(scale_h), _scale(scale_w), layout, method,
                                                                 bool(align_corners)))


def upsampling3d(data, scale_d=1, scale_h=1, scale_w=1, layout="NCDHW", method="nearest_neighbor",
                 coordinate_transformation_mode="half_pixel"):
    """Upsample the D x H x W volume by the three scales (nearest_neighbor or trilinear); a scale that is a
    non-constant Relay expression (a numeric scalar) makes ``dyn.nn.upsampling3d``."""
    dynamic = _dynamic_scales([scale_d, scale_h, scale_w])
    if dynamic is not None:
        from .dispatch import dyn_ops

        return dyn_ops().nn.upsampling3d(data, *dynamic, layout, method, coordinate_transformation_mode)
    return make_call("nn.upsampling3d", [data], AI.UpSampling3DAttrs(
        _scale(scale_d), _scale(scale_h), _scale(scale_w), layout, method, coordinate_transformation_mode))


def _subpixel_rel(op, to_space):
    def relation(types, attrs):
        data = tensor_arg(types, 0, "data")
        if data.ndim != 4:
            raise TypeInferenceError(f"{op}: data {data} must have rank 4 ({attrs.layout})")
        c, h, w = (attrs.layout.index(a) for a in "CHW")
        b = attrs.block_size
        shape = list(data.shape)
        if to_space:
            if shape[c] % (b * b):
                raise TypeInferenceError(f"{op}: {shape[c]} channels of {data} are not divisible by "
                                         f"block_size**2 = {b * b}")
            shape[c], shape[h], shape[w] = shape[c] // (b * b), shape[h] * b, shape[w] * b
        else:
            if shape[h] % b or shape[w] % b:
                raise TypeInferenceError(f"{op}: the spatial size of {data} is not divisible by block_size {b}")
            shape[c], shape[h], shape[w] = shape[c] * b * b, shape[h] // b, shape[w] // b
        return TensorType(tuple(shape), data.dtype)

    return relation


register_relay_op("nn.depth_to_space", 1, _subpixel_rel("nn.depth_to_space", True), OpPattern.INJECTIVE,
                  A.SubPixelAttrs, dtypes=ALL)
register_relay_op("nn.space_to_depth", 1, _subpixel_rel("nn.space_to_depth", False), OpPattern.INJECTIVE,
                  A.SubPixelAttrs, dtypes=ALL)


def depth_to_space(data, block_size, layout="NCHW", mode="DCR"):
    """Rearrange blocks of ``block_size**2`` channels into ``block_size`` x ``block_size`` spatial blocks."""
    return make_call("nn.depth_to_space", [data], A.SubPixelAttrs(int(block_size), layout, mode))


def space_to_depth(data, block_size, layout="NCHW"):
    """Rearrange ``block_size`` x ``block_size`` spatial blocks into channels."""
    return make_call("nn.space_to_depth", [data], A.SubPixelAttrs(int(block_size), layout))


def _l2_normalize_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    for a in attrs.axis or ():
        normalize_axis(a, data.ndim, "nn.l2_normalize axis")
    return data


register_relay_op("nn.l2_normalize", 1, _l2_normalize_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.L2NormalizeAttrs,
                  dtypes=FLOAT)


def l2_normalize(data, eps, axis=None):
    """``data / sqrt(max(sum(data**2 over axis), eps))``."""
    return make_call("nn.l2_normalize", [data], A.L2NormalizeAttrs(float(eps), None if axis is None else
                                                                   tuple(axis)))


def _norm_rel(op, groups):
    def relation(types, attrs):
        data, gamma, beta = (tensor_arg(types, i, n) for i, n in enumerate(["data", "gamma", "beta"]))
        axis = normalize_axis(attrs.axis, data.ndim, f"{op} axis")
        c = data.shape[axis]
        if not (shapes_match(gamma.shape, (c,)) and shapes_match(beta.shape, (c,))):
            raise TypeInferenceError(f"{op}: gamma {gamma} and beta {beta} must be Tensor[({c},)] for axis {axis} "
                                     f"of {data}")
        if groups and (attrs.num_groups <= 0 or c % attrs.num_groups):
            raise TypeInferenceError(f"{op}: num_groups={attrs.num_groups} does not divide the {c} channels of "
                                     f"{data}")
        same_dtype([data, gamma, beta], f"{op} data, gamma and beta")
        return data

    return relation


register_relay_op("nn.instance_norm", 3, _norm_rel("nn.instance_norm", False), OpPattern.OPAQUE,
                  A.InstanceNormAttrs, dtypes=FLOAT)
register_op_attr("nn.instance_norm", "FInferArgTypes", channel_vector_types(1, 2))
register_relay_op("nn.group_norm", 3, _norm_rel("nn.group_norm", True), OpPattern.OPAQUE, A.GroupNormAttrs,
                  dtypes=FLOAT)
register_op_attr("nn.group_norm", "FInferArgTypes", channel_vector_types(1, 2))


def instance_norm(data, gamma, beta, axis=1, epsilon=1e-5, center=True, scale=True):
    """Normalize each instance and channel over the other axes, then scale by ``gamma`` and shift by ``beta``."""
    return make_call("nn.instance_norm", [data, gamma, beta], A.InstanceNormAttrs(int(axis), float(epsilon),
                                                                                  bool(center), bool(scale)))


def group_norm(data, gamma, beta, num_groups, axis=1, epsilon=1e-5, center=True, scale=True):
    """Normalize each instance over groups of ``C / num_groups`` channels and the other axes, then scale by
    ``gamma`` and shift by ``beta`` per channel."""
    return make_call("nn.group_norm", [data, gamma, beta], A.GroupNormAttrs(
        int(num_groups), int(axis), float(epsilon), bool(center), bool(scale)))


def _mirror_pad_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    if len(attrs.pad_width) != data.ndim:
        raise TypeInferenceError(f"nn.mirror_pad: pad_width has {len(attrs.pad_width)} pairs for {data}")
    limit = 0 if attrs.mode == "SYMMETRIC" else 1
    if any(not is_any(d) and max(p) > d - limit for p, d in zip(attrs.pad_width, data.shape, strict=True)):
        raise TypeInferenceError(f"nn.mirror_pad: pad_width {attrs.pad_width} is larger than {data} allows in "
                                 f"{attrs.mode} mode")
    return TensorType(tuple(d + a + b for d, (a, b) in zip(data.shape, attrs.pad_width, strict=True)), data.dtype)


register_relay_op("nn.mirror_pad", 1, _mirror_pad_rel, OpPattern.INJECTIVE, A.MirrorPadAttrs, dtypes=ALL)


def mirror_pad(data, pad_width, mode="SYMMETRIC"):
    """Pad each axis by ``(before, after)`` with the mirror image of ``data`` at its edges."""
    return make_call("nn.mirror_pad", [data], A.MirrorPadAttrs(mode, tuple(tuple(p) for p in pad_width)))


def _softmax_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    normalize_axis(attrs.axis, data.ndim, "nn.fast_softmax axis")
    return data


register_relay_op("nn.fast_softmax", 1, _softmax_rel, OpPattern.OUT_ELEMWISE_FUSABLE, SoftmaxAttrs, dtypes=FLOAT)


def fast_softmax(data, axis=-1):
    """Softmax along ``axis`` (TVM's approximation of ``exp``; kiln's float32 ``exp`` is already the fast one)."""
    return make_call("nn.fast_softmax", [data], SoftmaxAttrs(int(axis)))


def _dilate_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    if len(attrs.strides) != data.ndim:
        raise TypeInferenceError(f"nn.dilate: {len(attrs.strides)} strides for {data}")
    return TensorType(tuple((d - 1) * s + 1 for d, s in zip(data.shape, attrs.strides, strict=True)), data.dtype)


register_relay_op("nn.dilate", 1, _dilate_rel, OpPattern.INJECTIVE, A.DilateAttrs, dtypes=NUMERIC)


def dilate(data, strides, dilation_value=0.0):
    """Insert ``strides[i] - 1`` elements of ``dilation_value`` between neighbours along each axis ``i``."""
    return make_call("nn.dilate", [data], A.DilateAttrs(tuple(strides), float(dilation_value)))


def _space_to_batch_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    m = len(attrs.block_shape)
    if data.ndim < m + 1:
        raise TypeInferenceError(f"nn.space_to_batch_nd: {m} block axes for {data}")
    shape = [data.shape[0] * math.prod(attrs.block_shape)]
    for k, (b, (lo, hi)) in enumerate(zip(attrs.block_shape, attrs.paddings, strict=True)):
        padded = data.shape[1 + k] + lo + hi
        if padded % b:
            raise TypeInferenceError(f"nn.space_to_batch_nd: padded axis {1 + k} of {data} ({padded}) is not "
                                     f"divisible by block {b}")
        shape.append(padded // b)
    return TensorType(tuple(shape) + data.shape[1 + m:], data.dtype)


def _batch_to_space_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    m, blocks = len(attrs.block_shape), math.prod(attrs.block_shape)
    # a batch known only at run time is checked then (the kernel's reshape records it)
    if data.ndim < m + 1 or (not is_any(data.shape[0]) and data.shape[0] % blocks):
        raise TypeInferenceError(f"nn.batch_to_space_nd: the batch of {data} is not divisible by the "
                                 f"{blocks} blocks of {attrs.block_shape}")
    shape = [data.shape[0] // blocks]
    for k, (b, (lo, hi)) in enumerate(zip(attrs.block_shape, attrs.crops, strict=True)):
        size = data.shape[1 + k] * b - lo - hi
        if nonpositive(size):
            raise TypeInferenceError(f"nn.batch_to_space_nd: crops {attrs.crops} leave nothing of {data}")
        shape.append(size)
    return TensorType(tuple(shape) + data.shape[1 + m:], data.dtype)


register_relay_op("nn.space_to_batch_nd", 1, _space_to_batch_rel, OpPattern.INJECTIVE, A.SpaceToBatchNDAttrs,
                  dtypes=ALL)
register_relay_op("nn.batch_to_space_nd", 1, _batch_to_space_rel, OpPattern.INJECTIVE, A.BatchToSpaceNDAttrs,
                  dtypes=ALL)


def space_to_batch_nd(data, block_shape, paddings, pad_value=0):
    """Pad the spatial axes (1..M) and move ``block_shape`` blocks of them into the batch (TensorFlow's
    ``space_to_batch_nd``)."""
    return make_call("nn.space_to_batch_nd", [data], A.SpaceToBatchNDAttrs(tuple(block_shape),
                                                                           tuple(tuple(p) for p in paddings),
                                                                           float(pad_value)))


def batch_to_space_nd(data, block_shape, crops):
    """Move batch blocks back into the spatial axes and crop them (TensorFlow's ``batch_to_space_nd``)."""
    return make_call("nn.batch_to_space_nd", [data], A.BatchToSpaceNDAttrs(tuple(block_shape),
                                                                           tuple(tuple(p) for p in crops)))


def _cross_entropy_rel(types, attrs):
    pred, target = tensor_arg(types, 0, "predictions"), tensor_arg(types, 1, "targets")
    if pred.shape != target.shape or pred.ndim < 1:
        raise TypeInferenceError(f"nn.cross_entropy: predictions {pred} and targets {target} must share a shape")
    same_dtype([pred, target], "nn.cross_entropy predictions and targets")
    return TensorType((), pred.dtype)


register_relay_op("nn.cross_entropy", 2, _cross_entropy_rel, OpPattern.OPAQUE, dtypes=FLOAT)
register_relay_op("nn.cross_entropy_with_logits", 2, _cross_entropy_rel, OpPattern.OPAQUE, dtypes=FLOAT)


def cross_entropy(predictions, targets):
    """``-sum(log(predictions) * targets) / batch``."""
    return make_call("nn.cross_entropy", [predictions, targets])


def cross_entropy_with_logits(predictions, targets):
    """``-sum(predictions * targets) / batch`` (``predictions`` are log-probabilities)."""
    return make_call("nn.cross_entropy_with_logits", [predictions, targets])


def _nll_loss_rel(types, attrs):
    pred, target, weights = (tensor_arg(types, i, n) for i, n in enumerate(["predictions", "targets", "weights"]))
    # sizes known only at run time are checked then (the kernel records the checks)
    if pred.ndim < 2 or not shapes_match(target.shape, (pred.shape[0],) + pred.shape[2:]) \
            or not shapes_match(weights.shape, (pred.shape[1],)):
        raise TypeInferenceError(f"nn.nll_loss: predictions {pred} must be (N, C, ...), targets {target} (N, ...) "
                                 f"and weights {weights} (C,)")
    same_dtype([pred, weights], "nn.nll_loss predictions and weights")
    return TensorType(target.shape if attrs.reduction == "none" else (), pred.dtype)


register_relay_op("nn.nll_loss", 3, _nll_loss_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.NLLLossAttrs,
                  dtypes=(FLOAT, INTEGER, FLOAT))


def nll_loss(predictions, targets, weights, reduction="mean", ignore_index=-100):
    """Negative log likelihood: ``-predictions[n, targets[n, ...], ...] * weights[target]`` (0 for
    ``ignore_index``), averaged over the weights, summed, or per element (``reduction``)."""
    return make_call("nn.nll_loss", [predictions, targets, weights], A.NLLLossAttrs(reduction, int(ignore_index)))


# ------------------------------------------------------------------------------------------------------- gradients
def _conv2d_backward_weight_rel(types, attrs):
    grad, data = tensor_arg(types, 0, "grad"), tensor_arg(types, 1, "data")
    if (attrs.data_layout, attrs.kernel_layout) != ("NCHW", "OIHW") or attrs.kernel_size is None:
        raise TypeInferenceError("nn.conv2d_backward_weight: needs NCHW data, an OIHW kernel and kernel_size")
    # the output channels are grad's channels (TVM reads them there too when `channels` is not given)
    channels = grad.shape[1] if attrs.channels is None or grad.ndim != 4 else attrs.channels
    if grad.ndim != 4 or data.ndim != 4 or grad.shape[0] != data.shape[0] or grad.shape[1] != channels:
        raise TypeInferenceError(f"nn.conv2d_backward_weight: grad {grad} must be (N, channels, OH, OW) for data "
                                 f"{data}")
    same_dtype([grad, data], "nn.conv2d_backward_weight grad and data")
    return TensorType((channels, data.shape[1] // attrs.groups) + tuple(attrs.kernel_size),
                      attrs.out_dtype or data.dtype)


register_relay_op("nn.conv2d_backward_weight", 2, _conv2d_backward_weight_rel, OpPattern.OUT_ELEMWISE_FUSABLE,
                  AS.Conv2DAttrs, dtypes=FLOAT)


def conv2d_backward_weight(grad, data, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, channels=None,
                           kernel_size=None, grad_layout="NCHW", data_layout="NCHW", kernel_layout="OIHW",
                           out_dtype=""):
    """The gradient of ``nn.conv2d`` with respect to its weight, from the output gradient ``grad`` and the input
    ``data``."""
    del grad_layout  # the gradient is laid out as the data (NCHW)
    return make_call("nn.conv2d_backward_weight", [grad, data], AS.Conv2DAttrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout, "", out_dtype))


def _pool_grad_rel(op):
    def relation(types, attrs):
        out_grad, data = tensor_arg(types, 0, "out_grad"), tensor_arg(types, 1, "data")
        if attrs.layout != "NCHW" or tuple(attrs.dilation) != (1, 1):
            raise TypeInferenceError(f"{op}: needs the NCHW layout and no dilation")
        if data.ndim != 4 or out_grad.ndim != 4 or out_grad.shape[:2] != data.shape[:2]:
            raise TypeInferenceError(f"{op}: out_grad {out_grad} does not fit data {data}")
        same_dtype([out_grad, data], f"{op} out_grad and data")
        return data

    return relation


register_relay_op("nn.max_pool2d_grad", 2, _pool_grad_rel("nn.max_pool2d_grad"), OpPattern.OUT_ELEMWISE_FUSABLE,
                  AS.MaxPool2DAttrs, dtypes=FLOAT)
register_relay_op("nn.avg_pool2d_grad", 2, _pool_grad_rel("nn.avg_pool2d_grad"), OpPattern.OUT_ELEMWISE_FUSABLE,
                  AS.AvgPool2DAttrs, dtypes=FLOAT)


def max_pool2d_grad(out_grad, data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0), layout="NCHW",
                    out_layout="", ceil_mode=False):
    """The gradient of ``nn.max_pool2d`` with respect to its input."""
    return make_call("nn.max_pool2d_grad", [out_grad, data], AS.MaxPool2DAttrs(
        pool_size, strides, (1, 1), padding, layout, out_layout, ceil_mode))


def avg_pool2d_grad(out_grad, data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0), layout="NCHW",
                    out_layout="", ceil_mode=False, count_include_pad=True):
    """The gradient of ``nn.avg_pool2d`` with respect to its input."""
    return make_call("nn.avg_pool2d_grad", [out_grad, data], AS.AvgPool2DAttrs(
        pool_size, strides, (1, 1), padding, layout, out_layout, ceil_mode, count_include_pad))


register_relay_op("nn.lrn", 1, identity_rel, OpPattern.OPAQUE, AS.LRNAttrs, dtypes=FLOAT)


def lrn(data, size=5, axis=1, bias=2, alpha=0.00001, beta=0.75):
    """Local response normalization across ``size`` neighbouring channels."""
    return make_call("nn.lrn", [data], AS.LRNAttrs(int(size), int(axis), bias, alpha, beta))
