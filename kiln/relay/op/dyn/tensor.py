"""The dynamic initializers (TVM's ``relay/op/dyn/_tensor.py``): ``full``, ``zeros`` and ``ones`` with the shape a
1-D integer tensor known at run time. The shape function returns its values and refuses a negative one."""

from dataclasses import dataclass

from ....error import TypeInferenceError
from ....ir.attrs import Attrs
from ....ir.type import Any, TensorType
from ..op import OpPattern, make_call, register_op_attr, register_relay_op, register_shape_func
from ..tensor import full as static_full
from ..tensor import ones as static_ones
from ..tensor import zeros as static_zeros
from ..type_relations import ALL, SIGNED, check_dtype, tensor_arg
from .common import constant_ints, entries, nonnegative_checks, shape_tensor, static_length

__all__ = ["DynInitOpAttrs", "full", "zeros", "ones"]


@dataclass(frozen=True, slots=True)
class DynInitOpAttrs(Attrs):
    """``dtype``: the result's (for ``full``, empty means the fill value's)."""

    dtype: str = "float32"


def _init_rel(types, attrs):
    rank = static_length(tensor_arg(types, 0, "shape"), "dyn.zeros/ones", "shape")
    check_dtype(attrs.dtype, ALL, "the result", "the initializer")
    return TensorType((Any(),) * rank, attrs.dtype)


def _full_rel(types, attrs):
    fill = tensor_arg(types, 0, "fill_value")
    if fill.shape:
        raise TypeInferenceError(f"fill_value must be a scalar, got {fill}")
    rank = static_length(tensor_arg(types, 1, "shape"), "dyn.full", "shape")
    dtype = attrs.dtype or fill.dtype
    check_dtype(dtype, ALL, "the result", "dyn.full")
    return TensorType((Any(),) * rank, dtype)


register_relay_op("dyn.zeros", 1, _init_rel, OpPattern.OPAQUE, DynInitOpAttrs, dtypes=SIGNED)
register_relay_op("dyn.ones", 1, _init_rel, OpPattern.OPAQUE, DynInitOpAttrs, dtypes=SIGNED)
register_relay_op("dyn.full", 2, _full_rel, OpPattern.OPAQUE, DynInitOpAttrs, dtypes=(ALL, SIGNED))


def _shape_func_of(name, shape_index):
    def fshape(attrs, inputs, out_types):
        values = entries(inputs[shape_index], out_types[0].ndim)
        return [shape_tensor(values, f"{name.replace('.', '_')}_shape")], nonnegative_checks(values, name, "shape")

    fshape.__doc__ = f"The values of ``shape``; checks: none negative ({name})."
    register_shape_func(name, True, fshape)


_shape_func_of("dyn.zeros", 0)
_shape_func_of("dyn.ones", 0)
_shape_func_of("dyn.full", 1)


def zeros(shape, dtype="float32"):
    """A tensor of zeros of the shape held by the 1-D integer tensor ``shape``."""
    return make_call("dyn.zeros", [shape], DynInitOpAttrs(dtype))


def ones(shape, dtype="float32"):
    """A tensor of ones of the shape held by the 1-D integer tensor ``shape``."""
    return make_call("dyn.ones", [shape], DynInitOpAttrs(dtype))


def full(fill_value, shape, dtype=""):
    """A tensor of the shape held by the 1-D integer tensor ``shape``, filled with the scalar ``fill_value``."""
    return make_call("dyn.full", [fill_value, shape], DynInitOpAttrs(dtype))


@register_op_attr("dyn.zeros", "FDynamicToStatic")
def _zeros_to_static(call, values):
    """``zeros(shape)`` once ``shape`` is a constant."""
    return None if values[0] is None else static_zeros(constant_ints(values[0]), call.attrs.dtype)


@register_op_attr("dyn.ones", "FDynamicToStatic")
def _ones_to_static(call, values):
    """``ones(shape)`` once ``shape`` is a constant."""
    return None if values[0] is None else static_ones(constant_ints(values[0]), call.attrs.dtype)


@register_op_attr("dyn.full", "FDynamicToStatic")
def _full_to_static(call, values):
    """``full(fill_value, shape)`` once ``shape`` is a constant."""
    if values[1] is None:
        return None
    return static_full(call.args[0], constant_ints(values[1]), call.attrs.dtype)
