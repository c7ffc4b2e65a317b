"""More element-wise operators: ``log2 log10 fast_exp fast_tanh fast_erf copy reinterpret``, and the math,
comparisons and logic TVM has beyond the basic set (``sin``... ``equal``... ``logical_and``... ``left_shift``).

TVM's ``fast_*`` are approximations of ``exp``, ``tanh`` and ``erf`` that ``FastMath`` substitutes; kiln computes
them as the exact functions (kiln's float32 ``exp`` is already the vectorized one). ``reinterpret`` reads the bits of
each element as another type of the same width.
"""

from ...error import TypeInferenceError
from ...ir.type import TensorType
from ...tir import dtype as _dt
from . import attrs as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import (
    ALL,
    BOOL,
    FLOAT,
    INTEGER,
    NUMERIC,
    broadcast_bool_rel,
    broadcast_rel,
    check_dtype,
    identity_rel,
    tensor_arg,
)

_UNARY = {"log2": NUMERIC, "log10": NUMERIC, "fast_exp": FLOAT, "fast_tanh": FLOAT, "fast_erf": FLOAT, "copy": ALL}
for _name, _dtypes in _UNARY.items():
    register_relay_op(_name, 1, identity_rel, OpPattern.ELEMWISE, dtypes=_dtypes)


def _unary(name):
    def build(data):
        return make_call(name, [data])

    build.__name__ = name
    build.__doc__ = f"Element-wise ``{name}``."
    return build


def _binary(name):
    def build(lhs, rhs):
        return make_call(name, [lhs, rhs])

    build.__name__ = name
    build.__doc__ = f"Broadcasting ``{name}`` of two tensors of one dtype (numpy rules)."
    return build


log2, log10, fast_exp, fast_tanh, fast_erf, copy = map(_unary, _UNARY)


def _reinterpret_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    check_dtype(attrs.dtype, ALL, "the target", "reinterpret")
    if _dt.DataType.parse(attrs.dtype).bits != _dt.DataType.parse(data.dtype).bits or "bool" in (attrs.dtype,
                                                                                                   data.dtype):
        raise TypeInferenceError(f"reinterpret: {data.dtype} and {attrs.dtype} must be numeric types of one width")
    return TensorType(data.shape, attrs.dtype)


register_relay_op("reinterpret", 1, _reinterpret_rel, OpPattern.ELEMWISE, A.CastAttrs, dtypes=NUMERIC)


def reinterpret(data, dtype):
    """The bits of each element of ``data`` read as ``dtype`` (of the same width)."""
    return make_call("reinterpret", [data], A.CastAttrs(dtype))


# ------------------------------------------------------------------- more element-wise math, comparisons, logic
# (the ops TVM has beyond the basic set; frontends such as ONNX map onto them one to one)
_UNARY_MATH = ["trunc", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
               "logical_not", "bitwise_not"]
_UNARY_PREDICATE = ["isnan", "isinf", "isfinite"]
_BINARY_MORE = ["floor_divide", "floor_mod", "mod", "trunc_divide", "trunc_mod", "logical_and", "logical_or",
                "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
_COMPARE = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


def _predicate_rel(types, attrs):
    return TensorType(tensor_arg(types, 0).shape, "bool")


_LOGICAL = ("logical_and", "logical_or", "logical_xor", "logical_not")  # the truth of any value
_BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")
_SHIFTS = ("left_shift", "right_shift")


def _dtypes_of(name):
    if name in _LOGICAL:
        return ALL
    if name in _BITWISE:
        return BOOL + INTEGER
    return INTEGER if name in _SHIFTS else NUMERIC


for _name in _UNARY_MATH:
    register_relay_op(_name, 1, identity_rel, OpPattern.ELEMWISE, dtypes=_dtypes_of(_name))
for _name in _UNARY_PREDICATE:
    register_relay_op(_name, 1, _predicate_rel, OpPattern.ELEMWISE, dtypes=FLOAT)
for _name in _BINARY_MORE:
    register_relay_op(_name, 2, broadcast_rel, OpPattern.BROADCAST, dtypes=_dtypes_of(_name))
for _name in _COMPARE:
    register_relay_op(_name, 2, broadcast_bool_rel, OpPattern.BROADCAST, dtypes=ALL)

(trunc, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, logical_not,
 bitwise_not) = map(_unary, _UNARY_MATH)
isnan, isinf, isfinite = map(_unary, _UNARY_PREDICATE)
(floor_divide, floor_mod, mod, trunc_divide, trunc_mod, logical_and, logical_or, logical_xor, bitwise_and,
 bitwise_or, bitwise_xor, left_shift, right_shift) = map(_binary, _BINARY_MORE)
trunc_divide.__doc__ = "Broadcasting division rounding toward zero: ``trunc(lhs / rhs)`` (C's ``/`` on integers)."
trunc_mod.__doc__ = "Broadcasting remainder of :func:`trunc_divide`, with the sign of ``lhs`` (C's ``%`` on integers)."
equal, not_equal, less, less_equal, greater, greater_equal = map(_binary, _COMPARE)
for _build in (equal, not_equal, less, less_equal, greater, greater_equal):
    _build.__doc__ = f"Broadcasting comparison ``{_build.__name__}`` of two tensors of one dtype; the result is bool."
