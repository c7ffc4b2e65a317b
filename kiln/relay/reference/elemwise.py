"""Element-wise and broadcast operators in numpy: arithmetic, unary math, ``clip``, ``cast``, ``where``, and the
tensor initializers ``zeros``, ``ones`` and ``full``.

The result keeps the dtype of the operands (float32 stays float32): each function converts back with
:func:`as_dtype` where numpy would promote (math on integers, 0-d results). Integer ``divide`` truncates toward
zero as in C; ``round`` rounds ties away from zero as LLVM's ``llvm.round`` (TVM's lowering of ``round``).
"""

import math

import numpy as np

from ...tir.dtype_semantics import saturate_int
from .common import as_dtype, is_float, is_int, np_dtype, register, round_half_away, trunc_divide


def _binary(ufunc):
    def evaluate(attrs, lhs, rhs):
        return as_dtype(ufunc(lhs, rhs), np.result_type(lhs, rhs))

    return evaluate


for _name, _ufunc in [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
                      ("maximum", np.maximum), ("minimum", np.minimum)]:
    register(_name)(_binary(_ufunc))


@register("divide")
def divide(attrs, lhs, rhs):
    """True division for floats; division truncating toward zero for integers (TVM's ``truncdiv``)."""
    dtype = np.result_type(lhs, rhs)
    if is_int(dtype):
        return as_dtype(trunc_divide(lhs, rhs), dtype)
    return as_dtype(np.true_divide(lhs, rhs), dtype)


@register("power")
def power(attrs, lhs, rhs):
    """``lhs ** rhs``; integer powers with negative exponents go through float64 (numpy refuses them)."""
    dtype = np.result_type(lhs, rhs)
    if is_int(dtype) and np.any(rhs < 0):
        return as_dtype(np.trunc(np.power(lhs.astype("float64"), rhs.astype("float64"))), dtype)
    return as_dtype(np.power(lhs, rhs), dtype)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _rsqrt(x):
    return 1 / np.sqrt(x)


def _erf(x):
    # no vectorized erf in numpy: math.erf per element, in float64 (exact to a float64 ulp)
    return np.asarray(np.frompyfunc(math.erf, 1, 1)(x.astype("float64")), dtype="float64")  # a 0-d x gives a float


def _round(x):
    return round_half_away(x) if is_float(x.dtype) else x


_UNARY = {
    "negative": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": _rsqrt, "tanh": np.tanh,
    "sigmoid": _sigmoid, "abs": np.abs, "erf": _erf, "floor": np.floor, "ceil": np.ceil, "round": _round,
    "sign": np.sign,
}


_INT_NATIVE = {"negative", "abs", "sign"}
_INT_IDENTITY = {"floor", "ceil", "round"}


def _unary(name, fn):
    def evaluate(attrs, data):
        if is_float(data.dtype) or name in _INT_NATIVE:
            return as_dtype(fn(data), data.dtype)
        if name in _INT_IDENTITY:
            return data
        # transcendental math on integers computes in float64 and truncates back, as a cast would
        return as_dtype(fn(data.astype("float64")), data.dtype)

    return evaluate


for _name, _fn in _UNARY.items():
    register(_name)(_unary(_name, _fn))


def _bound(value, dtype):
    """A clip bound converted to ``dtype`` as TVM's ``const(value, dtype)`` does (integers truncate), saturated to
    the range of the type so that ``a_max=inf`` means "no upper bound" for integers too."""
    if is_int(dtype):
        return np.asarray(saturate_int(value, dtype), dtype)
    return np.asarray(value).astype(dtype)


@register("clip")
def clip(attrs, data):
    """Clamp into ``[a_min, a_max]``, with the bounds converted to the data's dtype first."""
    low, high = _bound(attrs.a_min, data.dtype), _bound(attrs.a_max, data.dtype)
    return as_dtype(np.minimum(np.maximum(data, low), high), data.dtype)


@register("cast")
def cast(attrs, data):
    """Convert to ``attrs.dtype`` (float to int truncates; anything to bool is ``!= 0``)."""
    return as_dtype(data, np_dtype(attrs.dtype))


@register("where")
def where(attrs, condition, x, y):
    """Pick from ``x`` where ``condition`` is nonzero, else from ``y``, broadcasting all three."""
    return as_dtype(np.where(condition.astype(bool), x, y), np.result_type(x, y))


@register("zeros")
def zeros(attrs):
    """A tensor of zeros of ``attrs.shape`` and ``attrs.dtype``."""
    return np.zeros(attrs.shape, np_dtype(attrs.dtype))


@register("ones")
def ones(attrs):
    """A tensor of ones of ``attrs.shape`` and ``attrs.dtype``."""
    return np.ones(attrs.shape, np_dtype(attrs.dtype))


@register("full")
def full(attrs, fill_value):
    """A tensor of ``attrs.shape`` filled with the scalar ``fill_value`` converted to ``attrs.dtype`` (the fill
    value's dtype when empty)."""
    dtype = np_dtype(attrs.dtype) if attrs.dtype else fill_value.dtype
    return np.full(attrs.shape, as_dtype(fill_value, dtype), dtype)


def _floor_divide(lhs, rhs):
    """Floor division (TVM's ``floordiv``: ``floor(a / b)`` for floats)."""
    if is_int(np.result_type(lhs, rhs)):
        return np.floor_divide(lhs, rhs)
    return np.floor(lhs / rhs)


def _floor_mod(lhs, rhs):
    """The remainder with the sign of the divisor (TVM's ``floormod``: ``a - floor(a / b) * b`` for floats)."""
    if is_int(np.result_type(lhs, rhs)):
        return np.mod(lhs, rhs)
    return lhs - np.floor(lhs / rhs) * rhs


def _trunc_divide(lhs, rhs):
    """Division rounding toward zero (TVM's ``trunc_divide``: ``truncdiv`` of integers, ``trunc(a / b)`` of
    floats)."""
    if is_int(np.result_type(lhs, rhs)):
        return trunc_divide(lhs, rhs)
    return np.trunc(lhs / rhs)


def _trunc_mod(lhs, rhs):
    """The remainder of :func:`_trunc_divide`, with the sign of ``lhs`` (``a - trunc(a / b) * b`` of floats, as TVM
    computes it, rounding after each operation)."""
    return lhs - _trunc_divide(lhs, rhs) * rhs


_MORE_BINARY = {
    "floor_divide": _floor_divide, "floor_mod": _floor_mod, "mod": np.fmod, "trunc_divide": _trunc_divide,
    "trunc_mod": _trunc_mod,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "left_shift": np.left_shift, "right_shift": np.right_shift,
}
for _name, _fn in _MORE_BINARY.items():
    register(_name)(_binary(_fn))


def _bool_binary(fn):
    def evaluate(attrs, lhs, rhs):
        return np.asarray(fn(lhs, rhs), dtype=bool)

    return evaluate


for _name, _fn in [("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                   ("less_equal", np.less_equal), ("greater", np.greater), ("greater_equal", np.greater_equal)]:
    register(_name)(_bool_binary(_fn))
for _name, _fn in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)]:
    register(_name)(_binary(lambda a, b, f=_fn: f(a, b).astype(np.result_type(a, b))))

_MORE_UNARY = {
    "trunc": np.trunc, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh,
}
_INT_IDENTITY.add("trunc")
for _name, _fn in _MORE_UNARY.items():
    register(_name)(_unary(_name, _fn))


@register("logical_not")
def logical_not(attrs, data):
    """``not data`` element-wise, in the data's dtype (bool for bool)."""
    return as_dtype(np.logical_not(data), data.dtype)


@register("bitwise_not")
def bitwise_not(attrs, data):
    """Bitwise complement of integers (``not`` for bool)."""
    return np.invert(data)


for _name, _fn in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
    register(_name)(lambda attrs, data, f=_fn: np.asarray(f(data), dtype=bool))


# kiln/relay/op/elemwise.py: fast_* are the exact functions here as in the compiled code
_EXTRA = {"log2": np.log2, "log10": np.log10, "fast_exp": np.exp, "fast_tanh": np.tanh, "fast_erf": _erf}
for _name, _fn in _EXTRA.items():
    register(_name)(_unary(_name, _fn))


@register("copy", "annotation.checkpoint")
def copy(attrs, data):
    """A copy of ``data``."""
    return np.array(data)


@register("reinterpret")
def reinterpret(attrs, data):
    """The bits of each element read as ``attrs.dtype``."""
    return np.ascontiguousarray(data).view(np_dtype(attrs.dtype))
