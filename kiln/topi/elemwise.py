"""Element-wise operators (TVM's ``topi/math.py`` and ``topi/elemwise.py``): unary math, ``clip``, ``cast``,
``identity``, and the initializers ``full``, ``zeros``, ``ones``. Every result has tag ``elemwise``.

Semantics follow the numpy reference implementation (``kiln.relay.reference.elemwise``):

* math on floats calls the TIR intrinsic (``tir.exp`` ...); ``round`` rounds ties away from zero, built from
  ``trunc`` (TIR's ``round`` lowers to round-half-even);
* on integers ``negative``, ``abs`` and ``sign`` are exact, ``floor``, ``ceil`` and ``round`` are the identity, and
  transcendental math computes in float64 and truncates back, as a cast would;
* ``clip`` converts its bounds to the data's dtype first (integer bounds are truncated and saturated to the dtype's
  range, so ``inf`` means no bound); a cast to ``bool`` is ``x != 0``.
"""

import math

import numpy as np

from ..te.operation import compute
from ..tir import dtype as _dt
from ..tir import intrin as _intrin
from ..tir import op as _op
from ..tir.dtype_semantics import saturate_int
from ..tir.expr import PrimExpr
from . import tag as _tag

__all__ = [
    "negative", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "abs", "erf", "floor", "ceil", "round", "sign",
    "trunc", "sin", "cos", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "log2", "log10",
    "exp2", "isnan", "isinf", "isfinite", "logical_not", "bitwise_not", "reciprocal", "softplus", "softsign",
    "clip", "cast", "identity", "full", "zeros", "ones", "full_like", "round_half_away", "sign_expr", "elemwise",
    "fast_exp", "UNARY",
]


def elemwise(x, fexpr, name, dtype=None):
    """``compute(x.shape, fexpr(x[i]))`` tagged ``elemwise`` (``dtype`` is informative only)."""
    return compute(x.shape, lambda *i: fexpr(x(*i)), name=name, tag=_tag.ELEMWISE)


def round_half_away(v):
    """``v`` rounded to the nearest integer, ties away from zero (C's ``round``), from ``trunc`` (exact)."""
    whole = _intrin.trunc(v)
    frac = _op.subtract(v, whole)
    step = _op.select(_op.less(v, _op.const(0, v.dtype)), _op.const(-1, v.dtype), _op.const(1, v.dtype))
    return _op.select(_op.greater_equal(_op.abs(frac), _op.const(0.5, v.dtype)), _op.add(whole, step), whole)


def sign_expr(v):
    """``-1``, ``0`` or ``1`` by the sign of ``v`` (in ``v``'s dtype)."""
    zero, one = _op.const(0, v.dtype), _op.const(1, v.dtype)
    neg = _op.const(-1, v.dtype) if not _dt.DataType.parse(v.dtype).is_uint() else zero
    return _op.select(_op.greater(v, zero), one, _op.select(_op.less(v, zero), neg, zero))


def fast_exp(x):
    """Element-wise ``exp`` (TVM's ``topi.fast_exp``). kiln's ``exp`` of float32 is already the fast one: the build
    expands it into vector arithmetic within 2 ulp of libm (:func:`kiln.tir.transform.lower_intrin.lower_exp`)."""
    return elemwise(x, _intrin.exp, name="T_fast_exp")


def _via_float64(fn):
    """Apply float math ``fn`` to an integer value through float64, truncating back (as the reference does)."""
    def apply(v):
        if _dt.is_float(v.dtype):
            return fn(v)
        return _op.cast(_intrin.trunc(fn(_op.cast(v, "float64"))), v.dtype)

    return apply


def _int_identity(fn):
    def apply(v):
        return fn(v) if _dt.is_float(v.dtype) else v

    return apply


def _rsqrt(v):
    return _op.div(_op.const(1, v.dtype), _intrin.sqrt(v))


def _sigmoid(v):
    one = _op.const(1, v.dtype)
    return _op.div(one, _op.add(one, _intrin.exp(_op.multiply(v, _op.const(-1, v.dtype)))))


def _negative(v):
    return _op.subtract(_op.const(0, v.dtype), v) if not _dt.is_float(v.dtype) else _op.multiply(v, -1.0)


_UNARY = {
    "negative": _negative,
    "exp": _via_float64(_intrin.exp),
    "log": _via_float64(_intrin.log),
    "sqrt": _via_float64(_intrin.sqrt),
    "rsqrt": _via_float64(_rsqrt),
    "tanh": _via_float64(_intrin.tanh),
    "sigmoid": _via_float64(_sigmoid),
    "abs": _op.abs,
    "erf": _via_float64(_intrin.erf),
    "floor": _int_identity(_intrin.floor),
    "ceil": _int_identity(_intrin.ceil),
    "round": _int_identity(round_half_away),
    "trunc": _int_identity(_intrin.trunc),
    "sign": sign_expr,
    "sin": _via_float64(_intrin.sin),
    "cos": _via_float64(_intrin.cos),
    "tan": _via_float64(_intrin.tan),
    "sinh": _via_float64(_intrin.sinh),
    "cosh": _via_float64(_intrin.cosh),
    "asin": _via_float64(_intrin.asin),
    "acos": _via_float64(_intrin.acos),
    "atan": _via_float64(_intrin.atan),
    "asinh": _via_float64(_intrin.asinh),
    "acosh": _via_float64(_intrin.acosh),
    "atanh": _via_float64(_intrin.atanh),
    "log2": _via_float64(_intrin.log2),
    "log10": _via_float64(_intrin.log10),
    "exp2": _via_float64(_intrin.exp2),
    "reciprocal": lambda v: _op.div(_op.const(1, v.dtype), v) if _dt.is_float(v.dtype) else _op.truncdiv(
        _op.const(1, v.dtype), v),
    "softplus": _via_float64(lambda v: _intrin.log(_op.add(_op.const(1, v.dtype), _intrin.exp(v)))),
    "softsign": _via_float64(lambda v: _op.div(v, _op.add(_op.const(1, v.dtype), _op.abs(v)))),
    "isnan": _intrin.isnan,
    "isinf": _intrin.isinf,
    "isfinite": _intrin.isfinite,
    "logical_not": lambda v: _op.logical_not(v) if _dt.is_bool(v.dtype) else _op.cast(
        _op.equal(v, _op.const(0, v.dtype)), v.dtype),
    "bitwise_not": _intrin.bitwise_not,
}


def _unary(name):
    fexpr = _UNARY[name]

    def build(x):
        return elemwise(x, fexpr, name=f"T_{name}")

    build.__name__ = name
    build.__doc__ = f"""Element-wise ``{name}``.

    Parameters
    ----------
    x : te.Tensor

    Returns
    -------
    y : te.Tensor
    """
    return build


(
    negative, exp, log, sqrt, rsqrt, tanh, sigmoid, abs, erf, floor, ceil, round, trunc, sign, sin, cos, tan, sinh,
    cosh, asin, acos, atan, asinh, acosh, atanh, log2, log10, exp2, reciprocal, softplus, softsign, isnan, isinf,
    isfinite, logical_not, bitwise_not,
) = (_unary(_n) for _n in _UNARY)  # noqa: A001  (TVM's names shadow builtins here)

UNARY = {name: globals()[name] for name in _UNARY}
"""Operator name -> the element-wise compute of that name (the strategies of Relay's unary operators use it)."""


def _bound(value, dtype):
    """A clip bound as a constant of ``dtype`` (truncated and saturated for integers), or None for no bound."""
    t = _dt.DataType.parse(dtype)
    if t.is_float():
        if math.isinf(value):
            return None
        return _op.const(float(np.asarray(value, dtype=t.numpy())), dtype)
    if t.is_bool():
        return _op.const(bool(value), dtype)
    return _op.const(saturate_int(value, dtype), dtype)


def clip(x, a_min, a_max):
    """Clamp every element of ``x`` into ``[a_min, a_max]`` (the bounds converted to ``x``'s dtype first).

    Parameters
    ----------
    x : te.Tensor
    a_min, a_max : float

    Returns
    -------
    y : te.Tensor
    """
    low, high = _bound(float(a_min), x.dtype), _bound(float(a_max), x.dtype)

    def fexpr(v):
        if low is not None:
            v = _op.maximum(v, low)
        if high is not None:
            v = _op.minimum(v, high)
        return v

    return elemwise(x, fexpr, name="T_clip")


def cast_expr(v, dtype):
    """``v`` converted to ``dtype`` (``!= 0`` for bool, truncation from float to integer)."""
    dtype = _dt.normalize(dtype)
    if _dt.is_bool(dtype) and not _dt.is_bool(v.dtype):
        return _op.not_equal(v, _op.const(0, v.dtype))
    return _op.cast(v, dtype)


def cast(x, dtype):
    """``x`` converted to ``dtype``: a tensor element-wise, a scalar expression or number directly (TVM's
    ``topi.cast`` takes both).

    Parameters
    ----------
    x : te.Tensor, PrimExpr or number
    dtype : str

    Returns
    -------
    y : te.Tensor or PrimExpr
    """
    if isinstance(x, int | float):
        return _op.const(x, dtype)
    if isinstance(x, PrimExpr):
        return cast_expr(x, dtype)
    return elemwise(x, lambda v: cast_expr(v, dtype), name="T_cast")


def identity(x):
    """A copy of ``x``."""
    return elemwise(x, lambda v: v, name="T_identity")


def full(shape, dtype, fill_value):
    """A tensor of ``shape`` filled with ``fill_value`` (a number, or an expression such as ``t()`` of a 0-d tensor),
    converted to ``dtype``.

    Returns
    -------
    out : te.Tensor
    """
    if isinstance(fill_value, bool | int | float | np.generic):
        value = _bound(float(fill_value), dtype) if not _dt.is_float(dtype) else _op.const(float(fill_value), dtype)
        if value is None:
            value = _op.const(float(fill_value), dtype)
    else:
        value = cast_expr(fill_value, dtype)
    return compute(tuple(shape), lambda *i: value, name="T_full", tag=_tag.ELEMWISE)


def full_like(x, fill_value):
    """A tensor of ``x``'s shape and dtype filled with ``fill_value``."""
    return full(x.shape, x.dtype, fill_value)


def zeros(shape, dtype="float32"):
    """A tensor of zeros."""
    return full(shape, dtype, 0)


def ones(shape, dtype="float32"):
    """A tensor of ones."""
    return full(shape, dtype, 1)
