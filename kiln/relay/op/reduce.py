"""Reductions: ``sum mean max min prod all any`` and ``argmax argmin`` (axis, keepdims, exclude as in TVM).

``sum`` and ``prod`` over bool are ``any`` and ``all`` (bool arithmetic saturates: :mod:`kiln.tir.dtype_semantics`);
``all`` and ``any`` take bool tensors, as in TVM.
"""

from . import attrs as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import ALL, BOOL, NUMERIC, arg_reduce_rel, reduce_rel

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
