"""``proposal`` (TVM's ``topi.vision.rcnn.proposal``): Faster R-CNN's region proposals as a sequential loop-level
kernel (a ``tir.PrimFunc`` built from statements, like :mod:`kiln.topi.nms`).

Per batch ``b``:

1. every feature-map position ``(h, w)`` and anchor ``k`` (ratio ``ratios[k // len(scales)]``, scale
   ``scales[k % len(scales)]``; :func:`generate_anchor`, shifted by ``(w, h) * feature_stride``) gives the box
   moved by the deltas ``bbox_pred[b, 4k:4k+4, h, w]`` (centre and log-size deltas, or with ``iou_loss`` corner
   deltas), clipped to the image ``im_info[b] = [height, width, scale]``, with the score ``cls_prob[b, A + k, h,
   w]``; the score is -1 outside the real feature map (``h >= height / feature_stride``...) and for a box smaller
   than ``rpn_min_size * scale`` (which also grows by that size);
2. the ``rpn_pre_nms_top_n`` boxes of highest score (the lower index among equals) are kept in that order;
3. each box not yet removed removes every later one whose IoU with it (sizes counted ``+ 1`` pixel) is above
   ``threshold``;
4. the boxes left fill ``rpn_post_nms_top_n`` rows ``[b, x1, y1, x2, y2]``, starting over from the first when
   fewer are left (all 0 when none is).
"""

import math

from ..tir import expr as E
from ..tir import intrin as _intrin
from ..tir import op as _op
from ..tir import stmt as S
from ..tir.buffer import decl_buffer
from ..tir.function import PrimFunc

__all__ = ["generate_anchor", "proposal"]


def generate_anchor(ratio, scale, base_size):
    """The anchor box ``(x1, y1, x2, y2)`` of one ratio and scale around the centre of a ``base_size`` cell."""
    w = h = float(base_size)
    x_ctr, y_ctr = 0.5 * (w - 1.0), 0.5 * (h - 1.0)
    size_ratios = math.floor(w * h / ratio)
    new_w = math.floor(math.sqrt(size_ratios) + 0.5) * scale
    new_h = math.floor((new_w / scale * ratio) + 0.5) * scale
    return (x_ctr - 0.5 * (new_w - 1.0), y_ctr - 0.5 * (new_h - 1.0), x_ctr + 0.5 * (new_w - 1.0),
            y_ctr + 0.5 * (new_h - 1.0))


def _loop(name, extent, fbody):
    var = E.Var(name, "int32")
    return S.For(var, _op.const(0, "int32"), extent, S.ForKind.SERIAL, fbody(var))


def proposal(cls_shape, dtype, attrs, name):
    """The PrimFunc of ``vision.proposal`` for static shapes (see the module docstring).

    Parameters
    ----------
    cls_shape : tuple of int
        ``(batch, 2 * anchors, height, width)`` of ``cls_prob``.
    dtype : str
        The float type of the inputs and the result.
    attrs : ProposalAttrs
    name : str

    Returns
    -------
    PrimFunc
        Parameters: cls_prob, bbox_pred, im_info, then the result ``(batch * rpn_post_nms_top_n, 5)``.
    """
    batch, _, height, width = cls_shape
    anchors = len(attrs.scales) * len(attrs.ratios)
    num_bbox = height * width * anchors
    pre_n = min(attrs.rpn_pre_nms_top_n, num_bbox) if attrs.rpn_pre_nms_top_n > 0 else num_bbox
    post_n = attrs.rpn_post_nms_top_n
    cls_prob = decl_buffer(cls_shape, dtype, "cls_prob")
    bbox_pred = decl_buffer((batch, 4 * anchors, height, width), dtype, "bbox_pred")
    im_info = decl_buffer((batch, 3), dtype, "im_info")
    out = decl_buffer((batch * post_n, 5), dtype, "out")
    boxes = decl_buffer((max(num_bbox, 1), 5), dtype, "boxes")
    order = decl_buffer((max(num_bbox, 1),), "int32", "order")  # also the removal mask's and kept list's room
    flags = decl_buffer((max(num_bbox, 1),), "int32", "flags")
    reg = decl_buffer((2,), "int32", "reg")  # best, count
    best, count = reg[0], reg[1]

    def c(v):
        return _op.const(float(v), dtype)

    i32 = lambda v: _op.const(v, "int32")  # noqa: E731

    def predict(b, h, w):
        stores = []
        im_h, im_w, im_scale = im_info[b, 0], im_info[b, 1], im_info[b, 2]
        real_h = _op.cast(im_h / c(attrs.feature_stride), "int32")
        real_w = _op.cast(im_w / c(attrs.feature_stride), "int32")
        min_size = im_scale * c(attrs.rpn_min_size)
        for k in range(anchors):
            anchor = generate_anchor(attrs.ratios[k // len(attrs.scales)], attrs.scales[k % len(attrs.scales)],
                                     attrs.feature_stride)
            sx, sy = _op.cast(w * attrs.feature_stride, dtype), _op.cast(h * attrs.feature_stride, dtype)
            x1, y1, x2, y2 = c(anchor[0]) + sx, c(anchor[1]) + sy, c(anchor[2]) + sx, c(anchor[3]) + sy
            dx, dy, dw, dh = (bbox_pred[b, k * 4 + i, h, w] for i in range(4))
            if attrs.iou_loss:
                pred = [x1 + dx, y1 + dy, x2 + dw, y2 + dh]
            else:
                bw, bh = x2 - x1 + c(1.0), y2 - y1 + c(1.0)
                cx, cy = dx * bw + (x1 + c(0.5) * (bw - c(1.0))), dy * bh + (y1 + c(0.5) * (bh - c(1.0)))
                pw, ph = _intrin.exp(dw) * bw, _intrin.exp(dh) * bh
                pred = [cx - c(0.5) * (pw - c(1.0)), cy - c(0.5) * (ph - c(1.0)), cx + c(0.5) * (pw - c(1.0)),
                        cy + c(0.5) * (ph - c(1.0))]
            limits = [im_w, im_h, im_w, im_h]
            pred = [_op.maximum(_op.minimum(p, lim - c(1.0)), c(0.0)) for p, lim in zip(pred, limits, strict=True)]
            small = _op.logical_or(pred[2] - pred[0] + c(1.0) < min_size, pred[3] - pred[1] + c(1.0) < min_size)
            outside = _op.logical_or(h >= real_h, w >= real_w)
            grow = [c(-0.5), c(-0.5), c(0.5), c(0.5)]
            row = (h * width + w) * anchors + k
            score = _op.select(_op.logical_or(small, outside), c(-1.0), cls_prob[b, anchors + k, h, w])
            values = [_op.select(small, p + g * min_size, p) for p, g in zip(pred, grow, strict=True)] + [score]
            stores += [S.BufferStore(boxes, v, (row, j)) for j, v in enumerate(values)]
        return S.stmt_seq(*stores)

    def pick(r):
        better = lambda j: _op.logical_and(flags[j] == i32(0), _op.logical_or(  # noqa: E731
            best < i32(0), boxes[j, 4] > boxes[_op.maximum(best, i32(0)), 4]))
        return S.stmt_seq(S.BufferStore(reg, i32(-1), (0,)),
                          _loop("j", num_bbox, lambda j: S.IfThenElse(better(j), S.BufferStore(reg, j, (0,)), None)),
                          S.BufferStore(flags, i32(1), (best,)), S.BufferStore(order, best, (r,)))

    def iou_above(a, b_):
        def side(lo, hi):
            return _op.maximum(c(0.0), _op.minimum(boxes[a, hi], boxes[b_, hi]) - _op.maximum(boxes[a, lo],
                                                                                                boxes[b_, lo]) + c(1.0))

        inter = side(0, 2) * side(1, 3)

        def area(r):
            return (boxes[r, 2] - boxes[r, 0] + c(1.0)) * (boxes[r, 3] - boxes[r, 1] + c(1.0))

        return inter / (area(a) + area(b_) - inter) > c(attrs.threshold)

    def per_batch(b):
        ranked = S.stmt_seq(_loop("j", num_bbox, lambda j: S.BufferStore(flags, i32(0), (j,))), _loop("r", pre_n, pick))
        # flags[r]: whether the r-th best box is removed
        def remove_after(lo):
            later = _loop("i", pre_n - lo - 1, lambda i: S.IfThenElse(
                iou_above(order[lo], order[lo + 1 + i]), S.BufferStore(flags, i32(1), (lo + 1 + i,)), None))
            return S.IfThenElse(flags[lo] == i32(0), later, None)

        keep = _loop("j", pre_n, lambda j: S.IfThenElse(flags[j] == i32(0), S.stmt_seq(
            S.BufferStore(flags, j, (count,)), S.BufferStore(reg, count + i32(1), (1,))), None))

        def write(t):
            src = order[flags[_op.floormod(t, _op.maximum(count, i32(1)))]]
            values = [_op.cast(b, dtype)] + [boxes[src, j] for j in range(4)]
            return S.stmt_seq(*[S.BufferStore(out, _op.select(count > i32(0), v, c(0.0)), (b * post_n + t, j))
                                for j, v in enumerate(values)])

        return S.stmt_seq(_loop("h", height, lambda h: _loop("w", width, lambda w: predict(b, h, w))), ranked,
                          _loop("j", pre_n, lambda j: S.BufferStore(flags, i32(0), (j,))),
                          _loop("l", max(pre_n - 1, 0), remove_after),
                          S.BufferStore(reg, i32(0), (1,)), keep, _loop("t", post_n, write))

    body = _loop("b", batch, per_batch)
    for scratch, t in ((reg, "int32"), (flags, "int32"), (order, "int32"), (boxes, dtype)):
        body = S.Allocate(scratch.data, t, scratch.shape, E.convert(True), body)
    buffers = [cls_prob, bbox_pred, im_info, out]
    params = [E.Var(buf.name, "handle") for buf in buffers]
    return PrimFunc(params, body, buffer_map=dict(zip(params, buffers, strict=True))).with_attr("global_symbol", name)
