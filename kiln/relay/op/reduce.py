"""Reductions: ``sum mean max min prod all any variance`` and ``argmax argmin`` (axis, keepdims, exclude as in TVM);
``std mean_variance mean_std logsumexp`` are made of them, as in TVM.

``sum`` and ``prod`` over bool are ``any`` and ``all`` (bool arithmetic saturates: :mod:`kiln.tir.dtype_semantics`);
``all`` and ``any`` take bool tensors, as in TVM.
"""

from ...error import TypeInferenceError
from ...ir.type import TensorType
from ..expr import Tuple, TupleWrapper
from . import attrs as A
from .attrs_array import VarianceAttrs
from .op import OpPattern, make_call, register_relay_op
from .tensor import add, exp, log, sqrt, squeeze, subtract
from .type_relations import (
    ALL,
    BOOL,
    FLOAT,
    NUMERIC,
    arg_reduce_rel,
    reduce_axes,
    reduce_rel,
    reduce_shape,
    shapes_match,
    tensor_arg,
)

_REDUCE = {"sum": ALL, "mean": NUMERIC, "max": ALL, "min": ALL, "prod": ALL, "all": BOOL, "any": BOOL}
_ARG_REDUCE = ["argmax", "argmin"]
for _name, _dtypes in _REDUCE.items():
    register_relay_op(_name, 1, reduce_rel, OpPattern.COMM_REDUCE, A.ReduceAttrs, dtypes=_dtypes)
for _name in _ARG_REDUCE:
    register_relay_op(_name, 1, arg_reduce_rel, OpPattern.COMM_REDUCE, A.ArgReduceAttrs, dtypes=ALL)


def _axis_tuple(axis):
    if axis is None:
        return None
    return (int(axis),) if isinstance(axis, int) else tuple(int(a) for a in axis)


def _reduce(name):
    def build(data, axis=None, keepdims=False, exclude=False):
        return make_call(name, [data], A.ReduceAttrs(_axis_tuple(axis), keepdims, exclude))

    build.__name__ = name
    build.__doc__ = (
        f"``{name}`` over ``axis`` (all axes when None; every other axis when ``exclude``), keeping reduced axes as "
        f"size 1 when ``keepdims``."
    )
    return build


def _arg_reduce(name):
    def build(data, axis=None, keepdims=False, exclude=False, select_last_index=False):
        return make_call(name, [data], A.ArgReduceAttrs(_axis_tuple(axis), keepdims, select_last_index, exclude))

    build.__name__ = name
    build.__doc__ = f"The int32 index of the ``{name[3:]}`` element along ``axis``."
    return build


sum, mean, max, min, prod, all, any = map(_reduce, _REDUCE)  # noqa: A001
argmax, argmin = map(_arg_reduce, _ARG_REDUCE)


# ------------------------------------------------------------------ variance and the reductions TVM composes of ops
def _variance_rel(types, attrs):
    data, mean_t = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "mean")
    axes = reduce_axes(data.ndim, attrs.axis, attrs.exclude)
    want = tuple(1 if a in axes else d for a, d in enumerate(data.shape))
    if not shapes_match(mean_t.shape, want) or mean_t.dtype != data.dtype:
        raise TypeInferenceError(f"variance: mean {mean_t} must be Tensor[{want}, {data.dtype}] (data {data} reduced "
                                 f"with keepdims)")
    return TensorType(reduce_shape(data.shape, attrs), data.dtype)


register_relay_op("variance", 2, _variance_rel, OpPattern.COMM_REDUCE, VarianceAttrs, dtypes=FLOAT)


def _variance(data, mean_, axis, keepdims, exclude, unbiased):
    return make_call("variance", [data, mean_], VarianceAttrs(_axis_tuple(axis), keepdims, exclude, unbiased))


def variance(data, axis=None, keepdims=False, exclude=False, unbiased=False, with_mean=None):
    """The variance over ``axis`` (divided by ``n - 1`` when ``unbiased``); ``with_mean`` gives the mean if it is
    already known."""
    m = mean(data, axis, True, exclude) if with_mean is None else with_mean
    return _variance(data, m, axis, keepdims, exclude, unbiased)


def std(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """The standard deviation over ``axis``: ``sqrt(variance)``."""
    return sqrt(variance(data, axis, keepdims, exclude, unbiased))


def mean_variance(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """``(mean, variance)`` over ``axis``."""
    m = mean(data, axis, True, exclude)
    var = _variance(data, m, axis, keepdims, exclude, unbiased)
    return TupleWrapper(Tuple((m if keepdims else squeeze_keepdims(m, data, axis, exclude), var)), 2)


def mean_std(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """``(mean, standard deviation)`` over ``axis``."""
    m, var = mean_variance(data, axis, keepdims, exclude, unbiased).tuple_value.fields
    return TupleWrapper(Tuple((m, sqrt(var))), 2)


def squeeze_keepdims(m, data, axis, exclude):
    """``m`` (reduced with keepdims) without its reduced axes."""
    return mean(m, axis, False, exclude)


def logsumexp(data, axis=None, keepdims=False):
    """``log(sum(exp(data)))`` over ``axis``, computed stably as TVM does: the maximum is subtracted first."""
    max_x = max(data, axis, True)
    out = add(log(sum(exp(subtract(data, max_x)), axis, True)), max_x)
    return out if keepdims else squeeze(out, None if axis is None else list(_axis_tuple(axis)))


COMPOSITES = ["variance", "std", "mean_variance", "mean_std", "logsumexp"]
"""Builders of this module made of other operators (exported beside the operator builders)."""
