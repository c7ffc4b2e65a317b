"""More element-wise operators: ``log2 log10 fast_exp fast_tanh fast_erf copy reinterpret``.

TVM's ``fast_*`` are approximations of ``exp``, ``tanh`` and ``erf`` that ``FastMath`` substitutes; kiln computes
them as the exact functions (kiln's float32 ``exp`` is already the vectorized one). ``reinterpret`` reads the bits of
each element as another type of the same width.
"""

from ...error import TypeInferenceError
from ...ir.type import TensorType
from ...tir import dtype as _dt
from . import attrs as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import ALL, FLOAT, NUMERIC, check_dtype, identity_rel, tensor_arg

_UNARY = {"log2": NUMERIC, "log10": NUMERIC, "fast_exp": FLOAT, "fast_tanh": FLOAT, "fast_erf": FLOAT, "copy": ALL}
for _name, _dtypes in _UNARY.items():
    register_relay_op(_name, 1, identity_rel, OpPattern.ELEMWISE, dtypes=_dtypes)


def _unary(name):
    def build(data):
        return make_call(name, [data])

    build.__name__ = name
    build.__doc__ = f"Element-wise ``{name}``."
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
