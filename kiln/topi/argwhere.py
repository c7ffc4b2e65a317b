"""``argwhere`` (TVM's ``topi.argwhere``): the indices of the non-zero elements of a tensor, one row per element in
row-major order, as computes and reductions only (kiln has no sequential ``ir_builder`` kernels).

How: over the flattened tensor, ``nz[f]`` is 1 for a non-zero element. A running count ``incl[f]`` (the number of
non-zeros at or before ``f``) is built in two levels so the work stays near-linear: block sums of ``nz`` (blocks of
``B`` elements), their exclusive prefix (quadratic in the number of blocks only), and a prefix inside each block
(``B`` per element). ``incl`` never decreases, so the element of output row ``p`` is the first ``f`` with
``incl[f] > p``: a binary search unrolled into ``log2(size)`` stages, each one clamped load per row.
In all ``O(N * B + (N / B)^2 + count * log N)``, with ``B`` about ``(2N)^(1/3)``. The result's row count is a size
variable the caller gives (``argwhere``'s shape function counts the non-zeros with :func:`count_nonzero`).
"""

from ..te.operation import compute, reduce_axis
from ..te.operation import sum as _te_sum
from ..tir import expr as E
from ..tir import op as _op
from . import tag as _tag
from .utils import get_const_tuple, prod, unravel_index

__all__ = ["argwhere", "count_nonzero", "SEARCH_TAG"]

SEARCH_TAG = "argwhere_search"
"""The tag of the binary-search stages. Each is a reduction over one element, so no schedule inlines it into the
next (schedules inline every stage without a reduction): inlined, each step would copy the previous one twice, an
expression exponential in the number of steps."""


def _nonzero(x):
    return x if x.dtype == "bool" else _op.not_equal(x, _op.const(0, x.dtype))


def _flat_nonzero(data):
    """``nz``: 1 where the flattened ``data`` is non-zero, else 0 (int32), and the flattened size."""
    shape = get_const_tuple(data.shape)
    size = prod(shape) if shape else 1

    def fcompute(f):
        value = data(*unravel_index(f, shape)) if shape else data()
        return _op.select(_nonzero(value), _op.const(1, "int32"), _op.const(0, "int32"))

    return compute((size,), fcompute, name="T_nonzero_flags", tag=_tag.INJECTIVE), size


def count_nonzero(data):
    """The number of non-zero elements of ``data``, a 0-d int32 tensor."""
    flags, size = _flat_nonzero(data)
    r = reduce_axis((0, size), name="r")
    return compute((), lambda: _te_sum(flags[r], axis=r), name="T_count_nonzero", tag=_tag.COMM_REDUCE)


def _block_size(size) -> int:
    if not isinstance(size, int):
        return 64
    block = 1
    while block * block * block < 2 * size:
        block *= 2
    return block


def _running_count(flags, size):
    """``incl[f]``: the non-zeros at or before ``f`` (see the module docstring)."""
    block = _block_size(size)
    blocks = (size + block - 1) // block
    j = reduce_axis((0, block), name="j")

    def block_sum(b):
        f = b * block + j
        return _te_sum(flags[_op.minimum(f, size - 1)], axis=j, where=f < size)

    sums = compute((blocks,), block_sum, name="T_block_count", tag=_tag.COMM_REDUCE)
    c = reduce_axis((0, blocks), name="c")
    before = compute((blocks,), lambda b: _te_sum(sums[c], axis=c, where=c < b), name="T_block_prefix",
                     tag=_tag.COMM_REDUCE)
    k = reduce_axis((0, block), name="k")

    def in_block(f):
        start = (f // block) * block
        return _te_sum(flags[_op.minimum(start + k, size - 1)], axis=k, where=start + k <= f)

    inside = compute((size,), in_block, name="T_block_running_count", tag=_tag.COMM_REDUCE)
    return compute((size,), lambda f: before[f // block] + inside[f], name="T_running_count", tag=_tag.INJECTIVE)


def _first_above(incl, size, count):
    """For each ``p < count``: the first ``f`` with ``incl[f] > p`` (``incl`` non-decreasing), by a binary search
    whose steps are stages of their own (a load whose index is a let-bound value would defeat bound inference)."""
    step = 1
    limit = size if isinstance(size, int) else 1 << 30
    while step < limit:
        step *= 2
    last = _op.const(size - 1, "int32") if isinstance(size, int) else size - 1
    pos = compute((count,), lambda p: _op.const(0, "int32"), name="T_search0", tag=_tag.INJECTIVE)
    while step >= 1:
        pos = compute((count,), _advance(incl, pos, step, size, last), name=f"T_search{step}", tag=SEARCH_TAG)
        step //= 2
    return pos


def _advance(incl, prev, step, size, last):
    one = reduce_axis((0, 1), name="once")

    def fcompute(p):
        ahead = prev[p] + step
        fits = _op.logical_and(ahead <= size, incl[_op.minimum(ahead - 1, last)] <= p)
        return _te_sum(E.Select(fits, ahead, prev[p]), axis=one)

    return fcompute


def argwhere(data, count, dtype="int32"):
    """The indices of the non-zero elements of ``data``: a ``(count, ndim)`` tensor of ``dtype``, rows in row-major
    order; ``count`` is the number of non-zeros (a size variable bound from the output buffer)."""
    shape = get_const_tuple(data.shape)
    flags, size = _flat_nonzero(data)
    incl = _running_count(flags, size)
    element = _first_above(incl, size, count)

    def fcompute(p, d):
        coords = unravel_index(element[p], shape)
        value = coords[-1]
        for axis in range(len(shape) - 2, -1, -1):
            value = E.Select(d == axis, coords[axis], value)
        return _op.cast(value, dtype)

    return compute((count, len(shape)), fcompute, name="T_argwhere", tag=_tag.INJECTIVE)
