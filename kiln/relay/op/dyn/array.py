"""``dyn.sparse_to_dense`` and ``dyn.arange``: ``sparse_to_dense`` whose ``output_shape``, and ``arange`` whose
``start``/``stop``/``step``, are known only at run time (TVM's ``relay.op.dyn.sparse_to_dense``; TVM's ``arange``
takes run-time values itself). The shape functions read the values (refusing a negative size); once they are
constants, ``DynamicToStatic`` makes the static operator."""

from ....ir.type import Any, TensorType
from ....te import compute
from ....tir import intrin as _intrin
from ....tir import op as _op
from .. import attrs_array as A
from ..array import arange as static_arange
from ..array import sparse_to_dense as static_sparse_to_dense
from ..op import OpPattern, make_call, register_op_attr, register_relay_op, register_shape_func
from ..type_relations import ALL, INTEGER, NUMERIC, same_dtype, tensor_arg
from .common import constant_ints, entries, nonnegative_checks, scalar_arg, shape_tensor, static_length


def _sparse_to_dense_rel(types, attrs):
    indices, values, default, shape = (tensor_arg(types, i, n) for i, n in enumerate(
        ["sparse_indices", "sparse_values", "default_value", "output_shape"]))
    scalar_arg(default, "dyn.sparse_to_dense", "default_value")
    same_dtype([values, default], "dyn.sparse_to_dense sparse_values and default_value")
    return TensorType((Any(),) * static_length(shape, "dyn.sparse_to_dense", "output_shape"), values.dtype)


register_relay_op("dyn.sparse_to_dense", 4, _sparse_to_dense_rel, OpPattern.OPAQUE,
                  dtypes=(INTEGER, ALL, ALL, INTEGER))


@register_shape_func("dyn.sparse_to_dense", True)
def _sparse_to_dense_shape_func(attrs, inputs, out_types):
    """The values of ``output_shape``; checks: none negative."""
    shape = inputs[3]
    values = entries(shape, out_types[0].ndim)
    return [shape_tensor(values, "dyn_sparse_to_dense_shape")], nonnegative_checks(values, "dyn.sparse_to_dense",
                                                                                   "output_shape")


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value):
    """``sparse_values`` at ``sparse_indices`` in a dense tensor of the shape ``output_shape`` holds at run time,
    ``default_value`` elsewhere."""
    return make_call("dyn.sparse_to_dense", [sparse_indices, sparse_values, default_value, output_shape])


@register_op_attr("dyn.sparse_to_dense", "FDynamicToStatic")
def _sparse_to_dense_to_static(call, values):
    """The static operator once ``output_shape`` is a constant."""
    if values[3] is None:
        return None
    indices, sparse_values, default, _ = call.args
    return static_sparse_to_dense(indices, constant_ints(values[3]), sparse_values, default)


def _arange_rel(types, attrs):
    """The result's length is known at run time; ``attrs.dtype`` is its dtype (the static values are unused)."""
    for i, name in enumerate(("start", "stop", "step")):
        scalar_arg(tensor_arg(types, i, name), "dyn.arange", name)
    return TensorType((Any(),), attrs.dtype)


register_relay_op("dyn.arange", 3, _arange_rel, OpPattern.OPAQUE, A.ArangeAttrs, dtypes=NUMERIC)


def _scalar(tensor):
    return tensor() if not tensor.shape else tensor(0)


@register_shape_func("dyn.arange", True)
def _arange_shape_func(attrs, inputs, out_types):
    """``max(0, ceil((stop - start) / step))`` elements, computed in float64 (numpy's rule); checks: step != 0."""
    start, stop, step = (_op.cast(_scalar(t), "float64") for t in inputs)
    count = _op.maximum(_op.cast(_intrin.ceil((stop - start) / step), "int64"), _op.const(0, "int64"))
    shape = compute((1,), lambda j: count, name="dyn_arange_shape")
    return [shape], [(_op.not_equal(step, _op.const(0.0, "float64")), "dyn.arange: step is 0")]


def arange(start, stop, step, dtype):
    """``start, start + step, ...`` below ``stop`` for values known at run time (scalar tensors)."""
    return make_call("dyn.arange", [start, stop, step], A.ArangeAttrs(0.0, 1.0, 1.0, dtype))


@register_op_attr("dyn.arange", "FDynamicToStatic")
def _arange_to_static(call, values):
    """The static operator once the three values are constants."""
    if any(v is None for v in values):
        return None
    return static_arange(*(float(v.reshape(-1)[0]) for v in values), dtype=call.attrs.dtype)
