"""The VM dialect (TVM's ``relay.op.vm``): kernel calls and shape operations the VM compiler turns into instructions.

* ``vm.invoke_tvm_op(func, inputs, outputs)``: call the kernel ``func`` (a lowered PrimFunc's GlobalVar, or a
  primitive Relay function before lowering) on the tuple ``inputs``, writing into the tuple ``outputs`` (tensors
  ``memory.alloc_tensor`` made); it returns nothing (the empty tuple). Compiles to ``InvokePacked``.
* ``vm.shape_of(tensor)``: the shape as an int64 1-D tensor, read at run time (``dtype="int64"``, as TVM writes
  it). Compiles to ``ShapeOf``.
* ``vm.reshape_tensor(data, shape, newshape)``: ``data`` viewed with the shape held in the int64 tensor ``shape``,
  no copy; ``newshape`` is the result's static shape (its type). Compiles to ``ReshapeTensor``.
"""

from dataclasses import dataclass

from ...error import TypeInferenceError
from ...ir.attrs import Attrs
from ...ir.op import Op, register_op_attr
from ...ir.type import TensorType, TupleType, is_any, static_or_any
from ...ir.type_poly import FuncType
from ..expr import Call, Tuple
from .attrs import ShapeOfAttrs
from .memory import register_dialect_op
from .op import make_call

__all__ = ["ReshapeTensorAttrs", "invoke_tvm_op", "shape_of", "reshape_tensor", "is_reshape_only", "RESHAPE_OPS"]


@dataclass(frozen=True, slots=True)
class ReshapeTensorAttrs(Attrs):
    """``newshape``: the shape of the result (its type)."""

    newshape: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "newshape", static_or_any(self.newshape))
        self._require(all(is_any(d) or d >= 0 for d in self.newshape), "newshape", "must be non-negative")


def _invoke_tvm_op_rel(arg_types, attrs):
    _, inputs, outputs = arg_types
    if not isinstance(inputs, TupleType) or not isinstance(outputs, TupleType):
        raise TypeInferenceError(f"the inputs and outputs must be tuples, got {inputs} and {outputs}")
    for ttype in outputs.fields:
        if not isinstance(ttype, TensorType):
            raise TypeInferenceError(f"every output must be a tensor, got {ttype}")
    return TupleType(())


def _shape_of_rel(arg_types, attrs):
    (data,) = arg_types
    if not isinstance(data, TensorType):
        raise TypeInferenceError(f"the argument must be a tensor, got {data}")
    dtype = attrs.dtype if attrs is not None else "int64"
    if dtype != "int64":  # TVM's builder writes dtype="int64"; the VM's ShapeOf makes nothing else
        raise TypeInferenceError(f"vm.shape_of gives an int64 shape (the VM's ShapeOf), not {dtype}")
    return TensorType((data.ndim,), "int64")


def _reshape_tensor_rel(arg_types, attrs):
    data, shape = arg_types
    if not isinstance(data, TensorType):
        raise TypeInferenceError(f"the data must be a tensor, got {data}")
    if shape != TensorType((len(attrs.newshape),), "int64"):
        raise TypeInferenceError(f"the shape must be an int64 tensor of {len(attrs.newshape)} elements, got {shape}")
    if not data.is_dynamic and not TensorType(attrs.newshape).is_dynamic and \
            TensorType(attrs.newshape, data.dtype).size != data.size:
        raise TypeInferenceError(f"cannot view {data} as shape {attrs.newshape}")
    return TensorType(attrs.newshape, data.dtype)


register_dialect_op("vm.invoke_tvm_op", 3, _invoke_tvm_op_rel, None,
                    "Call a kernel on a tuple of inputs, writing a tuple of outputs.")
register_dialect_op("vm.shape_of", 1, _shape_of_rel, ShapeOfAttrs, "The shape of a tensor as an int64 1-D tensor.")
register_dialect_op("vm.reshape_tensor", 2, _reshape_tensor_rel, ReshapeTensorAttrs,
                    "A tensor viewed with another shape of as many elements, without copying.")


def invoke_tvm_op(func, inputs, outputs):
    """``vm.invoke_tvm_op(func, inputs, outputs)``; ``inputs``/``outputs`` are tuples or lists of expressions."""
    inputs = inputs if isinstance(inputs, Tuple) else Tuple(tuple(inputs))
    outputs = outputs if isinstance(outputs, Tuple) else Tuple(tuple(outputs))
    return make_call("vm.invoke_tvm_op", [func, inputs, outputs])


def shape_of(tensor):
    """``vm.shape_of(tensor)``: its shape as an int64 1-D tensor."""
    return make_call("vm.shape_of", [tensor], ShapeOfAttrs("int64"))


def reshape_tensor(data, shape, newshape):
    """``vm.reshape_tensor``: ``data`` viewed with the shape in the int64 tensor ``shape`` (``newshape`` statically)."""
    return make_call("vm.reshape_tensor", [data, shape], ReshapeTensorAttrs(newshape))


RESHAPE_OPS = ("reshape", "squeeze", "expand_dims", "nn.batch_flatten", "contrib_reverse_reshape")
"""Operators whose result is their input's elements in the same order: a primitive function of only these is a view."""
for _name in RESHAPE_OPS:
    register_op_attr(_name, "TReshapeOp", True)


def is_reshape_only(func) -> bool:
    """Whether the primitive function ``func`` only reshapes its first tensor parameter (TVM's ``reshape_only``), so
    the VM may run it as ``vm.reshape_tensor``, a view without a copy.

    The body is a chain of ``TReshapeOp`` calls down to the first parameter; a call's other arguments may only be
    the second parameter, the shape a ``dyn.reshape`` reads at run time (the VM then views the data with the shape
    the operator's shape function computes, as TVM's ``EmitReshapeTensor`` does)."""
    if not 1 <= len(func.params) <= 2 or not isinstance(func.checked_type_, FuncType):
        return False
    expr = func.body
    while isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.get_attr("TReshapeOp") and expr.args:
        if any(arg is not func.params[-1] or len(func.params) == 1 for arg in expr.args[1:]):
            return False
        expr = expr.args[0]
    return expr is func.params[0] and expr is not func.body and isinstance(func.body.checked_type_, TensorType)
