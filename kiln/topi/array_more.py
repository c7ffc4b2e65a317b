"""Computes of :mod:`kiln.relay.op.array_more`'s operators: ``invert_permutation strided_set sparse_reshape
fixed_point_multiply fifo_buffer multibox_prior`` (``contrib_reverse_reshape`` is ``reshape``)."""

import math

from ..te.operation import comm_reducer, compute, reduce_axis
from ..te.operation import sum as _te_sum
from ..tir import op as _op
from . import tag as _tag
from .utils import SHAPE_CHECKS, get_const_tuple, size_checks

__all__ = ["invert_permutation", "strided_set", "sparse_reshape", "fixed_point_multiply", "fifo_buffer",
           "multibox_prior", "sparse_dense", "fixed_point_multiply_per_axis", "sparse_add"]

_te_prod = comm_reducer(_op.multiply, lambda t: _op.const(1, t), name="prod")


def invert_permutation(data):
    """``out[data[i]] = i`` (a sum over ``i`` of ``i`` where ``data[i] == j``)."""
    n = get_const_tuple(data.shape)[0]

    def fcompute(j):
        i = reduce_axis((0, n), name="i")
        return _te_sum(_op.select(_op.equal(data(i.var), _op.cast(j, data.dtype)), _op.cast(i.var, data.dtype),
                                  _op.const(0, data.dtype)), axis=[i])

    return compute((n,), fcompute, name="T_invert_permutation", tag=_tag.COMM_REDUCE)


def strided_set(data, v, begin, end, strides):
    """``data`` with the slice ``begin:end:strides`` (tensors; negative ``begin``/``end`` count from the end,
    positive strides) replaced by ``v``."""
    shape = get_const_tuple(data.shape)

    def bound(t, a, size):
        value = _op.cast(t(a), "int32")
        value = _op.select(_op.less(value, 0), value + size, value)
        return _op.minimum(_op.maximum(value, _op.const(0, "int32")), _op.const(size, "int32"))

    def fcompute(*i):
        inside, src = [], []
        for a, size in enumerate(shape):
            b, e = bound(begin, a, size), bound(end, a, size)
            s = _op.cast(strides(a), "int32")
            off = _op.cast(i[a], "int32") - b
            inside += [_op.greater_equal(off, 0), _op.less(_op.cast(i[a], "int32"), e),
                       _op.equal(_op.floormod(off, s), 0)]
            src.append(_op.maximum(_op.floordiv(off, s), _op.const(0, "int32")))
        vshape = get_const_tuple(v.shape)
        src = [_op.minimum(x, _op.const(d - 1, "int32")) for x, d in zip(src, vshape, strict=True)]
        return _op.select(_op.all(*inside), v(*src), data(*i))

    return compute(data.shape, fcompute, name="T_strided_set", tag=_tag.INJECTIVE)


def sparse_reshape(sparse_indices, prev_shape, new_shape):
    """``[new_indices, new_shape]``: each coordinate row flattened in ``prev_shape`` and unflattened in
    ``new_shape`` (its ``-1`` resolved from the element count).

    Every product over the shapes is a reduction (not an unrolled loop), so the ranks may be known only at run
    time: ``total`` and ``known`` are the element counts of ``prev_shape`` and of ``new_shape``'s given sizes, the
    strides of a shape are products over the axes after each one."""
    n, rank = sparse_indices.shape
    new_rank = new_shape.shape[0]
    dtype = sparse_indices.dtype
    one = _op.const(1, dtype)

    def product(extent, value, name):
        """A 0-d tensor: the product of ``value(b)`` for ``b`` in ``[0, extent)``."""
        def fcompute():
            b = reduce_axis((0, extent), name="b")
            return _te_prod(value(b.var), axis=[b])

        return compute((), fcompute, name=name, tag=_tag.COMM_REDUCE)

    total = product(rank, lambda b: _op.cast(prev_shape(b), dtype), "T_sparse_reshape_total")
    known = product(new_rank, lambda b: _op.select(_op.less(new_shape(b), 0), one, _op.cast(new_shape(b), dtype)),
                    "T_sparse_reshape_known")
    sizes = compute((new_rank,), lambda a: _op.select(_op.less(new_shape(a), 0), _op.floordiv(total(), known()),
                                                      _op.cast(new_shape(a), dtype)),
                    name="T_sparse_reshape_sizes", tag=_tag.INJECTIVE)

    def strides(extent, size, name):
        """The row-major stride of each axis: the product of the sizes after it."""
        def fcompute(a):
            b = reduce_axis((0, extent), name="b")
            return _te_prod(_op.select(_op.greater(b.var, a), size(b.var), one), axis=[b])

        return compute((extent,), fcompute, name=name, tag=_tag.COMM_REDUCE)

    prev_strides = strides(rank, lambda b: _op.cast(prev_shape(b), dtype), "T_sparse_reshape_prev_strides")
    new_strides = strides(new_rank, sizes, "T_sparse_reshape_new_strides")

    def flat_index(r):
        a = reduce_axis((0, rank), name="a")
        return _te_sum(_op.cast(sparse_indices(r, a.var), dtype) * prev_strides(a.var), axis=[a])

    flat = compute((n,), flat_index, name="T_sparse_reshape_flat", tag=_tag.COMM_REDUCE)

    def mismatches():
        a = reduce_axis((0, rank), name="a")
        differs = _op.any(_op.greater_equal(a.var, new_rank),
                          _op.not_equal(_op.cast(prev_shape(a.var), dtype), sizes(_op.minimum(a.var, new_rank - 1))))
        return _te_sum(_op.select(differs, one, _op.const(0, dtype)), axis=[a])

    # an unchanged shape keeps the indices as they are, even coordinates out of range (TVM's rule)
    unchanged = compute((), mismatches, name="T_sparse_reshape_mismatches", tag=_tag.COMM_REDUCE)
    same = _op.all(_op.equal(rank, new_rank), _op.equal(unchanged(), _op.const(0, dtype)))

    def fcompute(r, k):
        moved = _op.floormod(_op.floordiv(flat(r), new_strides(k)), sizes(k))
        kept = _op.cast(sparse_indices(r, _op.minimum(k, rank - 1)), dtype)
        return _op.select(same, kept, moved)

    indices = compute((n, new_rank), fcompute, name="T_sparse_reshape_indices", tag=_tag.INJECTIVE)
    shape_out = compute((new_rank,), lambda a: _op.cast(sizes(a), new_shape.dtype), name="T_sparse_reshape_shape",
                        tag=_tag.INJECTIVE)
    return [indices, shape_out]


def fixed_point_multiply(x, multiplier, shift):
    """TVM's ``q_multiply_shift(x, multiplier, 31, shift)`` of int32 ``x``: ``(x << max(shift, 0)) * multiplier``
    in int64, plus half of ``2**(31 + max(-shift, 0))``, shifted right by that many bits."""
    left, right = max(shift, 0), 31 + max(-shift, 0)

    def fcompute(*i):
        wide = _op.cast(x(*i), "int64") * _op.const(2**left, "int64") * _op.const(multiplier, "int64")
        rounded = wide + _op.const(1 << (right - 1), "int64")
        return _op.cast(_op.floordiv(rounded, _op.const(1 << right, "int64")), x.dtype)

    return compute(x.shape, fcompute, name="T_fixed_point_multiply", tag=_tag.ELEMWISE)


def fifo_buffer(data, buffer, axis):
    """The last ``buffer.shape[axis]`` elements of ``buffer`` followed by ``data`` along ``axis``."""
    bshape = get_const_tuple(buffer.shape)
    shift = get_const_tuple(data.shape)[axis]
    keep = bshape[axis] - shift

    def fcompute(*i):
        src = i[axis] + shift
        from_buffer = list(i)
        from_buffer[axis] = _op.minimum(src, _op.const(bshape[axis] - 1, "int32"))
        from_data = list(i)
        from_data[axis] = _op.maximum(i[axis] - keep, _op.const(0, "int32"))
        return _op.select(_op.less(i[axis], keep), buffer(*from_buffer), data(*from_data))

    return compute(buffer.shape, fcompute, name="T_fifo_buffer", tag=_tag.INJECTIVE)


def multibox_prior(data, sizes, ratios, steps, offsets, clip):
    """SSD prior boxes (TVM's ``multibox_prior``): per pixel ``(i, j)`` and per size (then per further ratio) the
    box ``[cx - w, cy - h, cx + w, cy + h]`` around ``((j + offset_w) * step_w, (i + offset_h) * step_h)``."""
    _, _, height, width = get_const_tuple(data.shape)
    per = len(sizes) + len(ratios) - 1
    step_h = steps[0] if steps[0] > 0 else 1.0 / height
    step_w = steps[1] if steps[1] > 0 else 1.0 / width
    halves = []
    for k in range(per):
        if k < len(sizes):
            halves.append((sizes[k] * height / width / 2.0, sizes[k] / 2.0))
        else:
            r = math.sqrt(ratios[k - len(sizes) + 1])
            halves.append((sizes[0] * height / width * r / 2.0, sizes[0] / r / 2.0))

    def fcompute(_, box, part):
        i, j, k = box // (width * per), (box // per) % width, box % per
        cy = (_op.cast(i, "float32") + _op.const(offsets[0], "float32")) * _op.const(step_h, "float32")
        cx = (_op.cast(j, "float32") + _op.const(offsets[1], "float32")) * _op.const(step_w, "float32")
        hw, hh = _op.const(halves[-1][0], "float32"), _op.const(halves[-1][1], "float32")
        for q in reversed(range(per - 1)):
            hw = _op.select(_op.equal(k, q), _op.const(halves[q][0], "float32"), hw)
            hh = _op.select(_op.equal(k, q), _op.const(halves[q][1], "float32"), hh)
        value = _op.select(_op.equal(part, 0), cx - hw, _op.select(_op.equal(part, 1), cy - hh,
                                                                   _op.select(_op.equal(part, 2), cx + hw, cy + hh)))
        if clip:
            value = _op.minimum(_op.maximum(value, _op.const(0.0, "float32")), _op.const(1.0, "float32"))
        return value

    return compute((1, height * width * per, 4), fcompute, name="T_multibox_prior", tag=_tag.INJECTIVE)


def sparse_dense(dense, data, indices, indptr, sparse_lhs=False):
    """``dense @ W.T`` (``W @ dense.T`` when ``sparse_lhs``) of the CSR matrix ``W = (data, indices, indptr)``: a
    reduction over each row's stored entries (its extent read from ``indptr``)."""
    m = get_const_tuple(dense.shape)[0]
    rows = get_const_tuple(indptr.shape)[0] - 1

    def value(d, r):
        start = _op.cast(indptr(r), "int32")
        k = reduce_axis((0, _op.cast(indptr(r + 1), "int32") - start), name="k")
        pos = start + k.var
        return _te_sum(data(pos) * dense(d, _op.cast(indices(pos), "int32")), axis=[k])

    if sparse_lhs:
        return compute((rows, m), lambda r, d: value(d, r), name="T_sparse_dense", tag="sparse_dense")
    return compute((m, rows), value, name="T_sparse_dense", tag="sparse_dense")


def fixed_point_multiply_per_axis(x, multiplier, shift, axes):
    """:func:`fixed_point_multiply` with the multiplier and shift of each index along ``axes`` read from tensors."""
    from ..tir import intrin as _intrin

    def fcompute(*i):
        at = [i[a] for a in axes]
        s = _op.cast(shift(*at), "int64")
        zero = _op.const(0, "int64")
        left, right = _op.maximum(s, zero), _op.maximum(zero - s, zero) + _op.const(31, "int64")
        wide = _intrin.shift_left(_op.cast(x(*i), "int64"), left) * _op.cast(multiplier(*at), "int64")
        rounded = wide + _intrin.shift_left(_op.const(1, "int64"), right - _op.const(1, "int64"))
        return _op.cast(_intrin.shift_right(rounded, right), x.dtype)

    return compute(x.shape, fcompute, name="T_fixed_point_multiply_per_axis", tag=_tag.BROADCAST)


def sparse_add(dense, data, indices, indptr):
    """``dense`` plus the CSR matrix ``(data, indices, indptr)``: each element adds the stored entries of its row
    in its column (a reduction over the row's entries)."""

    def fsum(i, j):
        start = _op.cast(indptr(i), "int32")
        k = reduce_axis((0, _op.cast(indptr(i + 1), "int32") - start), name="k")
        pos = start + k.var
        return _te_sum(_op.select(_op.equal(_op.cast(indices(pos), "int32"), j), data(pos),
                                  _op.const(0, data.dtype)), axis=[k])

    rows = get_const_tuple(dense.shape)[0]
    (count,), (n_indices,), (n_ptr,) = (get_const_tuple(t.shape) for t in (data, indices, indptr))
    checks = size_checks([(n_ptr, rows + 1)], "nn.sparse_add: the length of indptr and the rows of dense plus 1")
    checks += size_checks([(n_indices, count)], "nn.sparse_add: the numbers of indices and of values")
    stored = compute(dense.shape, fsum, name="T_sparse_add_stored", tag=_tag.COMM_REDUCE,
                     attrs={SHAPE_CHECKS: tuple(checks)} if checks else None)
    return compute(dense.shape, lambda i, j: dense(i, j) + stored(i, j), name="T_sparse_add", tag=_tag.ELEMWISE)
