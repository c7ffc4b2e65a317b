"""``dyn.sparse_to_dense``: ``sparse_to_dense`` whose ``output_shape`` is a tensor known at run time (TVM's
``relay.op.dyn.sparse_to_dense``). The shape function reads the shape's values (refusing a negative one); once they
are a constant, ``DynamicToStatic`` makes the static operator."""

from ....ir.type import Any, TensorType
from ..array import sparse_to_dense as static_sparse_to_dense
from ..op import OpPattern, make_call, register_op_attr, register_relay_op, register_shape_func
from ..type_relations import ALL, INTEGER, same_dtype, tensor_arg
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
