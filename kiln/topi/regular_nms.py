"""``regular_non_max_suppression`` (TVM's ``topi.vision.regular_non_max_suppression``): TFLite's detection
post-processing with per-class ("regular") non-maximum suppression, as one sequential kernel (an ``ir_builder``
program in a ``te.extern``: greedy suppression has no data-parallel form).

Scores are ``(batch, boxes, classes_with_background)``; the first ``classes_with_background - num_classes`` columns
are background and skipped. Per batch and per class ``c``:

1. the boxes whose score is at least ``score_threshold`` are kept, ordered by score, highest first (the lower box
   index among equals);
2. in that order, up to ``max_detections_per_class`` boxes are selected greedily: a box is selected unless an
   earlier selected box overlaps it by an IoU above ``iou_threshold`` (boxes are ``[ymin, xmin, ymax, xmax]``; a
   box of zero or negative area overlaps nothing);
3. each selected box joins the batch's list of detections, kept ordered by score (an earlier entry first among
   equals, so earlier classes win ties) and cut to ``max_detections``.

Results: ``detection_boxes (batch, max_detections, 4)``, ``detection_classes`` and ``detection_scores`` ``(batch,
max_detections)`` (the class without the background offset, as float32), zero past ``num_detections (batch,)``.
Sorting is by insertion: quadratic in the number of boxes kept per class, as TVM's bubble sorts are.
"""

from .. import te
from ..tir import ir_builder
from ..tir import op as _op
from .utils import get_const_tuple

__all__ = ["regular_non_max_suppression"]


def _iou_above(boxes, b, i, j, threshold):
    """Whether boxes ``i`` and ``j`` of batch ``b`` overlap by an IoU above ``threshold`` (0 for a box of zero or
    negative area), computed in the boxes' dtype as TVM's kernel computes it."""
    iy0, ix0, iy1, ix1 = (boxes[b, i, k] for k in range(4))
    jy0, jx0, jy1, jx1 = (boxes[b, j, k] for k in range(4))
    zero = _op.const(0, boxes.dtype)
    area_i, area_j = (iy1 - iy0) * (ix1 - ix0), (jy1 - jy0) * (jx1 - jx0)
    inter = _op.maximum(_op.minimum(iy1, jy1) - _op.maximum(iy0, jy0), zero) * _op.maximum(
        _op.minimum(ix1, jx1) - _op.maximum(ix0, jx0), zero)
    positive = _op.logical_and(area_i > zero, area_j > zero)
    union = _op.select(positive, area_i + area_j - inter, _op.const(1, boxes.dtype))
    return _op.logical_and(positive, inter / union > threshold)


def _regular_nms_ir(boxes, scores, out_boxes, out_classes, out_scores, out_count, attrs):
    batch, n_boxes, n_columns = get_const_tuple(scores.shape)
    per_class, max_det = attrs["max_detections_per_class"], attrs["max_detections"]
    dtype = scores.dtype
    score_thr, iou_thr = _op.const(attrs["score_threshold"], dtype), _op.const(attrs["iou_threshold"], boxes.dtype)
    offset = n_columns - attrs["num_classes"]
    ib = ir_builder.create()
    boxes, scores = ib.buffer_ptr(boxes), ib.buffer_ptr(scores)
    out_boxes, out_classes = ib.buffer_ptr(out_boxes), ib.buffer_ptr(out_classes)
    out_scores, out_count = ib.buffer_ptr(out_scores), ib.buffer_ptr(out_count)
    kept = ib.allocate("int32", (max(n_boxes, 1),), "kept")  # the kept boxes of one class, by score
    active = ib.allocate("int32", (max(n_boxes, 1),), "active")
    top_box = ib.allocate("int32", (max(max_det, 1),), "top_box")  # the batch's detections, by score
    top_class = ib.allocate("int32", (max(max_det, 1),), "top_class")
    top_score = ib.allocate(dtype, (max(max_det, 1),), "top_score")
    # 0: boxes kept, 1: boxes selected, 2: detections, 3: an insertion position
    reg = ib.allocate("int32", (4,), "reg")
    one, zero = _op.const(1, "int32"), _op.const(0, "int32")

    def insert_position(count, score_of, score):
        """reg[3] = how many of the first ``count`` entries score at least ``score`` (they stay ahead)."""
        reg[3] = zero
        with ib.for_range(0, count, name="k") as k:
            with ib.if_scope(score_of(k) >= score):
                reg[3] = reg[3] + one

    with ib.for_range(0, batch, name="b") as b:
        reg[2] = zero
        with ib.for_range(0, attrs["num_classes"], name="c") as c:
            column = c + offset
            reg[0] = zero
            with ib.for_range(0, n_boxes, name="i") as i:
                score = scores[b, i, column]
                with ib.if_scope(score >= score_thr):
                    insert_position(reg[0], lambda k: scores[b, kept[k], column], score)
                    with ib.for_range(0, reg[0] - reg[3], name="k") as k:  # shift the lower ones back
                        kept[reg[0] - k] = kept[reg[0] - k - 1]
                    kept[reg[3]] = i
                    reg[0] = reg[0] + one
            with ib.for_range(0, reg[0], name="i") as i:
                active[i] = one
            reg[1] = zero
            with ib.for_range(0, reg[0], name="i") as i:
                with ib.if_scope(_op.logical_and(active[i] == one, reg[1] < per_class)):
                    reg[1] = reg[1] + one
                    chosen = kept[i]
                    score = scores[b, chosen, column]
                    insert_position(reg[2], lambda k: top_score[k], score)
                    with ib.if_scope(reg[3] < max_det):
                        with ib.for_range(0, reg[2] - reg[3], name="k") as k:  # the last one may fall off
                            src = reg[2] - k - 1
                            with ib.if_scope(src + 1 < max_det):
                                top_box[src + 1] = top_box[src]
                                top_class[src + 1] = top_class[src]
                                top_score[src + 1] = top_score[src]
                        top_box[reg[3]] = chosen
                        top_class[reg[3]] = c
                        top_score[reg[3]] = score
                        reg[2] = _op.minimum(reg[2] + one, max_det)
                    with ib.for_range(0, reg[0] - i - 1, name="j") as j:
                        other = i + 1 + j
                        with ib.if_scope(_op.logical_and(active[other] == one,
                                                         _iou_above(boxes, b, chosen, kept[other], iou_thr))):
                            active[other] = zero
        with ib.for_range(0, max_det, name="k") as k:
            found = k < reg[2]
            for v in range(4):
                out_boxes[b, k, v] = _op.select(found, _op.cast(boxes[b, top_box[k], v], out_boxes.dtype),
                                                _op.const(0, out_boxes.dtype))
            out_classes[b, k] = _op.select(found, _op.cast(top_class[k], "float32"), _op.const(0, "float32"))
            out_scores[b, k] = _op.select(found, _op.cast(top_score[k], "float32"), _op.const(0, "float32"))
        out_count[b] = reg[2]
    return ib.get()


def regular_non_max_suppression(boxes, scores, max_detections_per_class, max_detections, num_classes,
                                iou_threshold, score_threshold):
    """TFLite's regular NMS (see the module docstring).

    Parameters
    ----------
    boxes : te.Tensor
        ``(batch, boxes, 4)`` corners ``[ymin, xmin, ymax, xmax]``.
    scores : te.Tensor
        ``(batch, boxes, classes_with_background)``.
    max_detections_per_class, max_detections, num_classes : int
    iou_threshold, score_threshold : float

    Returns
    -------
    list of te.Tensor
        ``[detection_boxes, detection_classes, detection_scores, num_detections]`` (float32, float32, float32,
        int32).
    """
    batch, _, _ = get_const_tuple(scores.shape)
    attrs = dict(max_detections_per_class=int(max_detections_per_class), max_detections=int(max_detections),
                 num_classes=int(num_classes), iou_threshold=float(iou_threshold),
                 score_threshold=float(score_threshold))
    shapes = [(batch, max_detections, 4), (batch, max_detections), (batch, max_detections), (batch,)]
    return list(te.extern(shapes, [boxes, scores],
                          lambda ins, outs: _regular_nms_ir(ins[0], ins[1], *outs, attrs),
                          dtype=["float32", "float32", "float32", "int32"], name="regular_nms",
                          tag="regular_nms"))
