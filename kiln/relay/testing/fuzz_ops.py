"""Operator recipes of the mixed-dtype fuzzer, element-wise ones: each ``recipe(gen) -> Value or None`` picks
operands from a :class:`~kiln.relay.testing.fuzz_graph.GraphGenerator`, guards them (:mod:`.fuzz_values`), applies
one Relay operator and says what is known about the result. :data:`RECIPES` (name -> ``(weight, recipe)``) gathers
these and those of :mod:`.fuzz_ops_tensor` (reductions, data movement, neural-network operators) and
:mod:`.fuzz_ops_nn` (space and channel moves, resampling, normalization, other convolutions and poolings, random
numbers). The ``dyn.*`` operators are added to a VM graph's outputs by :mod:`.fuzz_ops_dyn`.
"""

import math

import numpy as np

from ...ir.type import TensorType
from .. import op as _op
from ..expr import const
from .fuzz_graph import accepted
from .fuzz_values import clipped, converted, dtype_range, kind, overflow_undefined, result, without_nan

_FLOAT_DOMAIN = {"log": (0.0625, math.inf), "sqrt": (0, math.inf), "rsqrt": (0.0625, math.inf),
                 "acosh": (1, math.inf), "asin": (-1, 1), "acos": (-1, 1), "atanh": (-0.75, 0.75), "exp": (-10, 10),
                 "sinh": (-8, 8), "cosh": (-8, 8), "tan": (-1.25, 1.25)}
# integer inputs compute in float64 and truncate back, so the result must fit the type (and be >= 0 if unsigned)
_INT_DOMAIN = {"log": (1, 60), "sqrt": (0, 60), "rsqrt": (1, 60), "acosh": (1, 60), "asin": (-1, 1), "acos": (-1, 1),
               "atanh": (0, 0), "exp": (-3, 3), "sinh": (-3, 3), "cosh": (-3, 3), "tan": (0, 1)}
_MATH = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "tanh": np.tanh,
         "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "erf": None, "sin": np.sin, "cos": np.cos, "tan": np.tan,
         "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
         "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh}


def typed(call, operands):
    """The result type of ``call`` (its relation applied to the operands' types)."""
    types = [TensorType(v.shape, v.dtype) for v in operands]
    return call.op.get_attr("FTypeRelation")(types, call.attrs)


def _sample(fn, lo, hi):
    """``fn`` over ``[lo, hi]`` (finite) at its ends and 63 points between: bounds of a smooth function."""
    xs = np.linspace(lo, hi, 65)
    with np.errstate(all="ignore"):
        ys = np.vectorize(math.erf)(xs) if fn is None else fn(xs)
    return float(np.nanmin(ys)), float(np.nanmax(ys))


def unary_math(gen):
    """exp, log, tanh... of a float (guarded into its domain, inexact) or an integer (through float64)."""
    name = gen.choice(_MATH)
    v = gen.operand(accepted(name))
    if kind(v.dtype) == "f":
        low, high = _FLOAT_DOMAIN.get(name, (-64, 64))
        v = clipped(v, low, min(high, 64))
        lo, hi = _sample(_MATH[name], v.lo, v.hi)
        pad = 0.01 * max(abs(lo), abs(hi)) + 0.01  # a few ulps of rounding either way
        return result(v.dtype, v.shape, getattr(_op, name)(v.expr), lo - pad, hi + pad, exact=False)
    low, high = _INT_DOMAIN.get(name, (-3, 3))
    v = clipped(v, low, high)
    with np.errstate(all="ignore"):
        outs = [math.trunc(y) for y in (_MATH[name] or np.vectorize(math.erf))(np.arange(v.lo, v.hi + 1.0))]
    return result(v.dtype, v.shape, getattr(_op, name)(v.expr), min(outs), max(outs))


def _no_undefined_overflow(v, limit):
    """``v`` clamped to ``[-limit, limit]`` if its type's overflow is undefined and it may pass that."""
    if overflow_undefined(v.dtype) and v.magnitude > limit:
        return clipped(v, -limit, limit)
    return v


def _round_bound(fn, bound):
    return fn(bound) if math.isfinite(bound) else bound


def unary_exact(gen):
    """negative, abs, sign, floor, ceil, round, trunc, relu, leaky_relu: exact on exact floats."""
    name = gen.choice(["negative", "abs", "sign", "floor", "ceil", "round", "trunc", "nn.relu", "nn.leaky_relu"])
    needs_exact = name in ("sign", "floor", "ceil", "round", "trunc")
    v = gen.operand(accepted(name), exact=needs_exact)
    if kind(v.dtype) == "f" and needs_exact and not v.exact:
        return None
    low, high = dtype_range(v.dtype)
    v = _no_undefined_overflow(v, high)  # -(-2^31) overflows
    if name in ("sign", "nn.relu") or (kind(v.dtype) == "f" and name in ("floor", "ceil", "round", "trunc")):
        v = without_nan(v)
    lo, hi, grid = v.lo, v.hi, v.grid
    if name == "negative":
        lo, hi = -v.hi, -v.lo
    elif name == "abs":
        lo, hi = (0 if v.lo < 0 < v.hi else min(abs(v.lo), abs(v.hi))), v.magnitude
    elif name == "sign":
        lo, hi, grid = -1, 1, 0
    elif name in ("floor", "ceil", "round", "trunc"):
        # a float16 cast from a wider float may hold infinities, which rounding keeps
        lo, hi, grid = _round_bound(math.floor, v.lo), _round_bound(math.ceil, v.hi), 0
    elif name == "nn.relu":
        lo, hi = max(v.lo, 0), max(v.hi, 0)
    elif name == "nn.leaky_relu":
        lo, hi, grid = min(v.lo / 4, v.lo), v.hi, v.grid + 2
        return result(v.dtype, v.shape, _op.nn.leaky_relu(v.expr, 0.25), lo, hi, v.nan, v.exact, grid)
    expr = _op.nn.relu(v.expr) if name == "nn.relu" else getattr(_op, name)(v.expr)
    return result(v.dtype, v.shape, expr, lo, hi, v.nan, v.exact, grid)


def predicate(gen):
    """isnan, isinf, isfinite, logical_not, bitwise_not."""
    name = gen.choice(["isnan", "isinf", "isfinite", "logical_not", "bitwise_not"])
    v = gen.operand(accepted(name), exact=True)
    if kind(v.dtype) == "f" and not v.exact:
        return None
    expr = getattr(_op, name)(v.expr)
    if name in ("isnan", "isinf", "isfinite"):
        return result("bool", v.shape, expr, 0, 1)
    if name == "logical_not":
        return result(v.dtype, v.shape, expr, 0, 1, grid=0)
    return result(v.dtype, v.shape, expr, *dtype_range(v.dtype))


def _arith_bounds(name, a, b):
    corners = [(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    with np.errstate(all="ignore"):
        if name == "add":
            values = [x + y for x, y in corners]
        elif name == "subtract":
            values = [x - y for x, y in corners]
        else:
            values = [0.0 if (x == 0 or y == 0) else x * y for x, y in corners]
    return min(values), max(values)


def arithmetic(gen):
    """add, subtract, multiply with the operands kept where int32/int64 cannot overflow."""
    name = gen.choice(["add", "subtract", "multiply"])
    a = gen.operand(accepted(name))
    b = gen.partner(a)
    if overflow_undefined(a.dtype):
        top = dtype_range(a.dtype)[1]
        limit = math.isqrt(top) if name == "multiply" else top // 2
        a, b = _no_undefined_overflow(a, limit), _no_undefined_overflow(b, limit)
    if kind(a.dtype) == "f" and not (a.exact and b.exact):  # keep rounded values far from overflowing
        limit = math.sqrt(dtype_range(a.dtype)[1]) / 4
        a, b = clipped(a, -limit, limit), clipped(b, -limit, limit)
    lo, hi = _arith_bounds(name, a, b)
    grid = a.grid + b.grid if name == "multiply" else max(a.grid, b.grid)
    infinite = not math.isfinite(a.magnitude) or not math.isfinite(b.magnitude)
    return result(a.dtype, a.shape, getattr(_op, name)(a.expr, b.expr), lo, hi, a.nan or b.nan or infinite,
                  a.exact and b.exact, grid, rounded=True)


def _safe_divisor(d):
    """An integer divisor other than 0 (undefined) and -1 (``MIN / -1`` overflows): those become 2."""
    bad = _op.equal(d.expr, const(np.zeros((), d.dtype), d.dtype))
    if kind(d.dtype) == "i":
        bad = _op.logical_or(bad, _op.equal(d.expr, const(np.array(-1, d.dtype), d.dtype)))
    expr = _op.where(bad, const(np.array(2, d.dtype), d.dtype), d.expr)
    return result(d.dtype, d.shape, expr, min(d.lo, 2), max(d.hi, 2))


def division(gen):
    """divide, floor_divide, floor_mod, mod, trunc_divide, trunc_mod."""
    name = gen.choice(["divide", "floor_divide", "floor_mod", "mod", "trunc_divide", "trunc_mod"])
    a = gen.operand(accepted(name), exact=name != "divide")
    b = gen.partner(a, exact=name != "divide")
    if kind(a.dtype) in "iu":
        a, b = _no_undefined_overflow(a, dtype_range(a.dtype)[1]), _safe_divisor(b)
        if name in ("floor_mod", "mod", "trunc_mod"):
            bound = min(a.magnitude, b.magnitude)
            lo, hi = (0, bound) if kind(a.dtype) == "u" else (-bound, bound)
        else:
            lo, hi = (0, a.hi) if kind(a.dtype) == "u" else (-a.magnitude, a.magnitude)
        return result(a.dtype, a.shape, getattr(_op, name)(a.expr, b.expr), lo, hi)
    if name != "divide" and not (a.exact and b.exact):
        return None
    if not b.exact:  # a rounded divisor near 0 turns a last-bit difference into any size
        b = clipped(b, 0.5, 64)
    zero = b.lo <= 0 <= b.hi
    if name == "divide":
        top = math.inf if zero else a.magnitude / min(abs(b.lo), abs(b.hi))
        return result(a.dtype, a.shape, _op.divide(a.expr, b.expr), -top, top, a.nan or b.nan or zero,
                      a.exact and b.exact and a.dtype == "float16", rounded=True)
    integral = name in ("floor_divide", "trunc_divide")
    top = (math.inf if zero else a.magnitude + 1) if integral else a.magnitude + b.magnitude
    return result(a.dtype, a.shape, getattr(_op, name)(a.expr, b.expr), -top, top, True, a.exact and b.exact,
                  0 if integral else max(a.grid, b.grid))


def power(gen):
    """``power`` of small bases and exponents (an integer result must fit; float bases stay positive)."""
    a = gen.operand(accepted("power"))
    b = gen.partner(a)
    if kind(a.dtype) in "iu":
        a, b = clipped(a, -3, 3), clipped(b, 0, 3)
        lo, hi = (-27, 27) if kind(a.dtype) == "i" else (0, 27)
        return result(a.dtype, a.shape, _op.power(a.expr, b.expr), lo, hi)
    a, b = clipped(a, 0.25, 4), clipped(b, -3, 3)
    return result(a.dtype, a.shape, _op.power(a.expr, b.expr), 0, 65, exact=False)


def compare_or_logic(gen):
    """Comparisons (bool results) and logical and/or/xor (0/1 in the operands' dtype): exact operands only."""
    name = gen.choice(["equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
                       "logical_or", "logical_xor", "maximum", "minimum"])
    a = gen.operand(accepted(name), exact=True)
    b = gen.partner(a, exact=True)
    if not (a.exact and b.exact):
        return None
    expr = getattr(_op, name)(a.expr, b.expr)
    if name in ("maximum", "minimum"):
        a, b = without_nan(a), without_nan(b)
        expr = getattr(_op, name)(a.expr, b.expr)
        return result(a.dtype, a.shape, expr, min(a.lo, b.lo), max(a.hi, b.hi), grid=max(a.grid, b.grid))
    if name.startswith("logical"):
        return result(a.dtype, a.shape, expr, 0, 1)
    return result("bool", a.shape, expr, 0, 1)


def bitwise(gen):
    """bitwise and/or/xor and shifts by an amount inside the type's width."""
    name = gen.choice(["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"])
    a = gen.operand(accepted(name))
    b = gen.partner(a)
    if name.endswith("shift"):
        b = clipped(b, 0, np.dtype(a.dtype).itemsize * 8 - 1)
    lo, hi = dtype_range(a.dtype)
    if name == "right_shift":
        lo, hi = min(a.lo, 0), max(a.hi, 0)
    return result(a.dtype, a.shape, getattr(_op, name)(a.expr, b.expr), lo, hi)


def cast(gen):
    """``cast`` to any dtype (guarded by :func:`~kiln.relay.testing.fuzz_values.converted`)."""
    v = gen.operand(accepted("cast"))
    return converted(v, gen.dtype(accepted("cast")))


def clip(gen):
    """``clip`` between integer bounds inside the value's range."""
    v = without_nan(gen.operand(accepted("clip")))
    low, high = max(v.lo, -100), min(v.hi, 100)
    lo = float(np.floor(gen.rng.uniform(low, max(low, high))))
    return clipped(v, lo, lo + float(gen.rng.integers(0, 8)))


def where(gen):
    """``where`` of a bool (or integer) condition broadcast against two values of one dtype."""
    x = gen.operand(accepted("where", 1))
    y = gen.partner(x)
    condition = gen.partner(x, dtypes=accepted("where", 0))
    expr = _op.where(condition.expr, x.expr, y.expr)
    return result(x.dtype, x.shape, expr, min(x.lo, y.lo), max(x.hi, y.hi), x.nan or y.nan, x.exact and y.exact,
                  max(x.grid, y.grid))


def initializer(gen):
    """zeros, ones and full in any dtype."""
    name = gen.choice(["zeros", "ones", "full"])
    dtype = gen.dtype(accepted("cast"))
    shape = gen.shape()
    if name == "full":
        fill = gen.operand(accepted("full"), shape=(), exact=True)
        fill = converted(fill, dtype)
        if fill is None:
            return None
        return fill.with_expr(_op.full(fill.expr, shape, dtype), shape=shape)
    return result(dtype, shape, getattr(_op, name)(shape, dtype), int(name == "ones"), int(name == "ones"))


def _all_recipes():
    from . import fuzz_ops_nn, fuzz_ops_tensor

    return {
        "unary_math": (3, unary_math), "unary_exact": (3, unary_exact), "predicate": (1, predicate),
        "arithmetic": (5, arithmetic), "division": (3, division), "power": (1, power),
        "compare_or_logic": (3, compare_or_logic), "bitwise": (2, bitwise), "cast": (4, cast), "clip": (1, clip),
        "where": (2, where), "initializer": (0.5, initializer), **fuzz_ops_tensor.RECIPES, **fuzz_ops_nn.RECIPES,
    }


RECIPES = _all_recipes()
"""Recipe name -> ``(weight, recipe)``."""
