"""Vision operators (``relay.vision``): ``vision.roi_align vision.roi_pool vision.yolo_reorg
vision.get_valid_counts vision.all_class_non_max_suppression`` (and ``nn.correlation``, FlowNet's).

Both take NCHW feature maps (``roi_align`` also NHWC) and regions ``(num_roi, 5)`` as ``[batch_index, x1, y1, x2,
y2]`` in image coordinates (scaled by ``spatial_scale``), and give ``(num_roi, C, pooled_h, pooled_w)`` (or
``(num_roi, pooled_h, pooled_w, C)``).
"""

from dataclasses import dataclass

from ...error import TypeInferenceError
from ...ir.attrs import Attrs
from ...ir.expr import RelayExpr
from ...ir.op import register_op_attr
from ...ir.type import TensorType, TupleType, is_any
from ...te import size_var
from ...topi import nms
from . import attrs_image as A
from .dyn.common import dim64, shape_tensor
from .op import OpPattern, make_call, register_relay_op, register_shape_func
from .type_relations import FLOAT, INTEGER, dims_match, same_dtype, shapes_match, tensor_arg


def _roi_rel(op):
    def relation(types, attrs):
        data, rois = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "rois")
        if data.ndim != 4 or rois.ndim != 2 or not dims_match(rois.shape[1], 5):
            raise TypeInferenceError(f"{op}: data {data} must be {attrs.layout} and rois {rois} (num_roi, 5)")
        same_dtype([data, rois], f"{op} data and rois")
        if attrs.layout == "NHWC":
            return TensorType((rois.shape[0],) + tuple(attrs.pooled_size) + (data.shape[3],), data.dtype)
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
    static = [d if isinstance(d, int) else 0 for d in data.shape]  # dynamic sizes are checked at run time
    if data.ndim != 4 or static[2] % s or static[3] % s or static[1] % (s * s):
        raise TypeInferenceError(f"vision.yolo_reorg: data {data} must be NCHW with H and W divisible by stride {s} "
                                 f"and C by stride**2")
    n, c, h, w = data.shape
    return TensorType((n, c * s * s, h // s, w // s), data.dtype)


register_relay_op("vision.yolo_reorg", 1, _yolo_reorg_rel, OpPattern.INJECTIVE, A.YoloReorgAttrs)


def yolo_reorg(data, stride):
    """Darknet's ``reorg`` layer (YOLOv2): space-to-depth in darknet's element order."""
    return make_call("vision.yolo_reorg", [data], A.YoloReorgAttrs(int(stride)))


from .array_more import multibox_prior  # noqa: E402, F401
from .vision_detect import non_max_suppression, proposal, regular_non_max_suppression  # noqa: E402, F401


def _correlation_rel(types, attrs):
    a, b = tensor_arg(types, 0, "data1"), tensor_arg(types, 1, "data2")
    if a.ndim != 4 or a.shape != b.shape:
        raise TypeInferenceError(f"nn.correlation: data1 {a} and data2 {b} must be NCHW of one shape")
    same_dtype([a, b], "nn.correlation data1 and data2")
    border = attrs.max_displacement + (attrs.kernel_size - 1) // 2
    size = 2 * (attrs.max_displacement // attrs.stride2) + 1
    out_h = (a.shape[2] + 2 * attrs.padding - 2 * border + attrs.stride1 - 1) // attrs.stride1
    out_w = (a.shape[3] + 2 * attrs.padding - 2 * border + attrs.stride1 - 1) // attrs.stride1
    if out_h <= 0 or out_w <= 0:
        raise TypeInferenceError(f"nn.correlation: max_displacement {attrs.max_displacement} leaves no output of {a}")
    return TensorType((a.shape[0], size * size, out_h, out_w), a.dtype)


register_relay_op("nn.correlation", 2, _correlation_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.CorrelationAttrs,
                  dtypes=FLOAT)


def correlation(data1, data2, kernel_size, max_displacement, stride1, stride2, padding, is_multiply, layout):
    """FlowNet's correlation layer: the channel-and-window mean of ``data1 * data2`` (or ``|data1 - data2|``) for
    every displacement of ``data2`` up to ``max_displacement`` (one output channel per displacement)."""
    return make_call("nn.correlation", [data1, data2], A.CorrelationAttrs(
        int(kernel_size), int(max_displacement), int(stride1), int(stride2), int(padding), bool(is_multiply), layout))


def _get_valid_counts_rel(types, attrs):
    data, threshold = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "score_threshold")
    if data.ndim != 3 or threshold.shape:
        raise TypeInferenceError(f"vision.get_valid_counts: data {data} must be (batch, boxes, values) and "
                                 f"score_threshold {threshold} a scalar")
    return TupleType([TensorType((data.shape[0],), "int32"), data, TensorType(data.shape[:2], "int32")])


register_relay_op("vision.get_valid_counts", 2, _get_valid_counts_rel, OpPattern.OPAQUE, A.GetValidCountsAttrs,
                  dtypes=(FLOAT, ("float32",)))


def get_valid_counts(data, score_threshold, id_index=0, score_index=1):
    """The boxes whose score exceeds ``score_threshold`` (and whose class id is not negative) moved to the front:
    ``(valid_count, out, out_indices)``, the rest filled with -1."""
    from ..expr import TupleWrapper, const

    if not isinstance(score_threshold, RelayExpr):
        score_threshold = const(float(score_threshold), "float32")
    return TupleWrapper(make_call("vision.get_valid_counts", [data, score_threshold],
                                  A.GetValidCountsAttrs(None, int(id_index), int(score_index))), 3)


def _multibox_transform_loc_rel(types, attrs):
    cls_prob, loc, anchor = (tensor_arg(types, i, n) for i, n in enumerate(["cls_prob", "loc_pred", "anchor"]))
    if cls_prob.ndim != 3 or not shapes_match(loc.shape, (cls_prob.shape[0], cls_prob.shape[2] * 4)) or \
            not shapes_match(anchor.shape, (1, cls_prob.shape[2], 4)):
        raise TypeInferenceError(f"vision.multibox_transform_loc: cls_prob {cls_prob} (B, classes, anchors), "
                                 f"loc_pred {loc} (B, anchors * 4) and anchor {anchor} (1, anchors, 4) do not fit")
    same_dtype([cls_prob, loc, anchor], "vision.multibox_transform_loc inputs")
    return TupleType([TensorType((cls_prob.shape[0], cls_prob.shape[2], 6), cls_prob.dtype),
                      TensorType((cls_prob.shape[0],), "int32")])


register_relay_op("vision.multibox_transform_loc", 3, _multibox_transform_loc_rel, OpPattern.OPAQUE,
                  A.MultiBoxTransformLocAttrs, dtypes=("float32",))


def multibox_transform_loc(cls_prob, loc_pred, anchor, clip=True, threshold=0.01, variances=(0.1, 0.1, 0.2, 0.2),
                           keep_background=False):
    """SSD box decoding: ``(boxes [class, score, x1, y1, x2, y2] of the non-background anchors first, the rest -1;
    valid_count)``."""
    from ..expr import TupleWrapper

    return TupleWrapper(make_call("vision.multibox_transform_loc", [cls_prob, loc_pred, anchor],
                                  A.MultiBoxTransformLocAttrs(bool(clip), float(threshold), tuple(variances),
                                                              bool(keep_background))), 2)


@dataclass(frozen=True, slots=True)
class AllClassNonMaximumSuppressionAttrs(Attrs):
    """``output_format``: ``onnx`` (rows of ``(batch, class, box)``, as ONNX's ``NonMaxSuppression``) or
    ``tensorflow`` (per batch, rows of ``(class, box)``, their scores and their count, as TensorFlow's
    ``CombinedNonMaxSuppression`` before its sort)."""

    output_format: str = "onnx"

    def __post_init__(self):
        self._require(self.output_format in ("onnx", "tensorflow"), "output_format", "must be onnx or tensorflow")


def _all_class_nms_rel(types, attrs):
    boxes, scores = tensor_arg(types, 0, "boxes"), tensor_arg(types, 1, "scores")
    for index, what in enumerate(("max_output_boxes_per_class", "iou_threshold", "score_threshold"), 2):
        t = tensor_arg(types, index, what)
        if t.ndim > 1 or (t.ndim == 1 and t.shape[0] != 1):
            raise TypeInferenceError(f"{what} must be a scalar (or a 1-element tensor), got {t}")
    # sizes known only at run time: the kernel's arguments are checked against each other when it is called
    if boxes.ndim != 3 or not dims_match(boxes.shape[2], 4) or scores.ndim != 3 \
            or not dims_match(scores.shape[0], boxes.shape[0]) or not dims_match(scores.shape[2], boxes.shape[1]):
        raise TypeInferenceError(f"boxes must be (batch, boxes, 4) and scores (batch, classes, boxes), got {boxes} "
                                 f"and {scores}")
    same_dtype([boxes, scores], "boxes and scores")
    batch, classes, n = scores.shape
    if attrs.output_format == "tensorflow":  # TVM's types: the scores are float32 whatever the inputs' dtype
        per_batch = classes * n
        return TupleType([TensorType((batch, per_batch, 2), "int64"), TensorType((batch, per_batch), "float32"),
                          TensorType((batch,), "int64")])
    return TupleType([TensorType((batch * classes * n, 3), "int64"), TensorType((1,), "int64")])


register_relay_op("vision.all_class_non_max_suppression", 5, _all_class_nms_rel, OpPattern.OPAQUE,
                  AllClassNonMaximumSuppressionAttrs, dtypes=(FLOAT, FLOAT, INTEGER, FLOAT, FLOAT))


@register_op_attr("vision.all_class_non_max_suppression", "FTVMPrimFunc")
def _all_class_nms_prim_func(attrs, arg_types, out_types, name):
    """The sequential kernel (:func:`kiln.topi.nms.all_class_non_max_suppression`); a size known only at run time
    (in either argument: batch and boxes appear in both) is one size variable."""
    boxes, scores = arg_types[:2]
    scalars = [(t.shape, t.dtype) for t in arg_types[2:]]

    def size(name, *dims):
        static = [d for d in dims if not is_any(d)]
        return static[0] if static else size_var(name)

    batch, n = size("batch", boxes.shape[0], scores.shape[0]), size("boxes", boxes.shape[1], scores.shape[2])
    classes = size("classes", scores.shape[1])
    return nms.all_class_non_max_suppression((batch, n, 4), (batch, classes, n), boxes.dtype, scalars, name,
                                             attrs.output_format)


@register_shape_func("vision.all_class_non_max_suppression", True)
def _all_class_nms_shape_func(attrs, inputs, out_types):
    """``(batch * classes * boxes, 3)`` and ``(1,)`` from the sizes of the scores (their values are not read); for
    the tensorflow format ``(batch, classes * boxes, 2)``, ``(batch, classes * boxes)`` and ``(batch,)``."""
    scores = inputs[1]
    if attrs.output_format == "tensorflow":
        batch, per_batch = dim64(scores, 0), dim64(scores, 1) * dim64(scores, 2)
        return [shape_tensor([batch, per_batch, 2], "nms_indices"), shape_tensor([batch, per_batch], "nms_scores"),
                shape_tensor([batch], "nms_count")], []
    rows = dim64(scores, 0) * dim64(scores, 1) * dim64(scores, 2)
    return [shape_tensor([rows, 3], "nms_rows"), shape_tensor([1], "nms_count")], []


def all_class_non_max_suppression(boxes, scores, max_output_boxes_per_class=-1, iou_threshold=-1.0,
                                  score_threshold=-1.0, output_format="onnx"):
    """Greedy non-maximum suppression of every class of every batch (ONNX's ``NonMaxSuppression``; TVM's name).

    Parameters
    ----------
    boxes : relay.Expr
        ``(batch, boxes, 4)`` corners ``[y1, x1, y2, x2]``.
    scores : relay.Expr
        ``(batch, classes, boxes)``.
    max_output_boxes_per_class, iou_threshold, score_threshold : int, float or relay.Expr
        At most that many boxes per class (negative: no limit); a box is dropped when its IoU with a selected one
        is above ``iou_threshold``; only boxes scoring above ``score_threshold`` take part.

    Returns
    -------
    TupleWrapper
        ``(selected_indices, num_total_detections)``: ``(batch * classes * boxes, 3)`` int64 rows of
        ``(batch, class, box)``, the first ``num_total_detections[0]`` of them written (TVM's padded form; slice
        with ``relay.strided_slice(selected_indices, [0, 0], concatenate([num_total_detections, [3]]))`` for the
        ``(num_selected, 3)`` result, its first dimension known at run time). With
        ``output_format="tensorflow"``: ``(selected_indices, selected_scores, num_total_detections)``, per batch
        ``(classes * boxes, 2)`` int64 rows of ``(class, box)`` grouped by class in selection order, their float32
        scores (both zero-padded) and, ``(batch,)``, how many rows each batch wrote.
    """
    from ..expr import TupleWrapper, const

    if not isinstance(max_output_boxes_per_class, RelayExpr):
        max_output_boxes_per_class = const(int(max_output_boxes_per_class), "int64")
    if not isinstance(iou_threshold, RelayExpr):
        iou_threshold = const(float(iou_threshold), "float32")
    if not isinstance(score_threshold, RelayExpr):
        score_threshold = const(float(score_threshold), "float32")
    call = make_call("vision.all_class_non_max_suppression",
                     [boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold],
                     AllClassNonMaximumSuppressionAttrs(output_format))
    return TupleWrapper(call, 3 if output_format == "tensorflow" else 2)
