"""``all_class_non_max_suppression`` (TVM's ``topi.vision.all_class_non_max_suppression``, ONNX's
``NonMaxSuppression``) as a sequential loop-level kernel.

Greedy non-maximum suppression is sequential by nature (a box survives only if no box selected before it overlaps
it), and a TE compute has no sequential dependence between elements; TVM writes it with ``ir_builder``. kiln builds
the ``tir.PrimFunc`` directly from statements (serial ``For``, ``IfThenElse``, ``BufferStore``; scratch buffers are
``Allocate``d), and the TE compiler lowers an operator that registers such a builder (``FTVMPrimFunc``) through the
usual TIR pipeline instead of a schedule.

Per batch ``b`` and class ``c``: every box whose score is above ``score_threshold`` is alive; then, up to
``max_output_boxes_per_class`` times, the alive box of highest score (the lowest index among equals) is selected,
written as ``(b, c, box)``, and every alive box whose IoU with it exceeds ``iou_threshold`` is dropped (ONNX Runtime's
rule: corners given as ``[y1, x1, y2, x2]`` in either order; an empty intersection or area suppresses nothing). Work
is ``O(selected * boxes)`` per class, no sort needed. Rows are grouped by batch, then class, then selection order;
the remaining rows of the ``(batch * classes * boxes, 3)`` int64 result are 0 and the second result holds the
number of rows written.
"""

from ..tir import expr as E
from ..tir import op as _op
from ..tir import stmt as S
from ..tir.buffer import decl_buffer
from ..tir.function import PrimFunc

__all__ = ["all_class_non_max_suppression"]


def _loop(name, extent, fbody):
    var = E.Var(name, "int32")
    return S.For(var, _op.const(0, "int32"), extent, S.ForKind.SERIAL, fbody(var))


def _scalar(buf):
    return buf[0] if len(buf.shape) else E.BufferLoad(buf, ())


def _iou_above(boxes, b, i, j, threshold):
    """Whether boxes ``i`` and ``j`` of batch ``b`` overlap by more than ``threshold`` (IoU)."""
    def corners(k):
        y1, x1, y2, x2 = (boxes[b, k, n] for n in range(4))
        return _op.minimum(y1, y2), _op.minimum(x1, x2), _op.maximum(y1, y2), _op.maximum(x1, x2)

    ay1, ax1, ay2, ax2 = corners(i)
    by1, bx1, by2, bx2 = corners(j)
    ih = _op.minimum(ay2, by2) - _op.maximum(ay1, by1)
    iw = _op.minimum(ax2, bx2) - _op.maximum(ax1, bx1)
    inter = _op.maximum(ih, _op.const(0, ih.dtype)) * _op.maximum(iw, _op.const(0, iw.dtype))
    area_a, area_b = (ay2 - ay1) * (ax2 - ax1), (by2 - by1) * (bx2 - bx1)
    union = area_a + area_b - inter
    zero = _op.const(0, inter.dtype)
    positive = _op.all(inter > zero, area_a > zero, area_b > zero, union > zero)
    return _op.logical_and(positive, inter > _op.cast(threshold, inter.dtype) * union)


def all_class_non_max_suppression(boxes_shape, scores_shape, dtype, scalar_types, name):
    """The PrimFunc of ``all_class_non_max_suppression`` for static shapes (see the module docstring).

    Parameters
    ----------
    boxes_shape, scores_shape : tuple of int
        ``(batch, boxes, 4)`` and ``(batch, classes, boxes)``.
    dtype : str
        The float type of boxes and scores.
    scalar_types : list of (shape, dtype)
        Of ``max_output_boxes_per_class`` (integer), ``iou_threshold`` and ``score_threshold`` (float): each a 0-d
        or a 1-element tensor.
    name : str
        The function's name.

    Returns
    -------
    PrimFunc
        Parameters: boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold, then the outputs
        ``selected_indices`` (int64, ``(batch * classes * boxes, 3)``) and ``num_total_detections`` (int64, ``(1,)``).
    """
    batch, n_boxes, _ = boxes_shape
    _, classes, _ = scores_shape
    boxes = decl_buffer(boxes_shape, dtype, "boxes")
    scores = decl_buffer(scores_shape, dtype, "scores")
    max_out, iou_thr, score_thr = (decl_buffer(tuple(shape), t, n) for (shape, t), n in zip(
        scalar_types, ("max_output_boxes_per_class", "iou_threshold", "score_threshold"), strict=True))
    max_dtype = scalar_types[0][1]
    rows = batch * classes * n_boxes
    selected = decl_buffer((rows, 3), "int64", "selected_indices")
    total = decl_buffer((1,), "int64", "num_total_detections")
    alive = decl_buffer((max(n_boxes, 1),), "int32", "alive")
    best = decl_buffer((1,), "int32", "best")
    i64 = lambda v: _op.cast(v, "int64")  # noqa: E731
    one, zero = _op.const(1, "int32"), _op.const(0, "int32")

    def per_class(b, c):
        fill = _loop("i", n_boxes, lambda i: S.BufferStore(alive, _op.select(
            scores[b, c, i] > _op.cast(_scalar(score_thr), dtype), one, zero), (i,)))
        limit = _scalar(max_out)  # negative: no limit (TVM's -1); 0: nothing (ONNX's default)
        picks = _op.cast(_op.select(limit < _op.const(0, max_dtype), _op.const(n_boxes, max_dtype),
                                    _op.minimum(limit, _op.const(n_boxes, max_dtype))), "int32")

        def pick(_k):
            current = _op.maximum(best[0], zero)
            better = lambda i: _op.logical_or(best[0] < zero, scores[b, c, i] > scores[b, c, current])  # noqa: E731
            search = _loop("i", n_boxes, lambda i: S.IfThenElse(_op.logical_and(alive[i] == one, better(i)),
                                                                S.BufferStore(best, i, (0,)), None))
            row = _op.cast(total[0], "int32")
            chosen = best[0]
            take = S.stmt_seq(
                S.BufferStore(alive, zero, (chosen,)),
                S.BufferStore(selected, i64(b), (row, 0)),
                S.BufferStore(selected, i64(c), (row, 1)),
                S.BufferStore(selected, i64(chosen), (row, 2)),
                S.BufferStore(total, total[0] + _op.const(1, "int64"), (0,)),
                _loop("i", n_boxes, lambda i: S.IfThenElse(
                    _op.logical_and(alive[i] == one, _iou_above(boxes, b, chosen, i, _scalar(iou_thr))),
                    S.BufferStore(alive, zero, (i,)), None)),
            )
            return S.stmt_seq(S.BufferStore(best, _op.const(-1, "int32"), (0,)), search,
                              S.IfThenElse(best[0] >= zero, take, None))

        return S.stmt_seq(fill, _loop("k", picks, pick))

    clear = _loop("r", rows, lambda r: S.stmt_seq(*[S.BufferStore(selected, _op.const(0, "int64"), (r, j))
                                                     for j in range(3)]))
    body = S.stmt_seq(S.BufferStore(total, _op.const(0, "int64"), (0,)), clear,
                      _loop("b", batch, lambda b: _loop("c", classes, lambda c: per_class(b, c))))
    body = S.Allocate(best.data, "int32", best.shape, E.convert(True), body)
    body = S.Allocate(alive.data, "int32", alive.shape, E.convert(True), body)
    buffers = [boxes, scores, max_out, iou_thr, score_thr, selected, total]
    params = [E.Var(buf.name, "handle") for buf in buffers]
    return PrimFunc(params, body, buffer_map=dict(zip(params, buffers, strict=True))).with_attr("global_symbol", name)
