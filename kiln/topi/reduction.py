"""Reductions (TVM's ``topi/reduction.py``): ``sum mean max min prod all any argmax argmin``.

The reduced axes come from ``axis`` (all when None) and ``exclude`` (reduce every other axis), as Relay defines
them; ``keepdims`` keeps them as size 1. The reduction is one ``te.compute`` with one ``te.reduce_axis`` per
reduced axis, tagged ``comm_reduce``. Semantics follow the numpy reference: sums and products accumulate in the
data's dtype (float16 in float32, then cast back in an ``elemwise`` stage); integer ``mean`` truncates; ``max`` and
``min`` start from the dtype's lowest/highest finite value.

``argmax``/``argmin`` reduce ``(index, value)`` pairs with a tuple ``comm_reducer`` (tag ``comm_reduce_idx``); the
index is the row-major index over the reduced axes. The combiner breaks ties toward the smaller index (the larger
with ``select_last_index``), which makes it commutative, so any loop order gives numpy's answer; the identity's
index is the one that loses every tie.
"""

from ..te.operation import comm_reducer, compute, reduce_axis
from ..te.operation import max as _te_max
from ..te.operation import min as _te_min
from ..te.operation import sum as _te_sum
from ..tir import dtype as _dt
from ..tir import op as _op
from . import tag as _tag
from .utils import get_const_tuple, normalize_axis, prod, ravel_index

__all__ = ["reduce_axes", "sum", "mean", "max", "min", "prod_reduce", "all", "any", "argmax", "argmin", "reduce"]


def reduce_axes(ndim, axis=None, exclude=False) -> list:
    """The sorted axes a reduction over ``axis`` (an int, a sequence or None) with ``exclude`` reduces: all of them
    when ``axis`` is None or empty, whatever ``exclude`` says (as Relay's relation)."""
    if axis is None or (not isinstance(axis, int) and len(axis) == 0):
        return list(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    axes = sorted({normalize_axis(a, ndim, "reduction axis") for a in axis})
    return [k for k in range(ndim) if k not in axes] if exclude else axes


def _out_shape(shape, axes, keepdims):
    if keepdims:
        return [1 if k in axes else d for k, d in enumerate(shape)]
    return [d for k, d in enumerate(shape) if k not in axes]


def _source_indices(ndim, axes, keepdims, out_idx, rvars):
    """The data index of output index ``out_idx`` and reduction variables ``rvars`` (one per reduced axis)."""
    idx, pos, r = [], 0, 0
    for k in range(ndim):
        if k in axes:
            idx.append(rvars[r])
            r += 1
            if keepdims:
                pos += 1
        else:
            idx.append(out_idx[pos])
            pos += 1
    return idx


def reduce(data, reducer, axis=None, keepdims=False, exclude=False, name="T_reduce", fvalue=None):
    """A reduction of ``data`` with ``reducer`` (``te.sum``, ``te.max`` or a ``te.comm_reducer``).

    Parameters
    ----------
    data : te.Tensor
    reducer : callable
        ``reducer(expr, axis=[...])`` building the Reduce.
    axis, keepdims, exclude :
        As Relay's ReduceAttrs.
    fvalue : callable, optional
        Maps each element before reducing (a cast, for instance).

    Returns
    -------
    out : te.Tensor
    """
    shape = get_const_tuple(data.shape)
    axes = reduce_axes(len(shape), axis, exclude)
    out_shape = _out_shape(shape, axes, keepdims)

    def fcompute(*i):
        rvars = [reduce_axis((0, shape[k]), name=f"k{k}") for k in axes]
        value = data(*_source_indices(len(shape), axes, keepdims, i, [r.var for r in rvars]))
        if fvalue is not None:
            value = fvalue(value)
        if not rvars:
            return value
        return reducer(value, axis=rvars)

    tag = _tag.COMM_REDUCE if axes else _tag.ELEMWISE
    return compute(out_shape, fcompute, name=name, tag=tag)


def _accumulating(data, reducer, axis, keepdims, exclude, name):
    """Reduce in float32 for float16 data, casting back in an element-wise stage."""
    if data.dtype != "float16":
        return reduce(data, reducer, axis, keepdims, exclude, name)
    wide = reduce(data, reducer, axis, keepdims, exclude, name, fvalue=lambda v: _op.cast(v, "float32"))
    return compute(wide.shape, lambda *i: _op.cast(wide(*i), "float16"), name=f"{name}_cast", tag=_tag.ELEMWISE)


_te_prod = comm_reducer(_op.multiply, lambda t: _op.const(1, t), name="prod")
_te_all = comm_reducer(_op.logical_and, lambda t: _op.const(True, t), name="all")
_te_any = comm_reducer(_op.logical_or, lambda t: _op.const(False, t), name="any")


def sum(data, axis=None, keepdims=False, exclude=False):  # noqa: A001  (TVM's name)
    """Sum over ``axis`` (all axes when None)."""
    return _accumulating(data, _te_sum, axis, keepdims, exclude, "T_sum")


def prod_reduce(data, axis=None, keepdims=False, exclude=False):
    """Product over ``axis`` (TVM's ``topi.prod``)."""
    return _accumulating(data, _te_prod, axis, keepdims, exclude, "T_prod")


def max(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    """Maximum over ``axis``."""
    return reduce(data, _te_max, axis, keepdims, exclude, "T_max")


def min(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    """Minimum over ``axis``."""
    return reduce(data, _te_min, axis, keepdims, exclude, "T_min")


def all(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    """Logical and over ``axis``."""
    return reduce(data, _te_all, axis, keepdims, exclude, "T_all", fvalue=_truth)


def any(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    """Logical or over ``axis``."""
    return reduce(data, _te_any, axis, keepdims, exclude, "T_any", fvalue=_truth)


def _truth(v):
    return v if _dt.is_bool(v.dtype) else _op.not_equal(v, _op.const(0, v.dtype))


def mean(data, axis=None, keepdims=False, exclude=False):
    """Mean over ``axis`` (the sum divided by the count; truncating for integers)."""
    shape = get_const_tuple(data.shape)
    axes = reduce_axes(len(shape), axis, exclude)
    count = prod(shape[k] for k in axes) if axes else 1
    float_data = _dt.is_float(data.dtype)
    acc = "float32" if data.dtype == "float16" else data.dtype
    total = reduce(data, _te_sum, axis, keepdims, exclude, "T_mean_sum",
                   fvalue=(lambda v: _op.cast(v, acc)) if acc != data.dtype else None)

    if isinstance(count, int):
        divisor = _op.const(float(count), acc) if float_data else _op.const(max_(count, 1), data.dtype)
    else:  # a count known only at run time
        divisor = _op.cast(_op.maximum(count, 1), acc if float_data else data.dtype)

    def divide(*i):
        if float_data:
            return _op.cast(_op.div(total(*i), divisor), data.dtype)
        return _op.truncdiv(total(*i), divisor)

    return compute(total.shape, divide, name="T_mean", tag=_tag.ELEMWISE)


def max_(a, b):
    """The larger of two Python numbers (``max`` is the reduction here)."""
    return a if a >= b else b


def _arg_reduce(data, axis, keepdims, exclude, select_last_index, is_max, name):
    shape = get_const_tuple(data.shape)
    axes = reduce_axes(len(shape), axis, exclude)
    out_shape = _out_shape(shape, axes, keepdims)
    better = _op.greater if is_max else _op.less
    tie_wins = _op.greater if select_last_index else _op.less

    def fcombine(x, y):
        # y replaces x when its value is better, or equal with an index that wins ties
        take_y = _op.logical_or(better(y[1], x[1]), _op.logical_and(_op.equal(y[1], x[1]), tie_wins(y[0], x[0])))
        return _op.select(take_y, y[0], x[0]), _op.select(take_y, y[1], x[1])

    def fidentity(idx_t, val_t):
        worst = _op.min_value(val_t) if is_max else _op.max_value(val_t)
        idx = _op.const(-1, idx_t) if select_last_index else _op.max_value(idx_t)
        return idx, worst

    reducer = comm_reducer(fcombine, fidentity, name="argmax" if is_max else "argmin")

    def fcompute(*i):
        rvars = [reduce_axis((0, shape[k]), name=f"k{k}") for k in axes]
        src = _source_indices(len(shape), axes, keepdims, i, [r.var for r in rvars])
        flat = ravel_index([r.var for r in rvars], [shape[k] for k in axes])
        return reducer([_op.cast(flat, "int32"), data(*src)], axis=rvars)

    if not axes:
        return compute(out_shape, lambda *i: _op.const(0, "int32"), name=name, tag=_tag.ELEMWISE)
    idx, _ = compute(out_shape, fcompute, name=f"{name}_red", tag=_tag.COMM_REDUCE_IDX)
    return idx


def argmax(data, axis=None, keepdims=False, select_last_index=False, exclude=False):
    """The int32 index of the maximum over ``axis`` (row-major over several axes; first on ties unless
    ``select_last_index``)."""
    return _arg_reduce(data, axis, keepdims, exclude, select_last_index, True, "T_argmax")


def argmin(data, axis=None, keepdims=False, select_last_index=False, exclude=False):
    """The int32 index of the minimum over ``axis``."""
    return _arg_reduce(data, axis, keepdims, exclude, select_last_index, False, "T_argmin")
