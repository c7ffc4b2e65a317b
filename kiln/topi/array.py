"""Array computes (TVM's ``topi/transform.py`` beyond data movement): ``stack arange meshgrid trilu unravel_index
sequence_mask reverse_sequence ndarray_size searchsorted sparse_to_dense collapse_sum variance``.

Most are one injective ``te.compute``. ``searchsorted`` counts the elements before each value (one reduction per
value: the same answer as a binary search on a sorted sequence, and vectorizable); ``sparse_to_dense`` finds, per
output element, the last sparse entry addressing it with a ``max`` reduction, then reads its value.
"""

import functools
import math

from ..te.operation import compute, reduce_axis
from ..te.operation import max as _te_max
from ..te.operation import sum as _te_sum
from ..tir import dtype as _dt
from ..tir import op as _op
from . import tag as _tag
from .elemwise import cast_expr
from .utils import SHAPE_CHECKS, get_const_tuple, normalize_axis, prod, size_checks

__all__ = ["stack", "arange", "meshgrid", "trilu", "unravel_index", "sequence_mask", "reverse_sequence",
           "ndarray_size", "searchsorted", "arange_dynamic", "sparse_to_dense", "collapse_sum", "variance", "adv_index",
           "matrix_set_diag"]


def _smallest(a, b):
    """``min(a, b)`` of sizes, folded when both are ints."""
    return min(a, b) if isinstance(a, int) and isinstance(b, int) else _op.minimum(a, b)


def _largest(a, b):
    """``max(a, b)`` of sizes, folded when both are ints."""
    return max(a, b) if isinstance(a, int) and isinstance(b, int) else _op.maximum(a, b)


def _int(v):
    return v if v.dtype in ("int32", "int64") else _op.cast(v, "int32")


def stack(tensors, axis=0):
    """Join same-shape ``tensors`` along a new axis ``axis``."""
    shape = get_const_tuple(tensors[0].shape)
    axis = normalize_axis(axis, len(shape) + 1, "stack axis")
    out_shape = shape[:axis] + (len(tensors),) + shape[axis:]

    def fcompute(*i):
        rest = i[:axis] + i[axis + 1:]
        value = tensors[-1](*rest)
        for k in reversed(range(len(tensors) - 1)):
            value = _op.select(_op.equal(i[axis], k), tensors[k](*rest), value)
        return value

    return compute(out_shape, fcompute, name="T_stack", tag=_tag.INJECTIVE)


def arange(start, step, length, dtype):
    """``start + step * i`` for ``i < length``, computed in ``dtype`` (``start`` and ``step`` are numbers)."""
    first, delta = _op.const(start, dtype), _op.const(step, dtype)
    return compute((length,), lambda i: _op.add(first, _op.multiply(delta, _op.cast(i, dtype))), name="T_arange",
                   tag=_tag.ELEMWISE)


def arange_dynamic(start, step, length, dtype):
    """``start + step * i`` for ``i < length`` (a size variable), ``start`` and ``step`` scalar tensors (0-d or of
    one element), computed in ``dtype``."""
    first, delta = (_op.cast(t() if not t.shape else t(0), dtype) for t in (start, step))
    return compute((length,), lambda i: _op.add(first, _op.multiply(delta, _op.cast(i, dtype))), name="T_arange",
                   tag=_tag.ELEMWISE)


def meshgrid(tensors, indexing="ij"):
    """The coordinate grids of 1-D (or 0-d) ``tensors``; ``"xy"`` swaps the first two axes."""
    sizes = [get_const_tuple(t.shape)[0] if len(t.shape) else 1 for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    outs = []
    for k, t in enumerate(tensors):
        axis = (1 - k if k < 2 else k) if swap else k
        read = (lambda i, t=t, a=axis: t(i[a])) if len(t.shape) else (lambda i, t=t: t())
        outs.append(compute(tuple(sizes), lambda *i, read=read: read(i), name=f"T_meshgrid{k}", tag=_tag.INJECTIVE))
    return outs


def trilu(data, k, upper=True):
    """``data`` with the elements below (``upper``) or above diagonal ``k`` of its last two axes set to zero;
    ``k`` is an integer expression."""
    k = _int(k)

    def fcompute(*i):
        diff = _op.subtract(_op.cast(i[-1], k.dtype), _op.cast(i[-2], k.dtype))
        keep = _op.greater_equal(diff, k) if upper else _op.less_equal(diff, k)
        return _op.select(keep, data(*i), _op.const(0, data.dtype))

    return compute(data.shape, fcompute, name="T_trilu", tag=_tag.INJECTIVE)


def unravel_index(indices, shape):
    """The coordinates of the flat ``indices`` (rank 0 or 1) in an array whose shape is the 1-D tensor ``shape``."""
    rank = get_const_tuple(shape.shape)[0]
    ishape = get_const_tuple(indices.shape)

    def fcompute(d, *i):
        value = indices(*i)
        coord = _op.const(0, value.dtype)
        for a in reversed(range(rank)):
            size = shape(a)
            coord = _op.select(_op.equal(d, a), _op.floormod(value, size), coord)
            value = _op.floordiv(value, size)
        return coord

    return compute((rank,) + ishape, fcompute, name="T_unravel_index", tag=_tag.INJECTIVE)


def sequence_mask(data, valid_length, mask_value=0.0, axis=0):
    """``data`` with the time steps (along ``axis``, 0 or 1) at or past each batch's ``valid_length`` replaced by
    ``mask_value``."""
    mask = _op.const(mask_value, data.dtype) if _dt.is_float(data.dtype) else _op.const(int(mask_value), data.dtype)

    def fcompute(*i):
        length = valid_length(i[1 - axis])
        length = length if _dt.is_float(valid_length.dtype) else _int(length)
        return _op.select(_op.less(_op.cast(i[axis], length.dtype), length), data(*i), mask)

    return compute(data.shape, fcompute, name="T_sequence_mask", tag=_tag.INJECTIVE)


def reverse_sequence(data, seq_lengths, seq_axis=1, batch_axis=0):
    """``data`` with the first ``seq_lengths[b]`` elements along ``seq_axis`` of each batch ``b`` reversed
    (lengths past the axis reverse all of it)."""
    ndim = len(data.shape)
    seq_axis, batch_axis = normalize_axis(seq_axis, ndim), normalize_axis(batch_axis, ndim)
    dim = get_const_tuple(data.shape)[seq_axis]

    def fcompute(*i):
        length = _op.minimum(_int(seq_lengths(i[batch_axis])), _op.cast(dim, "int32"))  # dim: an int or run-time size
        pos = _op.cast(i[seq_axis], length.dtype)
        src = _op.select(_op.less(pos, length), _op.subtract(_op.subtract(length, 1), pos), pos)
        return data(*(i[:seq_axis] + (src,) + i[seq_axis + 1:]))

    return compute(data.shape, fcompute, name="T_reverse_sequence", tag=_tag.INJECTIVE)


def ndarray_size(data, dtype="int32"):
    """The number of elements of ``data``, a 0-d tensor of ``dtype``."""
    dims = get_const_tuple(data.shape)
    if all(isinstance(d, int) for d in dims):
        size = _op.const(math.prod(dims), dtype)
    else:  # sizes known at run time: the product of the size variables, in the result's dtype
        size = _op.cast(prod(dims), dtype)
    return compute((), lambda: size, name="T_ndarray_size", tag=_tag.ELEMWISE)


def searchsorted(sorted_sequence, values, right=False, dtype="int32"):
    """For each of ``values``, the number of elements of the sorted sequence (its last axis; the leading axes match
    ``values``' when it has several) less than it (or less or equal, ``right``)."""
    sshape = get_const_tuple(sorted_sequence.shape)
    n = sshape[-1]

    def fcompute(*i):
        k = reduce_axis((0, n), name="k")
        elem = sorted_sequence(k.var) if len(sshape) == 1 else sorted_sequence(*(i[:-1] + (k.var,)))
        v = values(*i)
        before = _op.less_equal(elem, v) if right else _op.less(elem, v)
        return _te_sum(_op.cast(before, dtype), axis=[k])

    return compute(values.shape, fcompute, name="T_searchsorted", tag=_tag.COMM_REDUCE)


def sparse_to_dense(sparse_indices, sparse_values, default_value, output_shape):
    """A dense tensor of ``output_shape``: ``sparse_values`` at the coordinates ``sparse_indices`` (0-d, ``(N,)``
    or ``(N, rank)``), ``default_value`` (a scalar expression) elsewhere; the last of repeated indices wins."""
    ishape = get_const_tuple(sparse_indices.shape)
    count = ishape[0] if ishape else 1
    checks = size_checks([(n, count) for n in get_const_tuple(sparse_values.shape)],
                         "sparse_to_dense: the numbers of sparse_values and of sparse_indices")
    checks += size_checks([(r, len(output_shape)) for r in ishape[1:]],
                          "sparse_to_dense: the rank sparse_indices address and that of output_shape")
    checks = tuple(checks)

    def coordinate(n, axis):
        if not ishape:
            return sparse_indices()
        return sparse_indices(n) if len(ishape) == 1 else sparse_indices(n, axis)

    def fwhich(*i):
        k = reduce_axis((0, count), name="n")
        hit = _op.all(*[_op.equal(_int(coordinate(k.var, a)), _op.cast(x, "int32")) for a, x in enumerate(i)])
        return _te_max(_op.select(hit, k.var, _op.const(-1, "int32")), axis=[k])

    which = compute(tuple(output_shape), fwhich, name="T_sparse_to_dense_index", tag=_tag.COMM_REDUCE,
                    attrs={SHAPE_CHECKS: checks} if checks else None)

    def fcompute(*i):
        n = which(*i)
        if len(sparse_values.shape):
            value = sparse_values(_op.maximum(n, _op.const(0, "int32")))
        else:
            value = sparse_values()
        return _op.select(_op.greater_equal(n, 0), value, default_value)

    return compute(tuple(output_shape), fcompute, name="T_sparse_to_dense", tag=_tag.INJECTIVE)


def collapse_sum(data, target_shape, axes):
    """``data`` summed over ``axes`` (the leading axes ``target_shape`` lacks and its stretched size-1 axes) down to
    ``target_shape``."""
    shape = get_const_tuple(data.shape)
    lead = len(shape) - len(target_shape)
    work = "float32" if data.dtype == "float16" else data.dtype

    def fcompute(*i):
        rvars = {a: reduce_axis((0, shape[a]), name=f"k{a}") for a in axes}
        idx = [rvars[a].var if a in rvars else i[a - lead] for a in range(len(shape))]
        value = _op.cast(data(*idx), work)
        return _te_sum(value, axis=list(rvars.values())) if rvars else value

    tag = _tag.COMM_REDUCE if axes else _tag.ELEMWISE
    out = compute(tuple(target_shape), fcompute, name="T_collapse_sum", tag=tag)
    if work == data.dtype:
        return out
    return compute(out.shape, lambda *i: _op.cast(out(*i), data.dtype), name="T_collapse_sum_cast", tag=_tag.ELEMWISE)


def variance(data, mean, axes, keepdims=False, unbiased=False):
    """The mean of ``(data - mean)**2`` over ``axes`` (``mean`` has ``data``'s rank, size 1 on ``axes``), divided
    by ``count - 1`` when ``unbiased``."""
    shape = get_const_tuple(data.shape)
    work = "float32" if data.dtype == "float16" else data.dtype
    count = math.prod(shape[a] for a in axes) - (1 if unbiased else 0)
    out_shape = tuple(1 if a in axes else d for a, d in enumerate(shape) if keepdims or a not in axes)

    def fcompute(*i):
        rvars = {a: reduce_axis((0, shape[a]), name=f"k{a}") for a in axes}
        it = iter(i)
        idx = []
        for a in range(len(shape)):
            if a in rvars:
                idx.append(rvars[a].var)
                if keepdims:
                    next(it)
            else:
                idx.append(next(it))
        m = mean(*[0 if a in rvars else x for a, x in enumerate(idx)])
        diff = _op.cast(_op.subtract(data(*idx), m), work)
        sq = _op.multiply(diff, diff)
        return _te_sum(sq, axis=list(rvars.values())) if rvars else sq

    total = compute(out_shape, fcompute, name="T_variance_sum", tag=_tag.COMM_REDUCE if axes else _tag.ELEMWISE)
    # a count known only at run time divides as it is (the unbiased count of one element is 0 there, as in numpy)
    divisor = _op.const(max(count, 0), work) if isinstance(count, int) else _op.cast(count, work)
    return compute(out_shape, lambda *i: cast_expr(_op.div(total(*i), divisor), data.dtype),
                   name="T_variance", tag=_tag.ELEMWISE)


def adv_index(data, indices):
    """numpy's advanced indexing ``data[indices[0], indices[1], ...]`` (index tensors broadcast together)."""
    from .broadcast import broadcast_shape

    bshape = broadcast_shape(*[get_const_tuple(t.shape) for t in indices], what="topi.adv_index")
    rest = get_const_tuple(data.shape)[len(indices):]

    def read(t, b):
        tshape = get_const_tuple(t.shape)
        lead = len(b) - len(tshape)
        return _int(t(*[0 if d == 1 else b[lead + k] for k, d in enumerate(tshape)]))

    def fcompute(*i):
        b, r = i[:len(bshape)], i[len(bshape):]
        return data(*[read(t, b) for t in indices], *r)

    return compute(tuple(bshape) + tuple(rest), fcompute, name="T_adv_index", tag=_tag.INJECTIVE)


def matrix_set_diag(data, diagonal, k1=0, k2=0, super_diag_right_align=False, sub_diag_right_align=False):
    """``data`` with the diagonals ``k1..k2`` of its last two axes taken from ``diagonal`` (TensorFlow's
    ``matrix_set_diag``: one row of ``diagonal`` per diagonal, from ``k2`` down, shorter ones aligned left or
    right). Sizes known only at run time are checked then: ``diagonal`` must have ``data``'s leading sizes, the
    number of diagonals and the longest one's length."""
    shape = get_const_tuple(data.shape)
    rows, cols = shape[-2:]
    dshape = get_const_tuple(diagonal.shape)
    max_len = dshape[-1]
    lengths = {k: _smallest(rows + min(0, k), cols - max(0, k)) for k in range(k1, k2 + 1)}
    longest = functools.reduce(_largest, lengths.values())
    want = [*zip(dshape[:len(shape) - 2], shape[:-2], strict=True)] + [(max_len, longest)]
    if k1 != k2:
        want.append((dshape[-2], k2 - k1 + 1))
    checks = tuple(size_checks(want, f"matrix_set_diag: a size of diagonal {dshape} for data {shape}"))

    def fcompute(*i):
        lead, r, c = i[:-2], i[-2], i[-1]
        d = c - r
        value = data(*i)
        for k in range(k1, k2 + 1):
            right = super_diag_right_align if k >= 0 else sub_diag_right_align
            offset = max_len - lengths[k] if right else 0
            pos = (r if k >= 0 else c) + offset
            src = diagonal(*lead, pos) if k1 == k2 else diagonal(*lead, k2 - k, pos)
            value = _op.select(_op.equal(d, k), src, value)
        return value

    return compute(data.shape, fcompute, name="T_matrix_set_diag", tag=_tag.INJECTIVE,
                   attrs={SHAPE_CHECKS: checks} if checks else None)
