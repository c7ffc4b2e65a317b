"""Converters of ONNX's random-number operators onto ``relay.random``: ``RandomUniform``, ``RandomNormal``, their
``*Like`` forms, ``Bernoulli`` and ``Multinomial``.

Each node gets its own Threefry key from its ``seed`` attribute (an integer-valued float in ONNX); without one, a
seed is drawn from numpy's global generator at conversion time, as TVM does, so two conversions of a seedless model
differ. With the same seed, kiln's numbers are TVM's. ``Bernoulli`` is ``uniform < p``. ``Multinomial`` takes
unnormalized log-probabilities, as ONNX defines it: kiln draws with weights ``exp(x - max(x))`` (TVM passes the
logarithms as weights, which ONNX Runtime does not).
"""

import numpy as np

from ....error import OpAttributeInvalid, OpNotImplemented
from ... import op as _op
from ...expr import TupleWrapper
from ...op import random as _random
from .common import OnnxOpConverter, onnx_dtype, register

_FLOATS = ("float32", "float64")


def _key(attr, ctx):
    """The Threefry key of the node's ``seed`` (a fresh seed when it has none)."""
    seed = attr.get("seed")
    seed = np.random.randint(1e6) if seed is None else seed
    if seed != int(seed) or int(seed) < 0:
        raise ctx.error(f"seed {seed!r} must be a whole number >= 0", OpAttributeInvalid)
    return _random.threefry_key(int(seed))


def _float_dtype(dtype, ctx, what="dtype"):
    if dtype not in _FLOATS:
        raise ctx.error(f"{what} {dtype}: only float32 and float64 random numbers are generated", OpNotImplemented)
    return dtype


def _values(call):
    return TupleWrapper(call, 2)[1]


@register("RandomUniform")
class RandomUniform(OnnxOpConverter):
    """Numbers uniform on ``[low, high)`` of the ``shape`` attribute."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        dtype = _float_dtype(onnx_dtype(attr.get("dtype", 1)), ctx)
        return _values(_random.uniform(_key(attr, ctx), tuple(attr["shape"]), dtype, float(attr.get("low", 0.0)),
                                       float(attr.get("high", 1.0))))


@register("RandomUniformLike")
class RandomUniformLike(OnnxOpConverter):
    """Numbers uniform on ``[low, high)`` of the input's shape (and dtype, unless ``dtype`` is given)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        dtype = onnx_dtype(attr["dtype"]) if "dtype" in attr else ctx.dtype(inputs[0])
        return _values(_random.uniform(_key(attr, ctx), ctx.shape(inputs[0]), _float_dtype(dtype, ctx),
                                       float(attr.get("low", 0.0)), float(attr.get("high", 1.0))))


@register("RandomNormal")
class RandomNormal(OnnxOpConverter):
    """Normally distributed numbers of the ``shape`` attribute."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        dtype = _float_dtype(onnx_dtype(attr.get("dtype", 1)), ctx)
        return _values(_random.normal(_key(attr, ctx), tuple(attr["shape"]), dtype, float(attr.get("mean", 0.0)),
                                      float(attr.get("scale", 1.0))))


@register("RandomNormalLike")
class RandomNormalLike(OnnxOpConverter):
    """Normally distributed numbers of the input's shape (and dtype, unless ``dtype`` is given)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        dtype = onnx_dtype(attr["dtype"]) if "dtype" in attr else ctx.dtype(inputs[0])
        return _values(_random.normal(_key(attr, ctx), ctx.shape(inputs[0]), _float_dtype(dtype, ctx),
                                      float(attr.get("mean", 0.0)), float(attr.get("scale", 1.0))))


@register("Bernoulli")
class Bernoulli(OnnxOpConverter):
    """1 with the probability the input gives, else 0: ``uniform < p``, in ``dtype`` (default the input's)."""

    @classmethod
    def _impl_v15(cls, inputs, attr, ctx):
        in_dtype = _float_dtype(ctx.dtype(inputs[0]), ctx, "input dtype")
        out_dtype = onnx_dtype(attr["dtype"]) if "dtype" in attr else in_dtype
        uniform = _values(_random.uniform(_key(attr, ctx), ctx.shape(inputs[0]), in_dtype))
        return _op.cast(_op.less(uniform, inputs[0]), out_dtype)


@register("Multinomial")
class Multinomial(OnnxOpConverter):
    """``sample_size`` class indices per row of unnormalized log-probabilities ``(batch, classes)``."""

    @classmethod
    def _impl_v7(cls, inputs, attr, ctx):
        logits = inputs[0]  # ONNX says (batch_size, class_size); like TVM, kiln takes any rank (draws per row)
        if ctx.ndim(logits) < 1:
            raise ctx.error("input must have a class axis, got a scalar")
        weights = _op.exp(_op.subtract(logits, _op.max(logits, axis=-1, keepdims=True)))
        draws = _values(_random.multinomial(_key(attr, ctx), weights, int(attr.get("sample_size", 1))))
        out_dtype = onnx_dtype(attr.get("dtype", 6))  # ONNX's default is int32
        if out_dtype not in ("int32", "int64"):
            raise ctx.error(f"dtype {out_dtype}: the indices are int32 or int64", OpAttributeInvalid)
        return _op.cast(draws, out_dtype)
