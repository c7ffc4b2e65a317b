"""Sorting-based operators (TVM's ``relay/op/algorithm.py``): ``topk``.

``topk`` returns ``(values, indices)`` of the ``k`` largest (or smallest, ``is_ascend``) elements along ``axis``,
or one of them (``ret_type``); ``k < 1`` means every element, as in TVM.
"""

from ...ir.type import TensorType, TupleType
from ..expr import TupleWrapper
from . import attrs as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import normalize_axis, tensor_arg


def _topk_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    axis = normalize_axis(attrs.axis, data.ndim, "topk axis")
    shape = list(data.shape)
    if attrs.k >= 1:
        shape[axis] = min(attrs.k, shape[axis])
    values, indices = TensorType(tuple(shape), data.dtype), TensorType(tuple(shape), attrs.dtype)
    if attrs.ret_type == "both":
        return TupleType([values, indices])
    return values if attrs.ret_type == "values" else indices


register_relay_op("topk", 1, _topk_rel, OpPattern.OPAQUE, A.TopKAttrs)


def topk(data, k=1, axis=-1, ret_type="both", is_ascend=False, dtype="int32"):
    """The ``k`` largest elements along ``axis`` (smallest when ``is_ascend``) and their indices; ties keep the
    lower index first. With ``ret_type="both"`` index the result (``[0]`` values, ``[1]`` indices)."""
    call = make_call("topk", [data], A.TopKAttrs(int(k), int(axis), ret_type, is_ascend, dtype))
    return TupleWrapper(call, 2) if ret_type == "both" else call
