"""Vision operators (``relay.vision``): ``vision.roi_align vision.roi_pool vision.yolo_reorg``.

Both take NCHW feature maps and regions ``(num_roi, 5)`` as ``[batch_index, x1, y1, x2, y2]`` in image
coordinates (scaled by ``spatial_scale``), and give ``(num_roi, C, pooled_h, pooled_w)``.
"""

from ...error import TypeInferenceError
from ...ir.type import TensorType
from . import attrs_image as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import FLOAT, same_dtype, tensor_arg


def _roi_rel(op):
    def relation(types, attrs):
        data, rois = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "rois")
        if data.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 5:
            raise TypeInferenceError(f"{op}: data {data} must be NCHW and rois {rois} (num_roi, 5)")
        same_dtype([data, rois], f"{op} data and rois")
        return TensorType((rois.shape[0], data.shape[1]) + tuple(attrs.pooled_size), data.dtype)

    return relation


register_relay_op("vision.roi_align", 2, _roi_rel("vision.roi_align"), OpPattern.OUT_ELEMWISE_FUSABLE,
                  A.ROIAlignAttrs, dtypes=FLOAT)
register_relay_op("vision.roi_pool", 2, _roi_rel("vision.roi_pool"), OpPattern.OUT_ELEMWISE_FUSABLE,
                  A.ROIPoolAttrs, dtypes=FLOAT)


def _pair(size):
    return (size, size) if isinstance(size, int) else tuple(size)


def roi_align(data, rois, pooled_size, spatial_scale, sample_ratio=-1, layout="NCHW", mode="avg"):
    """Average (or maximum) of bilinear samples over each of ``pooled_size`` bins of each region."""
    return make_call("vision.roi_align", [data, rois], A.ROIAlignAttrs(
        _pair(pooled_size), float(spatial_scale), int(sample_ratio), layout, mode))


def roi_pool(data, rois, pooled_size, spatial_scale, layout="NCHW"):
    """Maximum over the pixels of each of ``pooled_size`` bins of each (rounded) region."""
    return make_call("vision.roi_pool", [data, rois], A.ROIPoolAttrs(_pair(pooled_size), float(spatial_scale),
                                                                     layout))


def _yolo_reorg_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    s = attrs.stride
    if data.ndim != 4 or data.shape[2] % s or data.shape[3] % s or data.shape[1] % (s * s):
        raise TypeInferenceError(f"vision.yolo_reorg: data {data} must be NCHW with H and W divisible by stride {s} "
                                 f"and C by stride**2")
    n, c, h, w = data.shape
    return TensorType((n, c * s * s, h // s, w // s), data.dtype)


register_relay_op("vision.yolo_reorg", 1, _yolo_reorg_rel, OpPattern.INJECTIVE, A.YoloReorgAttrs)


def yolo_reorg(data, stride):
    """Darknet's ``reorg`` layer (YOLOv2): space-to-depth in darknet's element order."""
    return make_call("vision.yolo_reorg", [data], A.YoloReorgAttrs(int(stride)))


from .array_more import multibox_prior  # noqa: E402, F401
