"""``get_valid_counts`` (TVM's ``topi.vision.get_valid_counts``): the boxes of each batch whose score passes the
threshold (and whose class id is not negative) moved to the front in order, the rest filled with -1.

Each box's rank among the valid ones is a count over the boxes before it; each output slot then takes the valid box
of its rank (a sum over the boxes, as at most one matches).
"""

from ..te.operation import compute, reduce_axis
from ..te.operation import sum as _te_sum
from ..tir import op as _op
from . import tag as _tag
from .utils import get_const_tuple

__all__ = ["get_valid_counts"]


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
