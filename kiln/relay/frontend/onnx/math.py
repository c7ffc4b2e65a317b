"""Converters of element-wise ONNX operators: arithmetic, comparisons, logic, unary math and activations.

Most map one to one onto a Relay operator. Activations Relay lacks are written with the operators it has (Elu as
``where(x > 0, x, alpha * (exp(x) - 1))``, Softplus as ``relu(x) + log(1 + exp(-|x|))`` which cannot overflow,
Gelu with erf or tanh). ONNX ``Round`` rounds halves to even while Relay's ``round`` rounds them away from zero, so
it is built from ``floor`` and the distance to it.
"""

import math

import numpy as np

from ....error import KilnError
from ... import op as _op
from ...op import nn as _nn
from .common import OnnxOpConverter, const, register


def _binary(build):
    """A converter calling ``build(lhs, rhs, ctx)``."""

    class Binary(OnnxOpConverter):
        """Broadcasting binary operator (opset < 7: ``broadcast``/``axis`` attributes align the right operand)."""

        @classmethod
        def _impl_v1(cls, inputs, attr, ctx):
            lhs, rhs = inputs
            if attr.get("broadcast", 0) and "axis" in attr:
                axis = ctx.axis(attr["axis"], ctx.ndim(lhs))
                trailing = ctx.ndim(lhs) - axis - ctx.ndim(rhs)
                if trailing > 0:
                    rhs = _op.reshape(rhs, ctx.shape(rhs) + (1,) * trailing)
            return build(lhs, rhs, ctx)

        @classmethod
        def _impl_v7(cls, inputs, attr, ctx):
            return build(*inputs, ctx)

    return Binary


def _divide(lhs, rhs, ctx):
    """ONNX ``Div``: true division of floats; of integers, division truncating toward zero (``trunc_divide``)."""
    return (_op.divide if ctx.dtype(lhs).startswith("float") else _op.trunc_divide)(lhs, rhs)


register("Div")(_binary(_divide))
for _name, _build in [("Add", _op.add), ("Sub", _op.subtract), ("Mul", _op.multiply),
                      ("Equal", _op.equal), ("Less", _op.less), ("Greater", _op.greater),
                      ("LessOrEqual", _op.less_equal), ("GreaterOrEqual", _op.greater_equal),
                      ("And", _op.logical_and), ("Or", _op.logical_or), ("Xor", _op.logical_xor),
                      ("BitwiseAnd", _op.bitwise_and), ("BitwiseOr", _op.bitwise_or),
                      ("BitwiseXor", _op.bitwise_xor)]:
    register(_name)(_binary(lambda lhs, rhs, ctx, build=_build: build(lhs, rhs)))


@register("Pow")
class Pow(OnnxOpConverter):
    """``x ** y``; the exponent may have another dtype than the base (the result has the base's)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x, y = inputs
        xt, yt = ctx.dtype(x), ctx.dtype(y)
        if xt == yt:
            return _op.power(x, y)
        if xt.startswith("float"):
            return _op.power(x, _op.cast(y, xt))
        return _op.cast(_op.power(_op.cast(x, yt if yt.startswith("float") else "float64"),
                                  _op.cast(y, yt if yt.startswith("float") else "float64")), xt)


@register("Mod")
class Mod(OnnxOpConverter):
    """``fmod=1``: remainder with the dividend's sign (C ``fmod``); else with the divisor's (Python ``%``)."""

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        if not attr.get("fmod", 0):
            return _op.floor_mod(*inputs)
        # C's fmod on floats (exact); on integers that is the truncating remainder, TVM's trunc_mod
        return (_op.mod if ctx.dtype(inputs[0]).startswith("float") else _op.trunc_mod)(*inputs)


@register("BitShift")
class BitShift(OnnxOpConverter):
    """Shift by the second operand, ``direction`` LEFT or RIGHT."""

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        direction = attr.get("direction", "")
        if direction not in ("LEFT", "RIGHT"):
            raise ctx.error(f"direction must be LEFT or RIGHT, got {direction!r}")
        return (_op.left_shift if direction == "LEFT" else _op.right_shift)(*inputs)


def _variadic(build, mean=False):
    class Variadic(OnnxOpConverter):
        """Fold a broadcasting binary operator over all inputs."""

        @classmethod
        def _impl_v1(cls, inputs, attr, ctx):
            out = inputs[0]
            for other in inputs[1:]:
                out = build(out, other)
            if mean:
                out = _op.divide(out, const(len(inputs), ctx.dtype(inputs[0])))
            return out

    return Variadic


register("Sum")(_variadic(_op.add))
register("Mean")(_variadic(_op.add, mean=True))
register("Max")(_variadic(_op.maximum))
register("Min")(_variadic(_op.minimum))


def _unary(build):
    class Unary(OnnxOpConverter):
        """Element-wise unary operator."""

        @classmethod
        def _impl_v1(cls, inputs, attr, ctx):
            return build(inputs[0])

    return Unary


for _name, _build in [("Abs", _op.abs), ("Neg", _op.negative), ("Exp", _op.exp), ("Log", _op.log),
                      ("Sqrt", _op.sqrt), ("Floor", _op.floor), ("Ceil", _op.ceil), ("Sign", _op.sign),
                      ("Sin", _op.sin), ("Cos", _op.cos), ("Tan", _op.tan), ("Asin", _op.asin), ("Acos", _op.acos),
                      ("Atan", _op.atan), ("Sinh", _op.sinh), ("Cosh", _op.cosh), ("Asinh", _op.asinh),
                      ("Acosh", _op.acosh), ("Atanh", _op.atanh), ("Erf", _op.erf), ("Not", _op.logical_not),
                      ("BitwiseNot", _op.bitwise_not), ("IsNaN", _op.isnan), ("Relu", _nn.relu),
                      ("Sigmoid", _op.sigmoid), ("Tanh", _op.tanh), ("Identity", lambda x: x)]:
    register(_name)(_unary(_build))


def _scalar(value, like, ctx):
    return const(value, ctx.dtype(like))


@register("Reciprocal")
class Reciprocal(OnnxOpConverter):
    """``1 / x``."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return _op.divide(_scalar(1, inputs[0], ctx), inputs[0])


def round_half_to_even(x, ctx):
    """Round to nearest with halves to even: ``floor(x)``, plus one where the fraction is above one half, or
    exactly one half and ``floor(x)`` is odd."""
    half, one, two = (_scalar(v, x, ctx) for v in (0.5, 1, 2))
    low = _op.floor(x)
    frac = _op.subtract(x, low)
    odd = _op.not_equal(_op.floor_mod(low, two), _scalar(0, x, ctx))
    up = _op.logical_or(_op.greater(frac, half), _op.logical_and(_op.equal(frac, half), odd))
    return _op.where(up, _op.add(low, one), low)


@register("Round")
class Round(OnnxOpConverter):
    """Round to nearest, halves to even (Relay's ``round`` takes halves away from zero)."""

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        x = inputs[0]
        return round_half_to_even(x, ctx) if ctx.dtype(x).startswith("float") else x


@register("IsInf")
class IsInf(OnnxOpConverter):
    """``isinf``, restricted to one sign by ``detect_positive``/``detect_negative``."""

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        x = inputs[0]
        pos, neg = attr.get("detect_positive", 1), attr.get("detect_negative", 1)
        inf = _op.isinf(x)
        if pos and neg:
            return inf
        zero = _scalar(0, x, ctx)
        if pos:
            return _op.logical_and(inf, _op.greater(x, zero))
        if neg:
            return _op.logical_and(inf, _op.less(x, zero))
        return _op.logical_and(inf, _op.logical_not(inf))


@register("LeakyRelu")
class LeakyRelu(OnnxOpConverter):
    """``nn.leaky_relu`` (alpha 0.01)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return _nn.leaky_relu(inputs[0], attr.get("alpha", 0.01))


@register("PRelu")
class PRelu(OnnxOpConverter):
    """``x`` where positive, ``slope * x`` elsewhere; a 1-D slope of C values applies along axis 1 (opset 6)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x, slope = inputs
        xs, ss = ctx.shape(x), ctx.shape(slope)
        if len(ss) == 1 and len(xs) > 2 and ss[0] == xs[1] and ss[0] != xs[-1]:
            slope = _op.reshape(slope, (ss[0],) + (1,) * (len(xs) - 2))
        return _op.where(_op.less(x, _scalar(0, x, ctx)), _op.multiply(slope, x), x)


@register("Elu")
class Elu(OnnxOpConverter):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        neg = _op.multiply(_scalar(attr.get("alpha", 1.0), x, ctx), _op.subtract(_op.exp(x), _scalar(1, x, ctx)))
        return _op.where(_op.greater(x, _scalar(0, x, ctx)), x, neg)


@register("Selu")
class Selu(OnnxOpConverter):
    """``gamma * (x if x > 0 else alpha * (exp(x) - 1))``."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        alpha, gamma = attr.get("alpha", 1.67326319217681884765625), attr.get("gamma", 1.05070102214813232421875)
        neg = _op.multiply(_scalar(alpha, x, ctx), _op.subtract(_op.exp(x), _scalar(1, x, ctx)))
        return _op.multiply(_scalar(gamma, x, ctx), _op.where(_op.greater(x, _scalar(0, x, ctx)), x, neg))


@register("Celu")
class Celu(OnnxOpConverter):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    @classmethod
    def _impl_v12(cls, inputs, attr, ctx):
        x = inputs[0]
        alpha = _scalar(attr.get("alpha", 1.0), x, ctx)
        zero = _scalar(0, x, ctx)
        neg = _op.multiply(alpha, _op.subtract(_op.exp(_op.divide(x, alpha)), _scalar(1, x, ctx)))
        return _op.add(_op.maximum(zero, x), _op.minimum(zero, neg))


@register("ThresholdedRelu")
class ThresholdedRelu(OnnxOpConverter):
    """``x`` where ``x > alpha`` (1.0), else 0."""

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        x = inputs[0]
        return _op.where(_op.greater(x, _scalar(attr.get("alpha", 1.0), x, ctx)), x, _scalar(0, x, ctx))


def softplus(x, ctx):
    """``log(1 + exp(x))`` as ``relu(x) + log(1 + exp(-|x|))``, which never overflows."""
    return _op.add(_nn.relu(x), _op.log(_op.add(_scalar(1, x, ctx), _op.exp(_op.negative(_op.abs(x))))))


@register("Softplus")
class Softplus(OnnxOpConverter):
    """``log(1 + exp(x))``."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return softplus(inputs[0], ctx)


@register("Softsign")
class Softsign(OnnxOpConverter):
    """``x / (1 + |x|)``."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        return _op.divide(x, _op.add(_scalar(1, x, ctx), _op.abs(x)))


@register("Mish")
class Mish(OnnxOpConverter):
    """``x * tanh(softplus(x))``."""

    @classmethod
    def _impl_v18(cls, inputs, attr, ctx):
        return _op.multiply(inputs[0], _op.tanh(softplus(inputs[0], ctx)))


@register("HardSigmoid")
class HardSigmoid(OnnxOpConverter):
    """``clip(alpha * x + beta, 0, 1)`` (alpha 0.2, beta 0.5)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        scaled = _op.add(_op.multiply(_scalar(attr.get("alpha", 0.2), x, ctx), x),
                         _scalar(attr.get("beta", 0.5), x, ctx))
        return _op.clip(scaled, 0.0, 1.0)


@register("HardSwish")
class HardSwish(OnnxOpConverter):
    """``x * clip(x / 6 + 1 / 2, 0, 1)``."""

    @classmethod
    def _impl_v14(cls, inputs, attr, ctx):
        x = inputs[0]
        gate = _op.clip(_op.add(_op.multiply(_scalar(1 / 6, x, ctx), x), _scalar(0.5, x, ctx)), 0.0, 1.0)
        return _op.multiply(x, gate)


@register("Gelu")
class Gelu(OnnxOpConverter):
    """``0.5 x (1 + erf(x / sqrt 2))``, or the tanh approximation when ``approximate="tanh"``."""

    @classmethod
    def _impl_v20(cls, inputs, attr, ctx):
        x = inputs[0]
        half, one = _scalar(0.5, x, ctx), _scalar(1, x, ctx)
        if attr.get("approximate", "none") == "tanh":
            cube = _op.multiply(_scalar(0.044715, x, ctx), _op.multiply(x, _op.multiply(x, x)))
            inner = _op.multiply(_scalar(math.sqrt(2 / math.pi), x, ctx), _op.add(x, cube))
            return _op.multiply(_op.multiply(half, x), _op.add(one, _op.tanh(inner)))
        erf = _op.erf(_op.multiply(x, _scalar(1 / math.sqrt(2), x, ctx)))
        return _op.multiply(_op.multiply(half, x), _op.add(one, erf))


@register("Shrink")
class Shrink(OnnxOpConverter):
    """``x + bias`` below ``-lambd``, ``x - bias`` above ``lambd``, 0 between."""

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        x = inputs[0]
        bias, lambd = _scalar(attr.get("bias", 0.0), x, ctx), attr.get("lambd", 0.5)
        low = _op.less(x, _scalar(-lambd, x, ctx))
        high = _op.greater(x, _scalar(lambd, x, ctx))
        return _op.where(low, _op.add(x, bias), _op.where(high, _op.subtract(x, bias), _scalar(0, x, ctx)))


@register("Clip")
class Clip(OnnxOpConverter):
    """Clamp into ``[min, max]`` (attributes before opset 11, optional inputs after; non-constant bounds use
    maximum/minimum, and a minimum above the maximum yields the maximum, as ONNX specifies)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return cls._clip(inputs[0], attr.get("min", -np.inf), attr.get("max", np.inf), ctx)

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        x = inputs[0]
        bounds = []
        for index, default in ((1, -np.inf), (2, np.inf)):
            bound = inputs[index] if index < len(inputs) else None
            if bound is not None:
                try:
                    bound = float(ctx.value(bound))
                except KilnError:  # a bound computed at run time: keep it as an expression
                    pass
            bounds.append(default if bound is None else bound)
        low, high = bounds
        if isinstance(low, float) and isinstance(high, float):
            return cls._clip(x, low, high, ctx)
        out = x if isinstance(low, float) and low == -np.inf else _op.maximum(x, cls._as_expr(low, x, ctx))
        return out if isinstance(high, float) and high == np.inf else _op.minimum(out, cls._as_expr(high, x, ctx))

    @staticmethod
    def _as_expr(bound, x, ctx):
        return _scalar(bound, x, ctx) if isinstance(bound, float) else bound

    @staticmethod
    def _clip(x, low, high, ctx):
        if low > high:
            return _op.minimum(_op.maximum(x, _scalar(low, x, ctx)), _scalar(high, x, ctx))
        return _op.clip(x, low, high)
