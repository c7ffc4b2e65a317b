"""``dyn.topk``: :func:`kiln.relay.topk` with ``k`` a scalar integer tensor known at run time. The result keeps
``min(k, size)`` elements along the axis (all of them for ``k < 1``), as the static operator does."""

from dataclasses import dataclass

from ....ir.attrs import Attrs
from ....ir.type import Any, TensorType, TupleType
from ....tir import op as _op
from ....tir.expr import Select
from ...expr import TupleWrapper
from ..algorithm import topk as static_topk
from ..op import OpPattern, make_call, register_op_attr, register_relay_op, register_shape_func
from ..type_relations import ALL, NUMERIC, SIGNED, check_dtype, normalize_axis, tensor_arg
from .common import constant_ints, dim64, entry, scalar_arg, shape_tensor

__all__ = ["DynTopKAttrs", "topk"]


@dataclass(frozen=True, slots=True)
class DynTopKAttrs(Attrs):
    """As :class:`~kiln.relay.op.attrs.TopKAttrs` without ``k``, which is the second argument."""

    axis: int = -1
    ret_type: str = "both"
    is_ascend: bool = False
    dtype: str = "int32"

    def __post_init__(self):
        self._require(self.ret_type in ("both", "values", "indices"), "ret_type", "must be both, values or indices")
        object.__setattr__(self, "is_ascend", bool(self.is_ascend))


def _topk_rel(types, attrs):
    data, k = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "k")
    scalar_arg(k, "dyn.topk", "k")
    if attrs.ret_type != "values":  # as topk's relation: float indices too, as TVM's tests ask
        check_dtype(attrs.dtype, NUMERIC, "the output", "dyn.topk")
    axis = normalize_axis(attrs.axis, data.ndim, "topk axis")
    shape = data.shape[:axis] + (Any(),) + data.shape[axis + 1:]
    values, indices = TensorType(shape, data.dtype), TensorType(shape, attrs.dtype)
    if attrs.ret_type == "both":
        return TupleType([values, indices])
    return values if attrs.ret_type == "values" else indices


register_relay_op("dyn.topk", 2, _topk_rel, OpPattern.OPAQUE, DynTopKAttrs, dtypes=(ALL, SIGNED))


@register_shape_func("dyn.topk", True)
def _topk_shape_func(attrs, inputs, out_types):
    """The data's shape with ``min(k, size)`` along the axis (``size`` for ``k < 1``), for each output."""
    data, k = inputs[0], entry(inputs[1])
    ndim = len(data.shape)
    axis = attrs.axis % ndim
    dims = [dim64(data, a) for a in range(ndim)]
    dims[axis] = Select(_op.less(k, 1), dims[axis], _op.minimum(k, dims[axis]))
    return [shape_tensor(dims, f"dyn_topk_shape{n}") for n in range(len(out_types))], []


def topk(data, k, axis=-1, ret_type="both", is_ascend=False, dtype="int32"):
    """The ``k`` largest (smallest when ``is_ascend``) elements along ``axis`` and their indices, ``k`` a scalar
    integer tensor known at run time; with ``ret_type="both"`` index the result."""
    call = make_call("dyn.topk", [data, k], DynTopKAttrs(int(axis), ret_type, bool(is_ascend), dtype))
    return TupleWrapper(call, 2) if ret_type == "both" else call


@register_op_attr("dyn.topk", "FDynamicToStatic")
def _topk_to_static(call, values):
    """``topk(data, k)`` once ``k`` is a constant."""
    if values[1] is None:
        return None
    a = call.attrs
    out = static_topk(call.args[0], constant_ints(values[1])[0], a.axis, a.ret_type, a.is_ascend, a.dtype)
    return out.astuple() if isinstance(out, TupleWrapper) else out
