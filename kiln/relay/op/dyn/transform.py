"""``dyn.reshape``: :func:`kiln.relay.reshape` with ``newshape`` a 1-D integer tensor known at run time."""

from dataclasses import dataclass

from ....error import TypeInferenceError
from ....ir.attrs import Attrs
from ....ir.type import Any, TensorType
from ....te import compute
from ....tir import op as _op
from ....tir.expr import Cast, Select
from ....topi.utils import prod
from ..op import OpPattern, make_call, register_op_attr, register_relay_op, register_shape_func
from ..tensor import reshape as static_reshape
from ..type_relations import ALL, SIGNED, tensor_arg

__all__ = ["DynReshapeAttrs", "reshape"]


@dataclass(frozen=True, slots=True)
class DynReshapeAttrs(Attrs):
    """``allowzero``: whether a 0 in the shape means a zero-sized dimension (1) or a copy of the input's (0)."""

    allowzero: int = 0


def _reshape_rel(types, attrs):
    data, newshape = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "newshape")
    if newshape.ndim != 1 or type(newshape.shape[0]) is Any:
        raise TypeInferenceError(f"dyn.reshape: newshape must be a 1-D tensor of a static length (the result's "
                                 f"rank), got {newshape}")
    return TensorType((Any(),) * newshape.shape[0], data.dtype)


register_relay_op("dyn.reshape", 2, _reshape_rel, OpPattern.OPAQUE, DynReshapeAttrs, dtypes=(ALL, SIGNED))


def _int64(value):
    return Cast("int64", value) if getattr(value, "dtype", "int64") != "int64" else value


@register_shape_func("dyn.reshape", True)
def _reshape_shape_func(attrs, inputs, out_types):
    """The values of ``newshape`` with TVM's 0 (copy the input's dimension, unless ``allowzero``) and -1 (what the
    others leave) resolved; checks: one -1 at most, no other negative entry, as many elements as the input."""
    data, newshape = inputs
    in_dims = [_int64(_op.const(d, "int64") if isinstance(d, int) else d) for d in data.shape]
    rank = out_types[0].ndim
    values = [_int64(newshape[j]) for j in range(rank)]
    resolved = []
    for j, v in enumerate(values):
        if attrs.allowzero or j >= len(in_dims):
            resolved.append(v)
        else:
            resolved.append(Select(_op.equal(v, 0), in_dims[j], v))
    known = prod([Select(_op.equal(r, -1), _op.const(1, "int64"), r) for r in resolved])
    total = prod(in_dims) if in_dims else _op.const(1, "int64")
    dims = [Select(_op.equal(r, -1), _op.floordiv(total, _op.maximum(known, _op.const(1, "int64"))), r)
            for r in resolved]
    inferred = sum((Select(_op.equal(v, -1), _op.const(1, "int64"), _op.const(0, "int64")) for v in values),
                   _op.const(0, "int64"))
    shape = compute((rank,), lambda j: _select(dims, j), name="dyn_reshape_shape")
    checks = [(_op.less_equal(inferred, 1), "dyn.reshape: newshape has more than one -1"),
              *[(_op.greater_equal(v, -1), f"dyn.reshape: newshape entry {j} is negative (only -1 is allowed)")
                for j, v in enumerate(values)],
              (_op.equal(prod(dims) if dims else _op.const(1, "int64"), total),
               f"dyn.reshape: newshape does not hold as many elements as the data of shape {tuple(data.shape)}")]
    return [shape], checks


def _select(values, j):
    expr = values[-1]
    for index in range(len(values) - 2, -1, -1):
        expr = Select(_op.equal(j, index), values[index], expr)
    return expr


def reshape(data, newshape, allowzero=False):
    """``data`` reshaped to the shape held by the 1-D integer tensor ``newshape`` (TVM's 0 and -1 apply)."""
    return make_call("dyn.reshape", [data, newshape], DynReshapeAttrs(int(allowzero)))


@register_op_attr("dyn.reshape", "FDynamicToStatic")
def _reshape_to_static(call, values):
    """``reshape(data, newshape)`` once ``newshape`` is a constant."""
    if values[1] is None:
        return None
    return static_reshape(call.args[0], [int(v) for v in values[1]], call.attrs.allowzero)
