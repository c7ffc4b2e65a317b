"""Converters of ONNX normalizations and softmax-like operators: BatchNormalization, InstanceNormalization,
LayerNormalization, LRN, MeanVarianceNormalization, LpNormalization, Softmax, LogSoftmax, Hardmax, Dropout.

Before opset 13 Softmax, LogSoftmax and Hardmax see the input as a matrix: the axes before ``axis`` are the rows
and the rest the columns (the input is flattened to 2-D, normalized along axis 1 and reshaped back); from opset 13
they work along the one ``axis``. Instance and layer normalization are written with reductions
(``(x - mean) / sqrt(var + eps)``) unless ``nn.layer_norm`` fits exactly (normalizing the last axis only).
"""

import math

from ....error import OpNotImplemented
from ... import op as _op
from ...op import nn as _nn
from .common import OnnxOpConverter, const, register


@register("BatchNormalization")
class BatchNormalization(OnnxOpConverter):
    """Inference batch normalization over axis 1 (the training outputs are not supported)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        if attr.get("training_mode", 0):
            raise ctx.error("training_mode=1 is not supported (kiln converts inference graphs)", OpNotImplemented)
        x, scale, bias, mean, var = inputs[:5]
        return _nn.batch_norm(x, scale, bias, mean, var, axis=1, epsilon=attr.get("epsilon", 1e-5))[0]


def _normalize(x, axes, epsilon, ctx):
    """``(x - mean) / sqrt(var + epsilon)`` over ``axes``; returns (normalized, mean, inverse std)."""
    dtype = ctx.dtype(x)
    mean = _op.mean(x, axes, keepdims=True)
    centered = _op.subtract(x, mean)
    var = _op.mean(_op.multiply(centered, centered), axes, keepdims=True)
    inv_std = _op.rsqrt(_op.add(var, const(epsilon, dtype)))
    return _op.multiply(centered, inv_std), mean, inv_std


@register("InstanceNormalization")
class InstanceNormalization(OnnxOpConverter):
    """Normalize each (sample, channel) plane, then scale and shift per channel."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x, scale, bias = inputs
        rank = ctx.ndim(x)
        out, _, _ = _normalize(x, list(range(2, rank)), attr.get("epsilon", 1e-5), ctx)
        channel = (ctx.shape(x)[1],) + (1,) * (rank - 2)
        return _op.add(_op.multiply(out, _op.reshape(scale, channel)), _op.reshape(bias, channel))


@register("LayerNormalization")
class LayerNormalization(OnnxOpConverter):
    """Normalize over the axes from ``axis`` on, then scale (and shift); optional Mean and InvStdDev outputs."""

    @classmethod
    def _impl_v17(cls, inputs, attr, ctx):
        x, scale = inputs[0], inputs[1]
        bias = inputs[2] if len(inputs) > 2 else None
        shape = ctx.shape(x)
        axis = ctx.axis(attr.get("axis", -1), len(shape))
        eps = attr.get("epsilon", 1e-5)
        extra = [o for o in ctx.node.output[1:] if o]
        fits = axis == len(shape) - 1 and ctx.shape(scale) == shape[-1:] and (
            bias is None or ctx.shape(bias) == shape[-1:])
        if fits and not extra:
            beta = bias if bias is not None else _op.zeros((shape[-1],), ctx.dtype(x))
            return _nn.layer_norm(x, scale, beta, axis=-1, epsilon=eps)
        out, mean, inv_std = _normalize(x, list(range(axis, len(shape))), eps, ctx)
        out = _op.multiply(out, scale)
        if bias is not None:
            out = _op.add(out, bias)
        return [out, mean, inv_std]


@register("LRN")
class LRN(OnnxOpConverter):
    """Local response normalization across channels: ``nn.lrn`` for odd ``size``; an even window is not centred
    (ONNX puts the extra channel after), so it is summed with an average pool."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        size, alpha = attr["size"], attr.get("alpha", 1e-4)
        beta, bias = attr.get("beta", 0.75), attr.get("bias", 1.0)
        if size % 2:
            return _nn.lrn(x, size, axis=1, bias=bias, alpha=alpha, beta=beta)
        shape = ctx.shape(x)
        dtype = ctx.dtype(x)
        rest = math.prod(shape[2:])
        squares = _op.reshape(_op.multiply(x, x), (shape[0], 1, shape[1], rest))
        before = (size - 1) // 2
        window = _nn.avg_pool2d(squares, (size, 1), padding=(before, 0, size - 1 - before, 0), count_include_pad=True)
        total = _op.reshape(_op.multiply(window, const(size, dtype)), shape)
        scaled = _op.add(const(bias, dtype), _op.multiply(const(alpha / size, dtype), total))
        return _op.divide(x, _op.power(scaled, const(beta, dtype)))


@register("MeanVarianceNormalization")
class MeanVarianceNormalization(OnnxOpConverter):
    """``(x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)`` over ``axes`` (ONNX's function body)."""

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        x = inputs[0]
        axes = list(attr.get("axes", [0, 2, 3]))
        dtype = ctx.dtype(x)
        mean = _op.mean(x, axes, keepdims=True)
        var = _op.subtract(_op.mean(_op.multiply(x, x), axes, keepdims=True), _op.multiply(mean, mean))
        return _op.divide(_op.subtract(x, mean), _op.add(_op.sqrt(var), const(1e-9, dtype)))


@register("LpNormalization")
class LpNormalization(OnnxOpConverter):
    """``x / ||x||_p`` along ``axis`` (p is 1 or 2; zero vectors stay zero)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        axis, p = attr.get("axis", -1), attr.get("p", 2)
        if p == 1:
            norm = _op.sum(_op.abs(x), axis, keepdims=True)
        elif p == 2:
            norm = _op.sqrt(_op.sum(_op.multiply(x, x), axis, keepdims=True))
        else:
            raise ctx.error(f"p={p} is not supported (ONNX allows 1 and 2)")
        # a zero norm means a zero vector, which stays zero (ONNX defines 0 / 0 as 0 here)
        dtype = ctx.dtype(x)
        safe = _op.where(_op.equal(norm, const(0, dtype)), const(1, dtype), norm)
        return _op.divide(x, safe)


class _Softmax(OnnxOpConverter):
    kind = "softmax"

    @classmethod
    def _apply(cls, x, axis, ctx):
        if cls.kind == "softmax":
            return _nn.softmax(x, axis)
        if cls.kind == "log_softmax":
            return _nn.log_softmax(x, axis)
        depth = ctx.shape(x)[axis]
        index = _op.argmax(x, axis=axis)
        dtype = ctx.dtype(x)
        return _op.one_hot(index, const(1, dtype), const(0, dtype), depth, axis, dtype)

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        shape = ctx.shape(x)
        axis = ctx.axis(attr.get("axis", 1), max(len(shape), 1))
        if axis == len(shape) - 1:
            return cls._apply(x, -1, ctx)
        flat = _op.reshape(x, (math.prod(shape[:axis]), math.prod(shape[axis:])))
        return _op.reshape(cls._apply(flat, 1, ctx), shape)

    @classmethod
    def _impl_v13(cls, inputs, attr, ctx):
        x = inputs[0]
        return cls._apply(x, ctx.axis(attr.get("axis", -1), ctx.ndim(x)), ctx)


@register("Softmax")
class Softmax(_Softmax):
    """Softmax (matrix semantics before opset 13, one axis from 13)."""

    kind = "softmax"


@register("LogSoftmax")
class LogSoftmax(_Softmax):
    """Log-softmax (matrix semantics before opset 13, one axis from 13)."""

    kind = "log_softmax"


@register("Hardmax")
class Hardmax(_Softmax):
    """1 at the first maximum along the axis, 0 elsewhere."""

    kind = "hardmax"


@register("Dropout")
class Dropout(OnnxOpConverter):
    """Inference dropout: the identity, and an all-true mask when the graph asks for it (``training_mode`` must be
    false: random masks are not supported)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        training = ctx.optional_value(inputs, 2, "training_mode")
        if (training is not None and bool(training.reshape(-1)[0])) or attr.get("is_test", 1) == 0:
            ratio = ctx.optional_value(inputs, 1, "ratio")
            if ratio is None or float(ratio.reshape(-1)[0]) != 0.0:
                raise ctx.error("training-mode dropout (random masks) is not supported", OpNotImplemented)
        outputs = [x]
        if len(ctx.node.output) > 1 and ctx.node.output[1]:
            mask_dtype = "bool" if ctx.opset >= 10 else ctx.dtype(x)
            outputs.append(_op.ones(ctx.shape(x), mask_dtype))
        return outputs
