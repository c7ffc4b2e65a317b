"""``topk`` and ``argsort`` by ranking (TVM's ``topi.sort``), as reductions instead of a sort.

The rank of element ``i`` along the axis is the number of elements that come before it in the order: those that
compare better (greater for descending, less for ascending), or equal at a lower index -- so equal elements keep
their index order and the ranks are a permutation. The index at output position ``p`` is then the one element whose
rank is ``p`` (a sum of ``select(rank == p, i, 0)``), and the value is gathered at that index. Quadratic work along
the axis, but every stage is a plain reduction or gather that any schedule handles.
"""

from ..error import OpNotImplemented
from ..te.operation import compute, reduce_axis
from ..te.operation import sum as _te_sum
from ..tir import expr as E
from ..tir import op as _op
from . import tag as _tag
from .utils import SHAPE_CHECKS, get_const_tuple, normalize_axis

__all__ = ["argsort", "topk", "unique"]


def _ranks(data, axis, is_ascend):
    shape = get_const_tuple(data.shape)
    j = reduce_axis((0, shape[axis]), name="j")
    better = _op.less if is_ascend else _op.greater

    def fcompute(*i):
        other = data(*(i[:axis] + (j,) + i[axis + 1:]))
        mine = data(*i)
        before = _op.logical_or(better(other, mine), _op.logical_and(_op.equal(other, mine), _op.less(j, i[axis])))
        return _te_sum(_op.select(before, _op.const(1, "int32"), _op.const(0, "int32")), axis=j)

    return compute(shape, fcompute, name="T_rank", tag=_tag.COMM_REDUCE)


def _positions(data, axis, k, is_ascend, dtype, checks=()):
    shape = get_const_tuple(data.shape)
    rank = _ranks(data, axis, is_ascend)
    out_shape = shape[:axis] + (k,) + shape[axis + 1:]
    r = reduce_axis((0, shape[axis]), name="r")

    def fcompute(*p):
        hit = _op.equal(rank(*(p[:axis] + (r,) + p[axis + 1:])), p[axis])
        return _te_sum(_op.select(hit, _op.cast(r, dtype), _op.const(0, dtype)), axis=r)

    return compute(out_shape, fcompute, name="T_argsort", tag=_tag.COMM_REDUCE,
                   attrs={SHAPE_CHECKS: tuple(checks)} if checks else None)


def argsort(data, valid_count=None, axis=-1, is_ascend=True, dtype="float32"):
    """The indices that sort ``data`` along ``axis`` (stable; TVM's signature, ``valid_count`` unsupported)."""
    if valid_count is not None:
        raise OpNotImplemented("topi.argsort: valid_count is not supported")
    axis = normalize_axis(axis, len(data.shape), "argsort axis")
    return _positions(data, axis, get_const_tuple(data.shape)[axis], is_ascend, dtype)


def topk(data, k=1, axis=-1, ret_type="both", is_ascend=False, dtype="int32"):
    """The ``k`` largest (smallest when ``is_ascend``) elements along ``axis`` and their indices (``k < 1``: all; a
    size variable: as many as the output buffer holds, which ``dyn.topk``'s shape function made ``min(k, size)``).

    Returns
    -------
    out : list of te.Tensor or te.Tensor
        ``[values, indices]`` for ``ret_type="both"``, else the one tensor asked for (as TVM returns them).
    """
    shape = get_const_tuple(data.shape)
    axis = normalize_axis(axis, len(shape), "topk axis")
    checks = []
    if not isinstance(k, E.PrimExpr):  # a size variable: dyn.topk's shape function sized the result
        if k >= 1 and not isinstance(shape[axis], int):  # k of a size known at run time: k, if it fits
            checks.append((_op.less_equal(_op.const(int(k), "int32"), shape[axis]),
                           f"topi.topk: k = {int(k)} is larger than the size of axis {axis}"))
            k = int(k)
        else:
            k = shape[axis] if k < 1 else min(int(k), shape[axis])
    indices = _positions(data, axis, k, is_ascend, dtype, checks)
    if ret_type == "indices":
        return indices
    values = compute(indices.shape, lambda *p: data(*(p[:axis] + (_op.cast(indices(*p), "int32"),) + p[axis + 1:])),
                     name="T_topk_values", tag=_tag.INJECTIVE)
    return [values, indices] if ret_type == "both" else values


def unique(data, is_sorted=True, return_counts=False):
    """The distinct elements of 1-D ``data`` by counting, as the sorts are: ``[unique, indices, inverse_indices,
    num_unique(, counts)]`` (see :func:`kiln.relay.op.algorithm.unique`).

    Element ``i`` is a first occurrence when no earlier element equals it. Its group's position among the distinct
    values is the number of first occurrences with a smaller value (``is_sorted``) or an earlier first occurrence
    than its own; output position ``p`` then gathers (sums over the single match) the first occurrence at ``p``.
    The length may be a size known only at run time."""
    n = data.shape[0]
    i32 = "int32"
    zero, one = _op.const(0, i32), _op.const(1, i32)

    def reduce_over(fvalue, name):
        def fcompute(i):
            j = reduce_axis((0, n), name="j")
            return _te_sum(fvalue(i, j.var), axis=[j])

        return compute((n,), fcompute, name=name, tag=_tag.COMM_REDUCE)

    def count(condition):
        return lambda i, j: _op.select(condition(i, j), one, zero)

    earlier_equal = reduce_over(count(lambda i, j: _op.all(_op.less(j, i), _op.equal(data(j), data(i)))),
                                "T_unique_earlier")

    def is_first(j):
        return _op.equal(earlier_equal(j), zero)

    if is_sorted:
        before = count(lambda i, j: _op.all(is_first(j), _op.less(data(j), data(i))))
    else:  # the first occurrence of i's value is the one equal element with no earlier equal one
        first_of = reduce_over(lambda i, j: _op.select(_op.all(is_first(j), _op.equal(data(j), data(i))),
                                                       _op.cast(j, i32), zero), "T_unique_first_of")
        before = count(lambda i, j: _op.all(is_first(j), _op.less(j, first_of(i))))
    group = reduce_over(before, "T_unique_inverse")

    def at_position(fvalue, dtype, name):
        return reduce_over(lambda p, j: _op.select(_op.all(is_first(j), _op.equal(group(j), p)), fvalue(j),
                                                   _op.const(0, dtype)), name)

    values = at_position(data, data.dtype, "T_unique_values")
    indices = at_position(lambda j: _op.cast(j, i32), i32, "T_unique_indices")

    def num_unique(_):
        j = reduce_axis((0, n), name="j")
        return _te_sum(_op.select(is_first(j.var), one, zero), axis=[j])

    outputs = [values, indices, group, compute((1,), num_unique, name="T_unique_num", tag=_tag.COMM_REDUCE)]
    if return_counts:
        outputs.append(reduce_over(count(lambda p, j: _op.equal(group(j), p)), "T_unique_counts"))
    return outputs
