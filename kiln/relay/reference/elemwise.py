"""Element-wise and broadcast operators in numpy: arithmetic, unary math, ``clip``, ``cast``, ``where``, and the
tensor initializers ``zeros``, ``ones`` and ``full``.

The result keeps the dtype of the operands (float32 stays float32): each function converts back with
:func:`as_dtype` where numpy would promote (math on integers, 0-d results). Integer ``divide`` truncates toward
zero as in C; ``round`` rounds ties away from zero as LLVM's ``llvm.round`` (TVM's lowering of ``round``).
"""

import math

import numpy as np

from .common import as_dtype, highest, is_float, is_int, lowest, np_dtype, register, round_half_away, trunc_divide


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
    return np.frompyfunc(math.erf, 1, 1)(x.astype("float64")).astype("float64")


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
        value = min(max(value, float(lowest(dtype))), float(highest(dtype)))
        return np.asarray(math.trunc(value)).astype(dtype)
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
    """A tensor of ``attrs.shape`` filled with the scalar ``fill_value`` converted to ``attrs.dtype``."""
    dtype = np_dtype(attrs.dtype)
    return np.full(attrs.shape, as_dtype(fill_value, dtype), dtype)
