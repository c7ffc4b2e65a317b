"""numpy reference of ``vision.regular_non_max_suppression`` (TFLite's detection post-processing NMS), written
from its definition: per class a stable sort of the boxes over the score threshold, greedy suppression by IoU,
then a stable sort of all classes' selections, cut to ``max_detections``. The reference interpreter registers it."""

import numpy as np

__all__ = ["regular_non_max_suppression_python"]


def _iou(a, b):
    """IoU of two ``[ymin, xmin, ymax, xmax]`` boxes in their dtype; 0 when either has no positive area."""
    zero = a.dtype.type(0)
    area_a, area_b = (a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1])
    if not (area_a > zero and area_b > zero):
        return zero
    inter = max(min(a[2], b[2]) - max(a[0], b[0]), zero) * max(min(a[3], b[3]) - max(a[1], b[1]), zero)
    return inter / (area_a + area_b - inter)


def regular_non_max_suppression_python(boxes, scores, max_detections_per_class, max_detections, num_classes,
                                       iou_threshold, score_threshold):
    """``(detection_boxes, detection_classes, detection_scores, num_detections)`` (float32 x 3, int32) of boxes
    ``(batch, boxes, 4)`` and scores ``(batch, boxes, classes_with_background)``."""
    batch, _, columns = scores.shape
    offset = columns - num_classes
    score_thr, iou_thr = scores.dtype.type(score_threshold), boxes.dtype.type(iou_threshold)
    out_boxes = np.zeros((batch, max_detections, 4), "float32")
    out_classes = np.zeros((batch, max_detections), "float32")
    out_scores = np.zeros((batch, max_detections), "float32")
    counts = np.zeros(batch, "int32")
    for b in range(batch):
        detections = []  # (score, box, class), ordered by score, earlier first among equals
        for c in range(num_classes):
            column = scores[b, :, c + offset]
            candidates = np.flatnonzero(column >= score_thr)
            candidates = candidates[np.argsort(-column[candidates].astype("float64"), kind="stable")]
            selected = []
            for box in candidates:
                if len(selected) == max_detections_per_class:
                    break
                if all(not _iou(boxes[b, s], boxes[b, box]) > iou_thr for s in selected):
                    selected.append(box)
            merged = detections + [(column[s], s, c) for s in selected]
            order = np.argsort([-float(m[0]) for m in merged], kind="stable") if merged else []
            detections = [merged[k] for k in order][:max_detections]
        counts[b] = len(detections)
        for k, (score, box, c) in enumerate(detections):
            out_boxes[b, k], out_classes[b, k], out_scores[b, k] = boxes[b, box], c, score
    return out_boxes, out_classes, out_scores, counts
