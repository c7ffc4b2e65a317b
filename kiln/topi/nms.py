"""``all_class_non_max_suppression`` (TVM's ``topi.vision.all_class_non_max_suppression``, ONNX's
``NonMaxSuppression``) and the classic ``non_max_suppression`` (TVM's ``hybrid_nms``) as sequential loop-level
kernels.

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

__all__ = ["all_class_non_max_suppression", "non_max_suppression"]


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


def all_class_non_max_suppression(boxes_shape, scores_shape, dtype, scalar_types, name, output_format="onnx"):
    """The PrimFunc of ``all_class_non_max_suppression`` (see the module docstring).

    Parameters
    ----------
    boxes_shape, scores_shape : tuple of int or size variables
        ``(batch, boxes, 4)`` and ``(batch, classes, boxes)`` (a size known only at run time: one variable for both
        shapes, which the packed calling convention binds from the first argument and checks in the second).
    dtype : str
        The float type of boxes and scores.
    scalar_types : list of (shape, dtype)
        Of ``max_output_boxes_per_class`` (integer), ``iou_threshold`` and ``score_threshold`` (float): each a 0-d
        or a 1-element tensor.
    name : str
        The function's name.
    output_format : str
        ``onnx`` or ``tensorflow`` (the results below).

    Returns
    -------
    PrimFunc
        Parameters: boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold, then the outputs
        ``selected_indices`` (int64, ``(batch * classes * boxes, 3)``) and ``num_total_detections`` (int64, ``(1,)``);
        for ``tensorflow`` ``selected_indices`` (int64, ``(batch, classes * boxes, 2)`` rows of ``(class, box)``),
        ``selected_scores`` (float32, ``(batch, classes * boxes)``) and ``num_total_detections`` (int64,
        ``(batch,)``), each batch's rows counted in its own entry.
    """
    batch, n_boxes, _ = boxes_shape
    _, classes, _ = scores_shape
    boxes = decl_buffer(boxes_shape, dtype, "boxes")
    scores = decl_buffer(scores_shape, dtype, "scores")
    max_out, iou_thr, score_thr = (decl_buffer(tuple(shape), t, n) for (shape, t), n in zip(
        scalar_types, ("max_output_boxes_per_class", "iou_threshold", "score_threshold"), strict=True))
    max_dtype = scalar_types[0][1]
    tensorflow = output_format == "tensorflow"
    rows = batch * classes * n_boxes
    if tensorflow:
        selected = decl_buffer((batch, classes * n_boxes, 2), "int64", "selected_indices")
        selected_scores = decl_buffer((batch, classes * n_boxes), "float32", "selected_scores")
        total = decl_buffer((batch,), "int64", "num_total_detections")
    else:
        selected = decl_buffer((rows, 3), "int64", "selected_indices")
        total = decl_buffer((1,), "int64", "num_total_detections")
    alive = decl_buffer((max(n_boxes, 1) if isinstance(n_boxes, int) else _op.maximum(n_boxes, 1),), "int32", "alive")
    best = decl_buffer((1,), "int32", "best")
    i64 = lambda v: _op.cast(v, "int64")  # noqa: E731
    one, zero = _op.const(1, "int32"), _op.const(0, "int32")

    def per_class(b, c):
        fill = _loop("i", n_boxes, lambda i: S.BufferStore(alive, _op.select(
            scores[b, c, i] > _op.cast(_scalar(score_thr), dtype), one, zero), (i,)))
        limit = _scalar(max_out)  # negative: no limit (TVM's -1); 0: nothing (ONNX's default)
        count = _op.cast(n_boxes, max_dtype)
        picks = _op.cast(_op.select(limit < _op.const(0, max_dtype), count, _op.minimum(limit, count)), "int32")

        def pick(_k):
            current = _op.maximum(best[0], zero)
            better = lambda i: _op.logical_or(best[0] < zero, scores[b, c, i] > scores[b, c, current])  # noqa: E731
            search = _loop("i", n_boxes, lambda i: S.IfThenElse(_op.logical_and(alive[i] == one, better(i)),
                                                                S.BufferStore(best, i, (0,)), None))
            slot = b if tensorflow else 0  # the counter of this batch's rows, or of all rows
            row = _op.cast(total[slot], "int32")
            chosen = best[0]
            if tensorflow:
                write = [S.BufferStore(selected, i64(c), (b, row, 0)),
                         S.BufferStore(selected, i64(chosen), (b, row, 1)),
                         S.BufferStore(selected_scores, _op.cast(scores[b, c, chosen], "float32"), (b, row))]
            else:
                write = [S.BufferStore(selected, i64(b), (row, 0)), S.BufferStore(selected, i64(c), (row, 1)),
                         S.BufferStore(selected, i64(chosen), (row, 2))]
            take = S.stmt_seq(
                S.BufferStore(alive, zero, (chosen,)),
                *write,
                S.BufferStore(total, total[slot] + _op.const(1, "int64"), (slot,)),
                _loop("i", n_boxes, lambda i: S.IfThenElse(
                    _op.logical_and(alive[i] == one, _iou_above(boxes, b, chosen, i, _scalar(iou_thr))),
                    S.BufferStore(alive, zero, (i,)), None)),
            )
            return S.stmt_seq(S.BufferStore(best, _op.const(-1, "int32"), (0,)), search,
                              S.IfThenElse(best[0] >= zero, take, None))

        return S.stmt_seq(fill, _loop("k", picks, pick))

    zero64 = _op.const(0, "int64")
    if tensorflow:
        def clear_batch(b):
            return S.stmt_seq(S.BufferStore(total, zero64, (b,)), _loop("r", classes * n_boxes, lambda r: S.stmt_seq(
                *[S.BufferStore(selected, zero64, (b, r, j)) for j in range(2)],
                S.BufferStore(selected_scores, _op.const(0, "float32"), (b, r)))))

        clear = _loop("b", batch, clear_batch)
    else:
        clear = S.stmt_seq(S.BufferStore(total, zero64, (0,)), _loop("r", rows, lambda r: S.stmt_seq(
            *[S.BufferStore(selected, zero64, (r, j)) for j in range(3)])))
    body = S.stmt_seq(clear, _loop("b", batch, lambda b: _loop("c", classes, lambda c: per_class(b, c))))
    body = S.Allocate(best.data, "int32", best.shape, E.convert(True), body)
    body = S.Allocate(alive.data, "int32", alive.shape, E.convert(True), body)
    buffers = [boxes, scores, max_out, iou_thr, score_thr, selected, *([selected_scores] if tensorflow else []), total]
    params = [E.Var(buf.name, "handle") for buf in buffers]
    return PrimFunc(params, body, buffer_map=dict(zip(params, buffers, strict=True))).with_attr("global_symbol", name)


def _box_iou(rows, j, k, start):
    """IoU of rows ``j`` and ``k`` of ``rows`` (corners at ``start .. start + 3`` in either order; 0 for an empty
    union), TVM's ``hybrid_nms`` formula."""
    def corners(r):
        a, b, c, d = (rows[r, start + n] for n in range(4))
        return _op.minimum(a, c), _op.minimum(b, d), _op.maximum(a, c), _op.maximum(b, d)

    al, at, ar, ab = corners(j)
    bl, bt, br, bb = corners(k)
    zero = _op.const(0, rows.dtype)
    w = _op.maximum(zero, _op.minimum(ar, br) - _op.maximum(al, bl))
    h = _op.maximum(zero, _op.minimum(ab, bb) - _op.maximum(at, bt))
    area = h * w
    union = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - area
    return _op.select(union <= zero, zero, area / _op.select(union <= zero, _op.const(1, rows.dtype), union))


def non_max_suppression(data_shape, dtype, indices_type, scalar_types, attrs, name):
    """The PrimFunc of the classic ``vision.non_max_suppression`` (TVM's ``hybrid_nms`` and the rearranging after
    it) for static shapes.

    Per batch ``i``, with ``valid = valid_count[i]``: when ``iou_threshold > 0`` the first ``valid`` rows are ordered
    by score, highest first (the lower index among equals), only ``top_k`` of them kept (when ``0 < top_k``); then,
    in that order, a row whose score is positive is dropped (``-1``) if its IoU with an earlier kept row of positive
    score (of the same class unless ``force_suppress``; ``id_index < 0``: no classes) is at least
    ``iou_threshold``, or once ``max_output_size`` rows are kept. Rows of score ``<= 0`` stay as they are. With
    ``iou_threshold <= 0`` the rows are copied unchanged. Rows from ``valid`` on are ``-1``.

    Results: the rows (``invalid_to_bottom``: those whose first value is not negative moved to the top, the rest
    ``-1``); or with ``return_indices`` the kept rows' indices (through ``indices``) moved to the top, the rest
    ``-1``, and their count ``(batch, 1)``.

    Parameters
    ----------
    data_shape : tuple of int
        ``(batch, anchors, values)``.
    dtype : str
        Of ``data``.
    indices_type : (shape, dtype)
        Of ``indices`` (read only with ``return_indices``, which needs it ``(batch, anchors)``).
    scalar_types : list of (shape, dtype)
        Of ``max_output_size`` (integer) and ``iou_threshold`` (float): each 0-d or 1-element.
    attrs : NonMaximumSuppressionAttrs
    name : str

    Returns
    -------
    PrimFunc
        Parameters: data, valid_count, indices, max_output_size, iou_threshold, then the results.
    """
    batch, n, k_len = data_shape
    data = decl_buffer(data_shape, dtype, "data")
    valid_count = decl_buffer((batch,), "int32", "valid_count")
    indices = decl_buffer(tuple(indices_type[0]), indices_type[1], "indices")
    max_out, iou_thr = (decl_buffer(tuple(shape), t, nm) for (shape, t), nm in zip(
        scalar_types, ("max_output_size", "iou_threshold"), strict=True))
    rows = decl_buffer((max(n, 1), k_len), dtype, "rows")
    box = decl_buffer((max(n, 1),), "int32", "box")
    used = decl_buffer((max(n, 1),), "int32", "used")
    reg = decl_buffer((4,), "int32", "reg")  # best, kept, is_valid, count
    best, kept, is_valid, count = (reg[r] for r in range(4))
    if attrs.return_indices:
        outputs = [decl_buffer((batch, n), "int32", "out_indices"), decl_buffer((batch, 1), "int32", "valid_box_count")]
    else:
        outputs = [decl_buffer(data_shape, dtype, "out")]
    i32 = lambda v: _op.const(v, "int32")  # noqa: E731
    minus_one = _op.const(-1, dtype)
    score, cls, start = attrs.score_index, attrs.id_index, attrs.coord_start

    def set_reg(r, value):
        return S.BufferStore(reg, value, (r,))

    def drop(j):
        return S.stmt_seq(_loop("v", k_len, lambda v: S.BufferStore(rows, minus_one, (j, v))),
                          S.BufferStore(box, i32(-1), (j,)))

    def per_batch(i):
        valid = _op.minimum(_op.maximum(valid_count[i], i32(0)), i32(n))
        nkeep = _op.minimum(valid, i32(attrs.top_k)) if attrs.top_k > 0 else valid

        def pick(r):
            better = lambda j: _op.logical_and(used[j] == i32(0), _op.logical_or(  # noqa: E731
                best < i32(0), data[i, j, score] > data[i, _op.maximum(best, i32(0)), score]))
            return S.stmt_seq(
                set_reg(0, i32(-1)),
                _loop("j", valid, lambda j: S.IfThenElse(better(j), set_reg(0, j), None)),
                S.BufferStore(used, i32(1), (best,)), S.BufferStore(box, best, (r,)),
                _loop("v", k_len, lambda v: S.BufferStore(rows, data[i, best, v], (r, v))))

        def suppress(j, k):
            same = _op.const(True, "bool") if attrs.force_suppress or cls < 0 else rows[j, cls] == rows[k, cls]
            alive = rows[k, score] > _op.const(0, dtype)
            if cls >= 0:
                alive = _op.logical_and(alive, rows[k, cls] >= _op.const(0, dtype))
            check = _op.all(is_valid == i32(1), alive, same)
            overlaps = _box_iou(rows, j, k, start) >= _op.cast(_scalar(iou_thr), dtype)
            return S.IfThenElse(_op.logical_and(check, overlaps), set_reg(2, i32(0)), None)

        def greedy(j):
            keep_or_drop = S.IfThenElse(is_valid == i32(0), drop(j), set_reg(1, kept + i32(1)))
            test = S.stmt_seq(set_reg(2, i32(1)), _loop("k", j, lambda k: suppress(j, k)), keep_or_drop)
            limit = _op.cast(_scalar(max_out), "int32")
            return S.IfThenElse(kept == limit, drop(j),
                                S.IfThenElse(rows[j, score] > _op.const(0, dtype), test, None))

        ordered = S.stmt_seq(
            _loop("j", n, lambda j: S.BufferStore(used, i32(0), (j,))),
            _loop("r", nkeep, pick),
            _loop("r", valid - nkeep, lambda r: drop(r + nkeep)),
            set_reg(1, i32(0)),
            _loop("j", valid, greedy))
        copied = _loop("j", valid, lambda j: S.stmt_seq(
            S.BufferStore(box, j, (j,)), _loop("v", k_len, lambda v: S.BufferStore(rows, data[i, j, v], (j, v)))))
        body = [S.IfThenElse(_scalar(iou_thr) > _op.const(0, iou_thr.dtype), ordered, copied),
                _loop("j", n - valid, lambda j: drop(j + valid))]
        body += _results(i)
        return S.stmt_seq(*body)

    def _results(i):
        if attrs.return_indices:
            out, total = outputs
            compact = _loop("j", n, lambda j: S.IfThenElse(box[j] >= i32(0), S.stmt_seq(
                S.BufferStore(out, _op.cast(indices[i, box[j]], "int32"), (i, count)),  # the index in the input
                set_reg(3, count + i32(1))), None))
            rest = _loop("j", n - count, lambda j: S.BufferStore(out, i32(-1), (i, j + count)))
            return [set_reg(3, i32(0)), compact, rest, S.BufferStore(total, count, (i, 0))]
        (out,) = outputs
        if not attrs.invalid_to_bottom:
            return [_loop("j", n, lambda j: _loop("v", k_len, lambda v: S.BufferStore(out, rows[j, v], (i, j, v))))]
        compact = _loop("j", n, lambda j: S.IfThenElse(rows[j, 0] >= _op.const(0, dtype), S.stmt_seq(
            _loop("v", k_len, lambda v: S.BufferStore(out, rows[j, v], (i, count, v))), set_reg(3, count + i32(1))),
            None))
        return [set_reg(3, i32(0)), compact,
                _loop("j", n - count, lambda j: _loop("v", k_len, lambda v: S.BufferStore(out, minus_one,
                                                                                        (i, j + count, v))))]

    body = _loop("i", batch, per_batch)
    for scratch, t in ((reg, "int32"), (used, "int32"), (box, "int32"), (rows, dtype)):
        body = S.Allocate(scratch.data, t, scratch.shape, E.convert(True), body)
    buffers = [data, valid_count, indices, max_out, iou_thr, *outputs]
    params = [E.Var(buf.name, "handle") for buf in buffers]
    return PrimFunc(params, body, buffer_map=dict(zip(params, buffers, strict=True))).with_attr("global_symbol", name)
