"""``get_valid_counts`` and ``multibox_transform_loc`` (TVM's ``topi.vision``).

``get_valid_counts`` moves the boxes of each batch whose score passes the threshold (and whose class id is not
negative) to the front, in order, and fills the rest with -1. Each box's rank among the valid ones is a count over
the boxes before it; each output slot then takes the valid box of its rank (a sum over the boxes, as at most one
matches). ``multibox_transform_loc`` compacts the decoded non-background boxes the same way.
"""

from ..te.operation import compute, reduce_axis
from ..te.operation import sum as _te_sum
from ..tir import op as _op
from . import tag as _tag
from .utils import get_const_tuple

__all__ = ["get_valid_counts", "multibox_transform_loc"]


def get_valid_counts(data, score_threshold, id_index=0, score_index=1):
    """``[valid_count (B,), out (B, N, K), out_indices (B, N)]``; ``score_threshold`` is a scalar expression."""
    b_n, n, k = get_const_tuple(data.shape)

    def valid(b, j):
        ok = _op.greater(data(b, j, score_index), _op.cast(score_threshold, data.dtype))
        if id_index >= 0:
            ok = _op.logical_and(ok, _op.greater_equal(data(b, j, id_index), _op.const(0, data.dtype)))
        return ok

    def frank(b, j):
        r = reduce_axis((0, n), name="r")
        return _te_sum(_op.select(_op.logical_and(_op.less(r.var, j), valid(b, r.var)), 1, 0), axis=[r])

    rank = compute((b_n, n), frank, name="T_valid_rank", tag=_tag.COMM_REDUCE)

    def fcount(b):
        r = reduce_axis((0, n), name="r")
        return _te_sum(_op.select(valid(b, r.var), 1, 0), axis=[r])

    count = compute((b_n,), fcount, name="T_valid_count", tag=_tag.COMM_REDUCE)

    def fsource(b, p):
        r = reduce_axis((0, n), name="r")
        hit = _op.logical_and(valid(b, r.var), _op.equal(rank(b, r.var), p))
        return _te_sum(_op.select(hit, r.var, 0), axis=[r])

    source = compute((b_n, n), fsource, name="T_valid_source", tag=_tag.COMM_REDUCE)
    out = compute((b_n, n, k), lambda b, p, e: _op.select(_op.less(p, count(b)), data(b, source(b, p), e),
                                                          _op.const(-1, data.dtype)),
                  name="T_valid_boxes", tag=_tag.INJECTIVE)
    indices = compute((b_n, n), lambda b, p: _op.select(_op.less(p, count(b)), source(b, p), -1),
                      name="T_valid_indices", tag=_tag.INJECTIVE)
    return [count, out, indices]


def _compact(valid, n_batch, n, name):
    """``(count (B,), source (B, N))``: the number of valid items per batch and, per output slot, the index of the
    valid item of that rank (see the module docstring)."""

    def frank(b, j):
        r = reduce_axis((0, n), name="r")
        return _te_sum(_op.select(_op.logical_and(_op.less(r.var, j), valid(b, r.var)), 1, 0), axis=[r])

    rank = compute((n_batch, n), frank, name=f"T_{name}_rank", tag=_tag.COMM_REDUCE)

    def fcount(b):
        r = reduce_axis((0, n), name="r")
        return _te_sum(_op.select(valid(b, r.var), 1, 0), axis=[r])

    count = compute((n_batch,), fcount, name=f"T_{name}_count", tag=_tag.COMM_REDUCE)

    def fsource(b, p):
        r = reduce_axis((0, n), name="r")
        return _te_sum(_op.select(_op.logical_and(valid(b, r.var), _op.equal(rank(b, r.var), p)), r.var, 0),
                       axis=[r])

    return count, compute((n_batch, n), fsource, name=f"T_{name}_source", tag=_tag.COMM_REDUCE)


def multibox_transform_loc(cls_prob, loc_pred, anchor, clip=True, threshold=0.01, variances=(0.1, 0.1, 0.2, 0.2),
                           keep_background=False):
    """SSD box decoding (TVM's ``multibox_transform_loc``): per anchor the best class (from 1 unless
    ``keep_background``; below ``threshold`` it is background) and its score, the anchor moved and scaled by the
    predicted offsets; boxes not of the background moved to the front as ``[class - 1, score, x1, y1, x2, y2]``,
    the rest -1. Returns ``[out (B, N, 6), valid_count (B,)]``."""
    from ..te.operation import comm_reducer
    from ..tir import intrin as _intrin

    n_batch, n_cls, n = get_const_tuple(cls_prob.shape)
    dtype = cls_prob.dtype
    start = 0 if keep_background else 1

    def combine(x, y):  # (index, value): the larger value, the smaller index on ties
        take_y = _op.logical_or(_op.greater(y[1], x[1]), _op.logical_and(_op.equal(y[1], x[1]),
                                                                          _op.less(y[0], x[0])))
        return _op.select(take_y, y[0], x[0]), _op.select(take_y, y[1], x[1])

    best = comm_reducer(combine, lambda t0, t1: (_op.const(0, t0), _op.const(-1.0, t1)), name="best")

    def fbest(b, j):
        k = reduce_axis((start, n_cls), name="k")
        return best((k.var, cls_prob(b, k.var, j)), axis=[k])

    cls_id, score = compute((n_batch, n), fbest, name="T_multibox_best", tag="comm_reduce_idx")

    def label(b, j):
        c = cls_id(b, j)
        return _op.select(_op.logical_and(_op.greater(c, 0), _op.less(score(b, j), _op.const(threshold, dtype))),
                          0, c)

    def valid(b, j):
        return _op.const(True, "bool") if keep_background else _op.greater(label(b, j), 0)

    count, source = _compact(valid, n_batch, n, "multibox")

    def coord(b, j, part):
        al, at, ar, ab = (anchor(0, j, q) for q in range(4))
        px, py, pw, ph = (loc_pred(b, j * 4 + q) for q in range(4))
        half = _op.const(0.5, dtype)
        aw, ah = ar - al, ab - at
        ox = px * _op.const(variances[0], dtype) * aw + (al + ar) * half
        oy = py * _op.const(variances[1], dtype) * ah + (at + ab) * half
        ow = _intrin.exp(pw * _op.const(variances[2], dtype)) * aw * half
        oh = _intrin.exp(ph * _op.const(variances[3], dtype)) * ah * half
        value = _op.select(_op.equal(part, 0), ox - ow, _op.select(_op.equal(part, 1), oy - oh,
                                                                   _op.select(_op.equal(part, 2), ox + ow, oy + oh)))
        if clip:
            value = _op.minimum(_op.maximum(value, _op.const(0.0, dtype)), _op.const(1.0, dtype))
        return value

    def fout(b, p, e):
        j = source(b, p)
        lab = _op.cast(label(b, j), dtype) - _op.const(0.0 if keep_background else 1.0, dtype)
        value = _op.select(_op.equal(e, 0), lab, _op.select(_op.equal(e, 1), score(b, j), coord(b, j, e - 2)))
        return _op.select(_op.less(p, count(b)), value, _op.const(-1.0, dtype))

    out = compute((n_batch, n, 6), fout, name="T_multibox_transform_loc", tag=_tag.INJECTIVE)
    return [out, count]
