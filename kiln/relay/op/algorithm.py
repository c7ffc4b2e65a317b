"""Sorting-based operators (TVM's ``relay/op/algorithm.py``): ``topk``, ``argsort``, ``sort`` and ``unique``.

``topk`` returns ``(values, indices)`` of the ``k`` largest (or smallest, ``is_ascend``) elements along ``axis``,
or one of them (``ret_type``); ``k < 1`` means every element, as in TVM. ``argsort`` gives the indices that sort
``data`` along ``axis``. Both are stable: equal elements keep their index order, in either direction. The order of
NaNs is left undefined.
"""

from ...error import TypeInferenceError
from ...ir.type import TensorType, TupleType
from ..expr import TupleWrapper
from . import attrs as A
from .dispatch import constant_value, dyn_ops, is_dynamic
from .op import OpPattern, make_call, register_relay_op
from .type_relations import ALL, INTEGER, NUMERIC, check_dtype, normalize_axis, tensor_arg


def _topk_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    if attrs.ret_type != "values":  # the index dtype matters only where indices are returned (TVM checks none)
        check_dtype(attrs.dtype, NUMERIC, "the output", "topk")  # float indices too, as TVM's tests ask
    axis = normalize_axis(attrs.axis, data.ndim, "topk axis")
    shape = list(data.shape)
    if attrs.k >= 1:
        # k over a dimension known only at run time is k, as in TVM (the kernel checks that it fits)
        shape[axis] = min(attrs.k, shape[axis]) if isinstance(shape[axis], int) else attrs.k
    values, indices = TensorType(tuple(shape), data.dtype), TensorType(tuple(shape), attrs.dtype)
    if attrs.ret_type == "both":
        return TupleType([values, indices])
    return values if attrs.ret_type == "values" else indices


register_relay_op("topk", 1, _topk_rel, OpPattern.OPAQUE, A.TopKAttrs, dtypes=ALL)


def topk(data, k=1, axis=-1, ret_type="both", is_ascend=False, dtype="int32"):
    """The ``k`` largest elements along ``axis`` (smallest when ``is_ascend``) and their indices; ties keep the
    lower index first. With ``ret_type="both"`` index the result (``[0]`` values, ``[1]`` indices). ``k`` a
    non-constant Relay expression makes ``dyn.topk``."""
    if is_dynamic(k):
        return dyn_ops().topk(data, k, axis, ret_type, is_ascend, dtype)
    k = constant_value(k)
    call = make_call("topk", [data], A.TopKAttrs(int(k), int(axis), ret_type, is_ascend, dtype))
    return TupleWrapper(call, 2) if ret_type == "both" else call


def _argsort_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    normalize_axis(attrs.axis, data.ndim, "argsort axis")
    check_dtype(attrs.dtype, INTEGER, "the output", "argsort")
    return TensorType(data.shape, attrs.dtype)


register_relay_op("argsort", 1, _argsort_rel, OpPattern.OPAQUE, A.ArgsortAttrs, dtypes=ALL)


def argsort(data, axis=-1, is_ascend=1, dtype="int32"):
    """The indices that sort ``data`` along ``axis`` (ascending unless ``is_ascend`` is false; equal elements keep
    their index order)."""
    return make_call("argsort", [data], A.ArgsortAttrs(int(axis), bool(is_ascend), dtype))


def _sort_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    normalize_axis(attrs.axis, data.ndim, "sort axis")
    return data


register_relay_op("sort", 1, _sort_rel, OpPattern.OPAQUE, A.ArgsortAttrs, dtypes=ALL)


def sort(data, axis=-1, is_ascend=1):
    """``data`` sorted along ``axis`` (ascending unless ``is_ascend`` is false)."""
    return make_call("sort", [data], A.ArgsortAttrs(int(axis), bool(is_ascend), "int32"))


def _unique_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    if data.ndim != 1:
        raise TypeInferenceError(f"unique: data {data} must be 1-D")
    n = data.shape
    fields = [TensorType(n, data.dtype), TensorType(n, "int32"), TensorType(n, "int32"), TensorType((1,), "int32")]
    return TupleType(fields + [TensorType(n, "int32")] * attrs.return_counts)


register_relay_op("unique", 1, _unique_rel, OpPattern.OPAQUE, A.UniqueAttrs, dtypes=NUMERIC)


def unique(data, is_sorted=True, return_counts=False):
    """The distinct elements of a 1-D tensor: ``(unique, indices, inverse_indices, num_unique[, counts])``.

    ``unique`` holds the distinct values (ascending when ``is_sorted``, else in order of first occurrence),
    ``indices`` where each first occurs in ``data``, ``inverse_indices`` the position in ``unique`` of each element
    of ``data``, ``num_unique`` (one element) how many there are, and ``counts`` how often each occurs. ``unique``,
    ``indices`` and ``counts`` have ``data``'s length: past ``num_unique`` their values are unspecified (TVM's
    contract; kiln writes zeros)."""
    call = make_call("unique", [data], A.UniqueAttrs(is_sorted, return_counts))
    return TupleWrapper(call, 5 if return_counts else 4)
