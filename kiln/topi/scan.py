"""Cumulative sums and products (TVM's ``topi.cumsum``/``cumprod``) as reductions over a prefix.

``out[..., i, ...] = sum_{k <= i} x[..., k, ...]`` (``k < i`` when ``exclusive``, whose first element is the
identity) is one ``te.sum`` over the whole axis restricted by a ``where`` condition: quadratic work along the axis,
but a single compute any reduction schedule handles, with no sequential dependence between outputs. The input is
converted to ``dtype`` first; ``axis=None`` scans the flattened tensor.
"""

from ..te.operation import comm_reducer, compute, reduce_axis
from ..te.operation import sum as _te_sum
from ..tir import op as _op
from . import tag as _tag
from .elemwise import cast_expr
from .transform import reshape
from .utils import get_const_tuple, normalize_axis

__all__ = ["cumsum", "cumprod"]

_te_prod = comm_reducer(_op.multiply, lambda t: _op.const(1, t), name="prod")


def _scan(data, axis, dtype, exclusive, reducer, name):
    dtype = dtype or data.dtype
    if axis is None:
        data = reshape(data, (-1,))
        axis = 0
    shape = get_const_tuple(data.shape)
    axis = normalize_axis(axis, len(shape), f"{name} axis")
    k = reduce_axis((0, shape[axis]), name="k")

    def fcompute(*i):
        src = i[:axis] + (k,) + i[axis + 1:]
        cond = _op.less(k, i[axis]) if exclusive else _op.less_equal(k, i[axis])
        return reducer(cast_expr(data(*src), dtype), axis=k, where=cond)

    return compute(shape, fcompute, name=f"T_{name}", tag=_tag.COMM_REDUCE)


def cumsum(data, axis=None, dtype=None, exclusive=False):
    """Cumulative sum along ``axis`` (the flattened data when None).

    Returns
    -------
    out : te.Tensor
    """
    return _scan(data, axis, dtype, exclusive, _te_sum, "cumsum")


def cumprod(data, axis=None, dtype=None, exclusive=False):
    """Cumulative product along ``axis`` (the flattened data when None).

    Returns
    -------
    out : te.Tensor
    """
    return _scan(data, axis, dtype, exclusive, _te_prod, "cumprod")
