"""The ``call_lowered`` operator: a call of a lowered ``tir.PrimFunc`` from Relay (TVM's ``relay.op.call_lowered``).

After LowerTE, ``@main`` calls kernels as ``call_lowered(@tvmgen_default_fused_add, (%x, %y), out_type=...)``: the
first argument is the GlobalVar of the PrimFunc in the same IRModule, the second the tuple of Relay arguments
(each a tensor or a tuple of tensors, flattened into the kernel's parameters in order). A PrimFunc has no Relay
result type, so the call keeps the type of the primitive function it replaced in its attributes
(:class:`CallLoweredAttrs`) and the type relation returns it. The printer leaves the attribute out: the call's
``/* ty=... */`` comment shows the same type, and a module holding PrimFuncs prints for reading, not parsing back.
"""

from dataclasses import dataclass

from ...error import TypeInferenceError
from ...ir.attrs import Attrs
from ...ir.expr import GlobalVar
from ...ir.op import Op
from ...ir.type import TensorType, TupleType, Type
from ...ir.type_poly import FuncType
from ..expr import Call, Tuple
from ..op.op import OpPattern, register_relay_op

__all__ = ["CallLoweredAttrs", "call_lowered", "is_call_lowered", "CALL_LOWERED"]


@dataclass(frozen=True, slots=True)
class CallLoweredAttrs(Attrs):
    """Attributes of ``call_lowered``: ``out_type``, the Relay type of the result (a tensor or tuple type),
    ``reshape_only``, set when the kernel only reshapes its input (the VM then runs it as a view, no copy), and
    ``shape_func``, the GlobalVar of the PrimFunc computing the result's shapes from the arguments' when the result
    type has dynamic dimensions (:mod:`~kiln.relay.backend.shape_func`), and ``shape_func_reads_data``, set when that
    function takes the arguments themselves (a data-dependent one) rather than their shapes."""

    out_type: Type = None
    reshape_only: bool = False
    shape_func: GlobalVar | None = None
    shape_func_reads_data: bool = False

    def __post_init__(self):
        self._require(self.out_type is None or isinstance(self.out_type, TensorType | TupleType), "out_type",
                      "must be the Relay tensor or tuple type of the call's result")

    def non_default_items(self):
        return []  # the result type is printed in the call's type comment already


def _call_lowered_rel(arg_types, attrs):
    func_type, args_type = arg_types
    if func_type is not None and not isinstance(func_type, FuncType):
        raise TypeInferenceError(f"the first argument must be a lowered function (a GlobalVar), got type {func_type}")
    if not isinstance(args_type, TupleType):
        raise TypeInferenceError(f"the second argument must be the tuple of arguments, got type {args_type}")
    if attrs is None or attrs.out_type is None:
        raise TypeInferenceError("the call has no result type (CallLoweredAttrs.out_type); LowerTE records it")
    return attrs.out_type


register_relay_op("call_lowered", 2, _call_lowered_rel, OpPattern.OPAQUE, CallLoweredAttrs,
                  "Call a lowered tir.PrimFunc of the module with a tuple of Relay arguments.")
CALL_LOWERED = Op.get("call_lowered")


def call_lowered(func: GlobalVar, args, out_type, span=None, reshape_only=False, shape_func=None,
                 shape_func_reads_data=False) -> Call:
    """``call_lowered(func, Tuple(args))`` typed ``out_type`` (the arguments must be typed already).

    Parameters
    ----------
    func : GlobalVar
        The PrimFunc's name in the module.
    args : list of RelayExpr
        The Relay arguments.
    out_type : TensorType or TupleType
        The result type.
    reshape_only : bool
        Whether the kernel only reshapes its one input.
    shape_func : GlobalVar, optional
        The shape function's PrimFunc, for a result with dynamic dimensions.
    shape_func_reads_data : bool
        Whether the shape function takes the arguments (data-dependent) rather than their shapes.
    """
    args = tuple(args)
    arg_tuple = Tuple(args, checked_type_=TupleType([a.checked_type_ for a in args]))
    attrs = CallLoweredAttrs(out_type, bool(reshape_only), shape_func, bool(shape_func_reads_data))
    return Call(CALL_LOWERED, (func, arg_tuple), attrs, span=span,
                checked_type_=out_type)


def is_call_lowered(expr) -> bool:
    """Whether ``expr`` is a ``call_lowered`` call."""
    return isinstance(expr, Call) and expr.op is CALL_LOWERED
