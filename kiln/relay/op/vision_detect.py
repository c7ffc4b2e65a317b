"""Detection operators of ``relay.vision`` with kernels of their own (sequential loop nests, ``FTVMPrimFunc`` or
an extern): ``vision.non_max_suppression`` (the classic, per-row greedy suppression TVM's SSD models use),
``vision.regular_non_max_suppression`` (TFLite's detection post-processing, per class) and ``vision.proposal``
(Faster R-CNN's region proposals).
"""

from ...error import TypeInferenceError
from ...ir.expr import RelayExpr
from ...ir.op import register_op_attr
from ...ir.type import TensorType, TupleType
from ...topi import nms
from ...topi import proposal as _proposal
from . import attrs_image as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import FLOAT, INTEGER, NUMERIC, dims_match, same_dtype, shapes_match, tensor_arg

__all__ = ["non_max_suppression", "proposal", "regular_non_max_suppression"]


def _scalar_arg(types, index, what):
    t = tensor_arg(types, index, what)
    if t.ndim > 1 or (t.ndim == 1 and not dims_match(t.shape[0], 1)):
        raise TypeInferenceError(f"{what} must be a scalar (or a 1-element tensor), got {t}")
    return t


def _nms_rel(types, attrs):
    data, valid_count = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "valid_count")
    indices = tensor_arg(types, 2, "indices")
    _scalar_arg(types, 3, "max_output_size")
    _scalar_arg(types, 4, "iou_threshold")
    if data.ndim != 3 or valid_count.ndim != 1:
        raise TypeInferenceError(f"vision.non_max_suppression: data {data} must be (batch, anchors, values) and "
                                 f"valid_count {valid_count} (batch,)")
    width = data.shape[2]
    needed = max(attrs.coord_start + 4, attrs.score_index + 1, attrs.id_index + 1)
    if isinstance(width, int) and width < needed:
        raise TypeInferenceError(f"vision.non_max_suppression: rows of {width} values of {data} have no "
                                 f"coord_start={attrs.coord_start}, score_index={attrs.score_index}, "
                                 f"id_index={attrs.id_index}")
    if attrs.return_indices:
        if indices.ndim != 2 or not shapes_match(indices.shape, data.shape[:2]) or indices.dtype not in INTEGER:
            raise TypeInferenceError(f"vision.non_max_suppression: indices {indices} must be integers of shape "
                                     f"(batch, anchors) of {data} to return indices")
        return TupleType([TensorType(data.shape[:2], "int32"), TensorType((data.shape[0], 1), "int32")])
    return TensorType(data.shape, data.dtype)


register_relay_op("vision.non_max_suppression", 5, _nms_rel, OpPattern.OPAQUE, A.NonMaximumSuppressionAttrs,
                  dtypes=(FLOAT, ("int32",), NUMERIC, INTEGER, FLOAT))


@register_op_attr("vision.non_max_suppression", "FTVMPrimFunc")
def _nms_prim_func(attrs, arg_types, out_types, name):
    """The sequential kernel (:func:`kiln.topi.nms.non_max_suppression`)."""
    data, _, indices = arg_types[:3]
    scalars = [(t.shape, t.dtype) for t in arg_types[3:]]
    return nms.non_max_suppression(data.shape, data.dtype, (indices.shape, indices.dtype), scalars, attrs, name)


def non_max_suppression(data, valid_count, indices, max_output_size=-1, iou_threshold=0.5, force_suppress=False,
                        top_k=-1, coord_start=2, score_index=1, id_index=0, return_indices=True,
                        invalid_to_bottom=False):
    """Greedy non-maximum suppression of the rows ``[class_id, score, x1, y1, x2, y2, ...]`` of ``data``
    ``(batch, anchors, values)`` (TVM's ``vision.non_max_suppression``).

    Per batch, the first ``valid_count`` rows take part, highest score first (the best ``top_k`` only, when
    ``top_k > 0``); a row of positive score is dropped when its IoU with an earlier kept one (of its class unless
    ``force_suppress``; ``id_index=-1``: no classes) is at least ``iou_threshold``, or once ``max_output_size``
    rows are kept (negative: no limit). ``iou_threshold <= 0`` keeps the rows as they are.

    Parameters
    ----------
    data : relay.Expr
    valid_count : relay.Expr
        ``(batch,)`` int32.
    indices : relay.Expr
        ``(batch, anchors)``: the index in the original input of each row (``get_valid_counts``' third result).
    max_output_size : int or relay.Expr
    iou_threshold : float or relay.Expr
    force_suppress : bool
    top_k, coord_start, score_index, id_index : int
    return_indices : bool
        Return ``(indices of the kept rows, moved to the top and -1 after, (batch, 1) count)`` instead of rows.
    invalid_to_bottom : bool
        Move the kept rows (first value not negative) to the top, the rest ``-1``.

    Returns
    -------
    relay.Expr or TupleWrapper
        The rows in score order with the dropped ones ``-1``; or the indices and their count.
    """
    from ..expr import TupleWrapper, const

    if not isinstance(max_output_size, RelayExpr):
        max_output_size = const(int(max_output_size), "int32")
    if not isinstance(iou_threshold, RelayExpr):
        iou_threshold = const(float(iou_threshold), "float32")
    call = make_call("vision.non_max_suppression", [data, valid_count, indices, max_output_size, iou_threshold],
                     A.NonMaximumSuppressionAttrs(bool(force_suppress), int(top_k), int(coord_start),
                                                  int(score_index), int(id_index), bool(return_indices),
                                                  bool(invalid_to_bottom)))
    return TupleWrapper(call, 2) if return_indices else call


def _proposal_rel(types, attrs):
    cls_prob, bbox_pred, im_info = (tensor_arg(types, i, n) for i, n in enumerate(["cls_prob", "bbox_pred",
                                                                                     "im_info"]))
    anchors = len(attrs.scales) * len(attrs.ratios)
    if cls_prob.ndim != 4 or bbox_pred.ndim != 4 or im_info.ndim != 2 or not dims_match(im_info.shape[1], 3):
        raise TypeInferenceError(f"vision.proposal: cls_prob {cls_prob} and bbox_pred {bbox_pred} must be 4-D and "
                                 f"im_info {im_info} (batch, 3)")
    if not (dims_match(cls_prob.shape[1], 2 * anchors) and dims_match(bbox_pred.shape[1], 4 * anchors)):
        raise TypeInferenceError(f"vision.proposal: {len(attrs.scales)} scales x {len(attrs.ratios)} ratios make "
                                 f"{anchors} anchors: cls_prob {cls_prob} needs {2 * anchors} channels and "
                                 f"bbox_pred {bbox_pred} {4 * anchors}")
    same_dtype([cls_prob, bbox_pred, im_info], "vision.proposal inputs")
    return TensorType((cls_prob.shape[0] * attrs.rpn_post_nms_top_n, 5), cls_prob.dtype)


register_relay_op("vision.proposal", 3, _proposal_rel, OpPattern.OPAQUE, A.ProposalAttrs, dtypes=FLOAT)


@register_op_attr("vision.proposal", "FTVMPrimFunc")
def _proposal_prim_func(attrs, arg_types, out_types, name):
    """The sequential kernel (:func:`kiln.topi.proposal.proposal`)."""
    cls_prob, bbox_pred, _ = arg_types
    return _proposal.proposal(cls_prob.shape, cls_prob.dtype, attrs, name)


def proposal(cls_prob, bbox_pred, im_info, scales, ratios, feature_stride, threshold, rpn_pre_nms_top_n,
             rpn_post_nms_top_n, rpn_min_size, iou_loss):
    """Faster R-CNN's region proposals (TVM's ``vision.proposal``).

    Every feature-map position gets ``len(scales) * len(ratios)`` anchors, moved by ``bbox_pred`` and clipped to
    the image (``im_info`` rows ``[height, width, scale]``); anchors outside the real feature map, and boxes
    smaller than ``rpn_min_size * scale``, score -1. The ``rpn_pre_nms_top_n`` best boxes (by the foreground half
    of ``cls_prob``) go through non-maximum suppression at ``threshold`` and the kept ones fill the
    ``rpn_post_nms_top_n`` rows per batch (repeating from the first when fewer are kept).

    Returns
    -------
    relay.Expr
        ``(batch * rpn_post_nms_top_n, 5)`` rows ``[batch_index, x1, y1, x2, y2]``.
    """
    return make_call("vision.proposal", [cls_prob, bbox_pred, im_info], A.ProposalAttrs(
        tuple(scales), tuple(ratios), int(feature_stride), float(threshold), int(rpn_pre_nms_top_n),
        int(rpn_post_nms_top_n), int(rpn_min_size), bool(iou_loss)))


def _regular_nms_rel(types, attrs):
    boxes, scores = tensor_arg(types, 0, "boxes"), tensor_arg(types, 1, "scores")
    if boxes.ndim != 3 or scores.ndim != 3 or not dims_match(boxes.shape[2], 4):
        raise TypeInferenceError(f"boxes {boxes} must be (batch, boxes, 4) and scores {scores} (batch, boxes, "
                                 f"classes with background)")
    if not shapes_match(boxes.shape[:2], scores.shape[:2]):
        raise TypeInferenceError(f"boxes {boxes} and scores {scores} must agree in batch and number of boxes")
    columns = scores.shape[2]
    if isinstance(columns, int) and attrs.num_classes > columns:
        raise TypeInferenceError(f"num_classes={attrs.num_classes} exceeds the {columns} score columns of {scores}")
    batch, count = boxes.shape[0], attrs.max_detections
    return TupleType([TensorType((batch, count, 4), "float32"), TensorType((batch, count), "float32"),
                      TensorType((batch, count), "float32"), TensorType((batch,), "int32")])


register_relay_op("vision.regular_non_max_suppression", 2, _regular_nms_rel, OpPattern.OPAQUE,
                  A.RegularNonMaximumSuppressionAttrs, dtypes=FLOAT)


def regular_non_max_suppression(boxes, scores, max_detections_per_class, max_detections, num_classes, iou_threshold,
                                score_threshold):
    """TFLite's regular (per-class) non-maximum suppression (TVM's ``relay.vision.regular_non_max_suppression``).

    Per batch and class (the ``num_classes`` last columns of ``scores``; the ones before are background), the boxes
    scoring at least ``score_threshold`` are taken highest score first, and up to ``max_detections_per_class`` of
    them kept unless an IoU above ``iou_threshold`` with a box kept before drops them; all classes' kept boxes are
    ordered by score and the best ``max_detections`` returned (:mod:`kiln.topi.regular_nms`).

    Parameters
    ----------
    boxes : relay.Expr
        ``(batch, boxes, 4)`` corners ``[ymin, xmin, ymax, xmax]``.
    scores : relay.Expr
        ``(batch, boxes, classes_with_background)``.
    max_detections_per_class, max_detections, num_classes : int
    iou_threshold, score_threshold : float

    Returns
    -------
    TupleWrapper
        ``detection_boxes (batch, max_detections, 4)``, ``detection_classes`` and ``detection_scores``
        ``(batch, max_detections)`` (float32, zero past the count), ``num_detections (batch,)`` int32.
    """
    from ..expr import TupleWrapper

    attrs = A.RegularNonMaximumSuppressionAttrs(int(max_detections_per_class), int(max_detections),
                                                int(num_classes), float(iou_threshold), float(score_threshold))
    return TupleWrapper(make_call("vision.regular_non_max_suppression", [boxes, scores], attrs), 4)
