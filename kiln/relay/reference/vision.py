"""The region, detection and sampling operators in numpy: ``vision.roi_align``, ``vision.roi_pool`` and
``nn.deformable_conv2d`` (the functions of :mod:`kiln.topi.testing.vision`, TVM's ``*_python`` references),
``image.dilation2d``, ``nn.correlation``, ``vision.get_valid_counts``, ``vision.multibox_transform_loc``,
``vision.all_class_non_max_suppression``, ``vision.non_max_suppression`` and ``vision.proposal``."""

import numpy as np

from ...topi.proposal import generate_anchor
from ...topi.testing.regular_nms import regular_non_max_suppression_python
from ...topi.testing.vision import (
    deformable_conv2d_nchw_python,
    deformable_conv2d_nhwc_python,
    roi_align_nchw_python,
    roi_align_nhwc_python,
    roi_pool_nchw_python,
)
from .common import as_dtype, register


@register("vision.roi_align")
def roi_align(attrs, data, rois):
    """Average (or maximum) of a grid of bilinear samples per bin."""
    args = (rois, attrs.pooled_size, attrs.spatial_scale, attrs.sample_ratio, attrs.mode)
    return roi_align_nhwc_python(data, *args) if attrs.layout == "NHWC" else roi_align_nchw_python(data, *args)


@register("vision.roi_pool")
def roi_pool(attrs, data, rois):
    """Maximum over the whole pixels of each bin of the rounded region (0 for an empty bin)."""
    return roi_pool_nchw_python(data, rois, attrs.pooled_size, attrs.spatial_scale)


@register("image.dilation2d")
def dilation2d(attrs, data, weight):
    """The maximum over the window of ``data + weight`` per channel, zero padding."""
    x = data if attrs.data_layout == "NCHW" else data.transpose(0, 3, 1, 2)
    k = weight if attrs.data_layout == "NCHW" else weight.transpose(2, 0, 1)
    top, left, bottom, right = attrs.padding
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilations
    kh, kw = k.shape[1:]
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = None
    for ry in range(kh):
        for rx in range(kw):
            piece = xp[:, :, ry * dh: ry * dh + (oh - 1) * sh + 1: sh, rx * dw: rx * dw + (ow - 1) * sw + 1: sw]
            piece = (piece + k[None, :, ry, rx, None, None]).astype(np.dtype(attrs.out_dtype or data.dtype))
            out = piece if out is None else np.maximum(out, piece)
    return out if attrs.data_layout == "NCHW" else np.ascontiguousarray(out.transpose(0, 2, 3, 1))


@register("nn.deformable_conv2d")
def deformable_conv2d(attrs, data, offset, weight):
    """Convolution whose taps sample ``data`` bilinearly at their positions moved by ``offset``."""
    fn = deformable_conv2d_nhwc_python if attrs.data_layout == "NHWC" else deformable_conv2d_nchw_python
    out = fn(data, offset, weight, attrs.strides, attrs.padding, attrs.dilation, attrs.deformable_groups, attrs.groups)
    return as_dtype(out, np.dtype(attrs.out_dtype or data.dtype))


@register("nn.correlation")
def correlation(attrs, data1, data2):
    """FlowNet's correlation (TVM's ``correlation_nchw``)."""
    n, c, h, w = data1.shape
    p, k, md = attrs.padding, attrs.kernel_size, attrs.max_displacement
    a = np.pad(data1, ((0, 0), (0, 0), (p, p), (p, p)))
    b = np.pad(data2, ((0, 0), (0, 0), (p, p), (p, p)))
    border = md + (k - 1) // 2
    radius = md // attrs.stride2
    size = 2 * radius + 1
    out_h = (h + 2 * p - 2 * border + attrs.stride1 - 1) // attrs.stride1
    out_w = (w + 2 * p - 2 * border + attrs.stride1 - 1) // attrs.stride1
    out = np.zeros((n, size * size, out_h, out_w), data1.dtype)
    for q in range(size * size):
        dy, dx = (q // size - radius) * attrs.stride2, (q % size - radius) * attrs.stride2
        for i in range(out_h):
            for j in range(out_w):
                y1, x1 = i * attrs.stride1 + md, j * attrs.stride1 + md
                wa = a[:, :, y1:y1 + k, x1:x1 + k]
                wb = b[:, :, y1 + dy:y1 + dy + k, x1 + dx:x1 + dx + k]
                out[:, q, i, j] = np.sum(wa * wb if attrs.is_multiply else np.abs(wa - wb), axis=(1, 2, 3))
    return as_dtype(out * data1.dtype.type(1.0 / (k * k * c)), data1.dtype)


@register("vision.get_valid_counts")
def get_valid_counts(attrs, data, score_threshold):
    """Valid boxes moved to the front of each batch, the rest -1."""
    b_n, n, _ = data.shape
    counts = np.zeros(b_n, "int32")
    out = np.full(data.shape, -1, data.dtype)
    indices = np.full((b_n, n), -1, "int32")
    for b in range(b_n):
        for j in range(n):
            ok = data[b, j, attrs.score_index] > data.dtype.type(score_threshold)
            if attrs.id_index >= 0:
                ok = ok and data[b, j, attrs.id_index] >= 0
            if ok:
                out[b, counts[b]] = data[b, j]
                indices[b, counts[b]] = j
                counts[b] += 1
    return counts, out, indices


@register("vision.multibox_transform_loc")
def multibox_transform_loc(attrs, cls_prob, loc_pred, anchor):
    """SSD box decoding (TVM's ``hybrid_multibox_transform_loc``, slots past the valid boxes -1)."""
    b_n, n_cls, n = cls_prob.shape
    f = cls_prob.dtype.type
    out = np.full((b_n, n, 6), -1, cls_prob.dtype)
    counts = np.zeros(b_n, "int32")
    start = 0 if attrs.keep_background else 1
    vx, vy, vw, vh = (f(v) for v in attrs.variances)
    for b in range(b_n):
        for j in range(n):
            score, cls = f(-1.0), 0
            for k in range(start, n_cls):
                if cls_prob[b, k, j] > score:
                    score, cls = cls_prob[b, k, j], k
            if cls > 0 and score < f(attrs.threshold):
                cls = 0
            if not (attrs.keep_background or cls > 0):
                continue
            al, at, ar, ab = anchor[0, j]
            px, py, pw, ph = loc_pred[b, j * 4: j * 4 + 4]
            aw, ah = ar - al, ab - at
            ox, oy = px * vx * aw + (al + ar) * f(0.5), py * vy * ah + (at + ab) * f(0.5)
            ow, oh = np.exp(pw * vw) * aw * f(0.5), np.exp(ph * vh) * ah * f(0.5)
            box = np.array([ox - ow, oy - oh, ox + ow, oy + oh], cls_prob.dtype)
            if attrs.clip:
                box = np.clip(box, 0, 1)
            out[b, counts[b]] = [f(cls) - f(0 if attrs.keep_background else 1), score, *box]
            counts[b] += 1
    return out, counts


def _suppresses(a, b, threshold) -> bool:
    """Whether box ``a`` suppresses box ``b`` (corners ``[y1, x1, y2, x2]`` in either order; ONNX Runtime's rule)."""
    ay1, ay2, ax1, ax2 = min(a[0], a[2]), max(a[0], a[2]), min(a[1], a[3]), max(a[1], a[3])
    by1, by2, bx1, bx2 = min(b[0], b[2]), max(b[0], b[2]), min(b[1], b[3]), max(b[1], b[3])
    inter = max(min(ay2, by2) - max(ay1, by1), 0) * max(min(ax2, bx2) - max(ax1, bx1), 0)
    area_a, area_b = (ay2 - ay1) * (ax2 - ax1), (by2 - by1) * (bx2 - bx1)
    union = area_a + area_b - inter
    return bool(inter > 0 and area_a > 0 and area_b > 0 and union > 0 and inter > threshold * union)


@register("vision.all_class_non_max_suppression")
def all_class_non_max_suppression(attrs, boxes, scores, max_output, iou_threshold, score_threshold):
    """Greedy suppression per batch and class, highest score first (the lower index among equals): the
    ``(batch * classes * boxes, 3)`` rows of ``(batch, class, box)``, zero-padded, and their count."""
    batch, classes, n = scores.shape
    limit = int(np.asarray(max_output).reshape(-1)[0])
    limit = n if limit < 0 else min(limit, n)
    iou = np.asarray(iou_threshold, boxes.dtype).reshape(-1)[0]
    floor = np.asarray(score_threshold, scores.dtype).reshape(-1)[0]
    rows = []
    for b in range(batch):
        for c in range(classes):
            order = [int(i) for i in np.argsort(-scores[b, c], kind="stable") if scores[b, c, i] > floor]
            chosen = []
            for i in order:
                if len(chosen) == limit:
                    break
                if not any(_suppresses(boxes[b, j], boxes[b, i], iou) for j in chosen):
                    chosen.append(i)
            rows += [(b, c, i) for i in chosen]
    if attrs.output_format == "tensorflow":  # per batch: (class, box) rows, their scores, their count
        indices = np.zeros((batch, classes * n, 2), "int64")
        selected = np.zeros((batch, classes * n), "float32")
        counts = np.zeros(batch, "int64")
        for b, c, i in rows:
            indices[b, counts[b]] = (c, i)
            selected[b, counts[b]] = scores[b, c, i]
            counts[b] += 1
        return indices, selected, counts
    out = np.zeros((batch * classes * n, 3), "int64")
    if rows:
        out[: len(rows)] = rows
    return out, np.array([len(rows)], "int64")


def _corner_iou(a, b):
    """TVM ``hybrid_nms``'s IoU of two ``[x1, y1, x2, y2]`` boxes (corners in either order; 0 for an empty union)."""
    al, at, ar, ab = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    bl, bt, br, bb = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    area = max(0, min(ar, br) - max(al, bl)) * max(0, min(ab, bb) - max(at, bt))
    union = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - area
    return 0 if union <= 0 else area / union


@register("vision.non_max_suppression")
def non_max_suppression(attrs, data, valid_count, indices, max_output_size, iou_threshold):
    """The classic greedy suppression (see :func:`kiln.topi.nms.non_max_suppression`)."""
    batch, n, k_len = data.shape
    limit = int(np.asarray(max_output_size).reshape(-1)[0])
    threshold = data.dtype.type(np.asarray(iou_threshold).reshape(-1)[0])
    score, cls, start = attrs.score_index, attrs.id_index, attrs.coord_start
    out = np.full(data.shape, -1, data.dtype)
    box = np.full((batch, n), -1, "int32")
    for i in range(batch):
        valid = min(max(int(valid_count[i]), 0), n)
        if threshold > 0:
            order = [int(j) for j in np.argsort(-data[i, :valid, score], kind="stable")]
            keep = order[:attrs.top_k] if attrs.top_k > 0 else order
            out[i, :len(keep)], box[i, :len(keep)] = data[i, keep], keep
            kept = 0
            for j in range(valid):
                if kept == limit:
                    out[i, j], box[i, j] = -1, -1
                elif out[i, j, score] > 0:
                    rivals = [k for k in range(j) if out[i, k, score] > 0 and (cls < 0 or out[i, k, cls] >= 0)
                              and (attrs.force_suppress or cls < 0 or out[i, j, cls] == out[i, k, cls])]
                    if any(_corner_iou(out[i, j, start:start + 4], out[i, k, start:start + 4]) >= threshold
                           for k in rivals):
                        out[i, j], box[i, j] = -1, -1
                    else:
                        kept += 1
        else:
            out[i, :valid], box[i, :valid] = data[i, :valid], np.arange(valid)
    if attrs.return_indices:
        picked = [[int(indices[i, b]) for b in box[i] if b >= 0] for i in range(batch)]
        result = np.full((batch, n), -1, "int32")
        for i, row in enumerate(picked):
            result[i, :len(row)] = row
        return result, np.array([[len(row)] for row in picked], "int32").reshape(batch, 1)
    if attrs.invalid_to_bottom:
        moved = np.full(data.shape, -1, data.dtype)
        for i in range(batch):
            rows = out[i][out[i, :, 0] >= 0]
            moved[i, :len(rows)] = rows
        return moved
    return out


@register("vision.proposal")
def proposal(attrs, cls_prob, bbox_pred, im_info):
    """Faster R-CNN's region proposals (see :mod:`kiln.topi.proposal`)."""
    batch, _, height, width = cls_prob.shape
    f = cls_prob.dtype.type
    anchors = len(attrs.scales) * len(attrs.ratios)
    post_n = attrs.rpn_post_nms_top_n
    out = np.zeros((batch * post_n, 5), cls_prob.dtype)
    stride = attrs.feature_stride
    base = np.array([generate_anchor(attrs.ratios[k // len(attrs.scales)], attrs.scales[k % len(attrs.scales)],
                                     stride) for k in range(anchors)], cls_prob.dtype)  # (A, 4)
    ys, xs = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    shift = np.stack([xs, ys, xs, ys], -1)[:, :, None, :].astype(cls_prob.dtype) * f(stride)
    box = base[None, None] + shift  # (H, W, A, 4)
    for b in range(batch):
        delta = bbox_pred[b].reshape(anchors, 4, height, width).transpose(2, 3, 0, 1)  # (H, W, A, 4)
        if attrs.iou_loss:
            pred = box + delta
        else:
            size = box[..., 2:] - box[..., :2] + f(1)
            centre = delta[..., :2] * size + (box[..., :2] + f(0.5) * (size - f(1)))
            span = np.exp(delta[..., 2:]) * size
            pred = np.concatenate([centre - f(0.5) * (span - f(1)), centre + f(0.5) * (span - f(1))], -1)
        im_h, im_w, im_scale = im_info[b]
        pred = np.maximum(np.minimum(pred, np.array([im_w, im_h, im_w, im_h], cls_prob.dtype) - f(1)), f(0))
        min_size = im_scale * f(attrs.rpn_min_size)
        small = (pred[..., 2] - pred[..., 0] + f(1) < min_size) | (pred[..., 3] - pred[..., 1] + f(1) < min_size)
        outside = (ys >= int(im_h / f(stride)))[:, :, None] | (xs >= int(im_w / f(stride)))[:, :, None]
        pred = np.where(small[..., None], pred + np.array([-0.5, -0.5, 0.5, 0.5], cls_prob.dtype) * min_size, pred)
        score = np.where(small | outside, f(-1), cls_prob[b, anchors:].transpose(1, 2, 0))
        rows, scores = pred.reshape(-1, 4), score.reshape(-1)
        order = np.argsort(-scores, kind="stable")
        if attrs.rpn_pre_nms_top_n > 0:
            order = order[:attrs.rpn_pre_nms_top_n]
        ranked = rows[order]
        area = (ranked[:, 2] - ranked[:, 0] + f(1)) * (ranked[:, 3] - ranked[:, 1] + f(1))
        removed = np.zeros(len(ranked), bool)
        for lo in range(len(ranked) - 1):
            if not removed[lo]:
                wid = np.maximum(f(0), np.minimum(ranked[lo, 2], ranked[lo + 1:, 2])
                                 - np.maximum(ranked[lo, 0], ranked[lo + 1:, 0]) + f(1))
                hei = np.maximum(f(0), np.minimum(ranked[lo, 3], ranked[lo + 1:, 3])
                                 - np.maximum(ranked[lo, 1], ranked[lo + 1:, 1]) + f(1))
                inter = wid * hei
                removed[lo + 1:] |= inter / (area[lo] + area[lo + 1:] - inter) > f(attrs.threshold)
        kept = ranked[~removed]
        if len(kept):
            out[b * post_n:(b + 1) * post_n, 0] = b
            out[b * post_n:(b + 1) * post_n, 1:] = kept[np.arange(post_n) % len(kept)]
    return out


@register("vision.regular_non_max_suppression")
def regular_non_max_suppression(attrs, boxes, scores):
    """TFLite's per-class NMS (:func:`kiln.topi.testing.regular_nms.regular_non_max_suppression_python`)."""
    return regular_non_max_suppression_python(boxes, scores, attrs.max_detections_per_class, attrs.max_detections,
                                              attrs.num_classes, attrs.iou_threshold, attrs.score_threshold)
