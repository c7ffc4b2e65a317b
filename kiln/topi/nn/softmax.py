"""Softmax and log-softmax along an axis (TVM's ``topi/nn/softmax.py``).

Four stages, the first three reducing or mapping along ``axis`` (the reduced tensors drop it)::

    max_elem[r] = max_k x[..., k, ...]                       (tag comm_reduce)
    exp[i]      = exp(x[i] - max_elem[r(i)])                 (tag elemwise; log_softmax folds it into the sum)
    expsum[r]   = sum_k exp[..., k, ...]                     (tag comm_reduce)
    out[i]      = exp[i] / expsum[r(i)]                      (tag softmax_output)
                  x[i] - max_elem[r(i)] - log(expsum[r(i)])  (tag log_softmax_output)

Subtracting the maximum first keeps ``exp`` from overflowing, as the numpy reference does.
"""

from ...te.operation import compute, reduce_axis
from ...te.operation import max as _te_max
from ...te.operation import sum as _te_sum
from ...tir import intrin as _intrin
from .. import tag as _tag
from ..utils import get_const_tuple, normalize_axis

__all__ = ["softmax", "log_softmax"]


def _stages(x, axis, log):
    shape = get_const_tuple(x.shape)
    axis = normalize_axis(axis, len(shape), "softmax axis")
    reduced = shape[:axis] + shape[axis + 1:]

    def full(r, k):
        return r[:axis] + (k,) + r[axis:]

    def drop(i):
        return i[:axis] + i[axis + 1:]

    k1 = reduce_axis((0, shape[axis]), name="k")
    max_elem = compute(reduced, lambda *r: _te_max(x(*full(r, k1)), axis=k1), name="T_softmax_maxelem",
                       tag=_tag.COMM_REDUCE)
    k2 = reduce_axis((0, shape[axis]), name="k")
    if log:
        expsum = compute(reduced, lambda *r: _te_sum(_intrin.exp(x(*full(r, k2)) - max_elem(*r)), axis=k2),
                         name="T_softmax_expsum", tag=_tag.COMM_REDUCE)
        return compute(shape, lambda *i: x(*i) - max_elem(*drop(i)) - _intrin.log(expsum(*drop(i))),
                       name="T_log_softmax_norm", tag="log_softmax_output",
                       attrs={"axis": axis})
    exp = compute(shape, lambda *i: _intrin.exp(x(*i) - max_elem(*drop(i))), name="T_softmax_exp",
                  tag=_tag.ELEMWISE)
    expsum = compute(reduced, lambda *r: _te_sum(exp(*full(r, k2)), axis=k2), name="T_softmax_expsum",
                     tag=_tag.COMM_REDUCE)
    return compute(shape, lambda *i: exp(*i) / expsum(*drop(i)), name="T_softmax_norm", tag="softmax_output",
                   attrs={"axis": axis})


def softmax(x, axis=-1):
    """Softmax of ``x`` along ``axis``.

    Returns
    -------
    out : te.Tensor
        Tagged ``softmax_output``.
    """
    return _stages(x, axis, log=False)


def log_softmax(x, axis=-1):
    """Log of the softmax of ``x`` along ``axis``.

    Returns
    -------
    out : te.Tensor
        Tagged ``log_softmax_output``.
    """
    return _stages(x, axis, log=True)
