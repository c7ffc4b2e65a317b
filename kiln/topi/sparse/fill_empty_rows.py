"""``sparse_fill_empty_rows`` (TVM's ``topi.sparse_fill_empty_rows``) as reductions over the entries and rows.

With the entries sorted by row, an entry ``i`` lands at ``i`` plus the number of empty rows before its row, and the
filler of an empty row ``r`` at the number of entries in rows before ``r`` plus the empty rows before ``r``. Output
position ``p`` gathers the single entry or filler that lands there (a sum over both with a match condition):
quadratic work, but plain reductions any schedule handles, over sizes that may be known only at run time.
"""

from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import op as _op
from .. import tag as _tag

__all__ = ["distinct_rows", "sparse_fill_empty_rows"]

_I = "int32"


def _one_if(condition):
    return _op.select(condition, _op.const(1, _I), _op.const(0, _I))


def _row(indices, i):
    return _op.cast(indices(i, 0), _I)


def distinct_rows(indices):
    """The number of distinct first coordinates of ``indices`` (sorted by them): a 0-d int32 tensor."""
    n = indices.shape[0]

    def fcompute():
        i = reduce_axis((0, n), name="i")
        previous = _row(indices, _op.maximum(i.var - 1, 0))
        first = _op.any(_op.equal(i.var, 0), _op.not_equal(previous, _row(indices, i.var)))
        return _te_sum(_one_if(first), axis=[i])

    return compute((), fcompute, name="T_sfer_distinct", tag=_tag.COMM_REDUCE)


def sparse_fill_empty_rows(indices, values, default_value, count, rows):
    """``[new_indices (count, ndim), new_values (count,), empty_row_indicator (rows,)]``; ``count`` and ``rows`` are
    the sizes the shape function computed (size variables bound from the output buffers)."""
    n, ndim = indices.shape

    def fill(r):
        i = reduce_axis((0, n), name="i")
        return _te_sum(_one_if(_op.equal(_row(indices, i.var), r)), axis=[i])

    entries_in_row = compute((rows,), fill, name="T_sfer_row_entries", tag=_tag.COMM_REDUCE)

    def empty_before(r):
        q = reduce_axis((0, rows), name="q")
        return _te_sum(_one_if(_op.all(_op.less(q.var, r), _op.equal(entries_in_row(q.var), 0))), axis=[q])

    empties = compute((rows,), empty_before, name="T_sfer_empty_before", tag=_tag.COMM_REDUCE)

    def entries_before(r):
        i = reduce_axis((0, n), name="i")
        return _te_sum(_one_if(_op.less(_row(indices, i.var), r)), axis=[i])

    before = compute((rows,), entries_before, name="T_sfer_entries_before", tag=_tag.COMM_REDUCE)

    def entry_lands(i, p):
        return _op.equal(i + empties(_op.minimum(_row(indices, i), rows - 1)), p)

    def filler_lands(r, p):
        return _op.all(_op.equal(entries_in_row(r), 0), _op.equal(before(r) + empties(r), p))

    def gather(shape, from_entry, from_filler, dtype, name):
        """Output position ``p`` (the first index of ``shape``) read from the entry or the filler landing there:
        two reductions (one over the entries, one over the rows), added."""
        zero = _op.const(0, dtype)

        def over_entries(p, *rest):
            i = reduce_axis((0, n), name="i")
            return _te_sum(_op.select(entry_lands(i.var, p), from_entry(i.var, *rest), zero), axis=[i])

        def over_rows(p, *rest):
            r = reduce_axis((0, rows), name="r")
            return _te_sum(_op.select(filler_lands(r.var, p), from_filler(r.var, *rest), zero), axis=[r])

        a = compute(shape, over_entries, name=f"{name}_entries", tag=_tag.COMM_REDUCE)
        b = compute(shape, over_rows, name=f"{name}_fillers", tag=_tag.COMM_REDUCE)
        return compute(shape, lambda *i: a(*i) + b(*i), name=name, tag=_tag.INJECTIVE)

    new_indices = gather((count, ndim), lambda i, d: indices(i, d),
                         lambda r, d: _op.select(_op.equal(d, 0), _op.cast(r, indices.dtype),
                                                 _op.const(0, indices.dtype)), indices.dtype, "T_sfer_indices")
    new_values = gather((count,), values, lambda r: default_value(0), values.dtype, "T_sfer_values")
    indicator = compute((rows,), lambda r: _op.equal(entries_in_row(r), 0), name="T_sfer_empty",
                        tag=_tag.INJECTIVE)
    return [new_indices, new_values, indicator]
