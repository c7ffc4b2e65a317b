"""Scatters (TVM's ``topi.scatter_elements``, ``scatter_nd``) as pure functions of the output index.

A scatter writes updates into a copy of ``data``. Written functionally, output element ``p`` is ``data[p]``
combined with every update whose target is ``p``, which is a reduction over the update positions with a match
condition:

* ``scatter_elements`` along ``axis``: the updates at ``u = p`` with ``u[axis] = k`` for every ``k`` (the other
  coordinates must equal ``p``'s, and exist in ``indices``) target ``p`` when ``indices[u] == p[axis]``;
* ``scatter_nd``: the update slice ``y`` (over ``indices.shape[1:]``) targets ``p`` when ``indices[:, y] ==
  p[:M]``; its element is ``updates[y, p[M:]]``.

``add``/``mul``/``min``/``max`` reduce the matching updates with that operation and combine the result with
``data[p]``; ``mean`` (scatter_elements) averages ``data[p]`` with the matching updates in float64. ``update``
keeps the last matching update in row-major order (as numpy's assignment does): a first reduction finds its
position (``max`` of the matching positions, -1 when none), then the output reads it or ``data[p]``.
Negative indices are taken modulo the axis size, as the ONNX operators define them.
"""

from ..te.operation import comm_reducer, compute, reduce_axis
from ..te.operation import max as _te_max
from ..te.operation import min as _te_min
from ..te.operation import sum as _te_sum
from ..tir import op as _op
from . import tag as _tag
from .utils import get_const_tuple, normalize_axis, ravel_index, unravel_index

__all__ = ["scatter_elements", "scatter_nd"]

_te_prod = comm_reducer(_op.multiply, lambda t: _op.const(1, t), name="prod")
_te_sum_pair = comm_reducer(lambda x, y: (_op.add(x[0], y[0]), _op.add(x[1], y[1])),
                            lambda t0, t1: (_op.const(0, t0), _op.const(0, t1)), name="sum_pair")
_COMBINE = {"add": (_te_sum, _op.add, lambda t: _op.const(0, t)),
            "mul": (_te_prod, _op.multiply, lambda t: _op.const(1, t)),
            "min": (_te_min, _op.minimum, _op.max_value),
            "max": (_te_max, _op.maximum, _op.min_value)}


def _wrapped(index, size):
    """``index`` (an integer expression, possibly negative) as a position in ``[0, size)``, as int32."""
    index = _op.cast(index, "int32")
    return _op.select(index < 0, index + size, index)


def _scatter(data, updates, rvars, fmatch, fupdate_at, mode, name):
    """The common form: ``rvars`` range over update positions, ``fmatch(p, r)`` says whether update ``r`` targets
    output ``p``, ``fupdate_at(p, r)`` reads it."""
    shape = get_const_tuple(data.shape)
    if mode == "update":
        extents = [getattr(r.dom.extent, "value", r.dom.extent) for r in rvars]  # ints, or sizes known at run time
        def last(*p):
            flat = ravel_index([r.var for r in rvars], extents)
            return _te_max(_op.select(fmatch(p, [r.var for r in rvars]), flat, _op.const(-1, "int32")), axis=rvars)

        where = compute(shape, last, name=f"{name}_last", tag=_tag.COMM_REDUCE)

        def pick(*p):
            found = where(*p)
            position = unravel_index(_op.maximum(found, _op.const(0, "int32")), extents)
            return _op.select(found >= 0, fupdate_at(p, position), data(*p))

        return compute(shape, pick, name=name, tag=_tag.INJECTIVE)
    if mode == "mean":
        def total(*p):
            match = fmatch(p, [r.var for r in rvars])
            value = _op.cast(fupdate_at(p, [r.var for r in rvars]), "float64")
            zero, one = _op.const(0, "float64"), _op.const(1, "float64")
            return _te_sum_pair([_op.select(match, value, zero), _op.select(match, one, zero)], axis=rvars)

        sums = compute(shape, total, name=f"{name}_sum", tag=_tag.COMM_REDUCE)

        def average(*p):
            mean = (sums[0](*p) + _op.cast(data(*p), "float64")) / (sums[1](*p) + _op.const(1, "float64"))
            return _op.cast(mean, data.dtype)

        return compute(shape, average, name=name, tag=_tag.INJECTIVE)
    reducer, combine, identity = _COMBINE[mode]

    def fold(*p):
        match = fmatch(p, [r.var for r in rvars])
        return reducer(_op.select(match, fupdate_at(p, [r.var for r in rvars]), identity(data.dtype)), axis=rvars)

    folded = compute(shape, fold, name=f"{name}_{mode}", tag=_tag.COMM_REDUCE)
    return compute(shape, lambda *p: combine(data(*p), folded(*p)), name=name, tag=_tag.INJECTIVE)


def _maybe_shorter(index_dim, data_dim) -> bool:
    """Whether an indices dimension may be shorter than the data's: decided for sizes known now, assumed (and
    guarded at run time) when either is a size variable, unless both are the same one."""
    if isinstance(index_dim, int) and isinstance(data_dim, int):
        return index_dim < data_dim
    return index_dim is not data_dim


def scatter_elements(data, indices, updates, axis=0, reduction="update"):
    """A copy of ``data`` with ``updates`` written (or reduced by ``reduction``) at ``indices`` along ``axis``.

    Returns
    -------
    out : te.Tensor
    """
    dshape, ishape = get_const_tuple(data.shape), get_const_tuple(indices.shape)
    axis = normalize_axis(axis, len(dshape), "scatter_elements axis")
    k = reduce_axis((0, ishape[axis]), name="k")

    def source(p, r):
        return p[:axis] + (r[0],) + p[axis + 1:]

    # the off-axis dimensions where the indices may be shorter than the data (unknown until run time: maybe)
    shorter = [d != axis and _maybe_shorter(ishape[d], dshape[d]) for d in range(len(dshape))]

    def fmatch(p, r):
        conds = [_op.equal(_wrapped(indices(*source(p, r)), dshape[axis]), p[axis])]
        conds += [p[d] < ishape[d] for d in range(len(dshape)) if shorter[d]]
        return _op.all(*conds) if len(conds) > 1 else conds[0]

    def fupdate_at(p, r):
        # off-axis coordinates past the indices' extent never match; clamp them so the read stays in bounds
        src = source(p, r)
        return updates(*[_op.minimum(x, ishape[d] - 1) if shorter[d] else x for d, x in enumerate(src)])

    return _scatter(data, updates, [k], fmatch, fupdate_at, reduction, "T_scatter_elements")


def scatter_nd(data, indices, updates, mode="update"):
    """A copy of ``data`` with the slices at the index tuples (first axis of ``indices``) replaced by ``updates``
    (or combined by ``mode``).

    Returns
    -------
    out : te.Tensor
    """
    dshape, ishape = get_const_tuple(data.shape), get_const_tuple(indices.shape)
    m = ishape[0]
    rvars = [reduce_axis((0, d), name=f"y{j}") for j, d in enumerate(ishape[1:])]

    def fmatch(p, y):
        conds = [_op.equal(_wrapped(indices(j, *y), dshape[j]), p[j]) for j in range(m)]
        return _op.all(*conds) if len(conds) > 1 else conds[0]

    def fupdate_at(p, y):
        return updates(*y, *p[m:])

    if not rvars:  # a single index tuple: indices of shape (M,)
        rvars = [reduce_axis((0, 1), name="y")]
        return _scatter(data, updates, rvars, lambda p, y: fmatch(p, []),
                        lambda p, y: updates(*p[m:]), mode, "T_scatter_nd")
    return _scatter(data, updates, rvars, fmatch, fupdate_at, mode, "T_scatter_nd")
