"""Converters of ONNX signal and loss operators: ``DFT`` and ``STFT`` (Relay's ``dft`` and ``stft``),
``NegativeLogLikelihoodLoss`` (``nn.nll_loss``) and ``MaxRoiPool`` (``vision.roi_pool``).

``DFT`` moves the transformed axis last, splits the trailing real/imaginary axis, and takes the first ``n // 2 + 1``
bins when ``onesided``. ``STFT`` of a real signal is Relay's ``stft`` with ``n_fft = win_length = frame_length``,
its frequency and frame axes swapped to ONNX's order.
"""

import numpy as np

from ....error import OpNotImplemented
from ... import op as _op
from ...op import nn as _nn
from . import dynamic
from .common import OnnxOpConverter, const, register


@register("DFT")
class DFT(OnnxOpConverter):
    """The discrete Fourier transform along ``axis`` of a real (trailing 1) or complex (trailing 2) signal."""

    @classmethod
    def _impl_v17(cls, inputs, attr, ctx):
        return cls._convert(inputs[0], inputs[1] if len(inputs) > 1 else None, int(attr.get("axis", 1)), attr, ctx)

    @classmethod
    def _impl_v20(cls, inputs, attr, ctx):
        length = inputs[1] if len(inputs) > 1 else None
        if len(inputs) > 2 and inputs[2] is not None and ctx.value_or_none(inputs[2], "axis") is None:
            # known only at run time: one transform per axis (the last holds the real and imaginary parts)
            cases = dynamic.axis_choices(inputs[2], ctx.ndim(inputs[0]), ctx)[:-1]
            return dynamic.choose([(cond, cls._convert(inputs[0], length, a, attr, ctx)) for a, cond in cases], ctx,
                                  "axis")
        axis = ctx.optional_value(inputs, 2, "axis", np.array(-2, "int64"))
        return cls._convert(inputs[0], length, int(axis), attr, ctx)

    @classmethod
    def _convert(cls, x, dft_length, axis, attr, ctx):
        shape = ctx.shape(x)
        ndim = len(shape)
        axis = axis % ndim
        if attr.get("inverse", 0) and attr.get("onesided", 0):
            raise ctx.error("an inverse DFT of a onesided spectrum is not supported", OpNotImplemented)
        if dft_length is not None and int(ctx.value(dft_length)) != shape[axis]:
            raise ctx.error("DFT with a dft_length other than the signal's length is not supported", OpNotImplemented)
        perm = [a for a in range(ndim - 1) if a != axis] + [axis, ndim - 1]
        moved = _op.transpose(x, perm)
        re = _op.take(moved, const(0, "int32"), axis=ndim - 1)
        im = _op.take(moved, const(1, "int32"), axis=ndim - 1) if shape[-1] == 2 else _op.zeros_like(re)
        out = _op.dft(re, im, bool(attr.get("inverse", 0)))
        re, im = out[0], out[1]
        if attr.get("onesided", 0):
            n = shape[axis]
            re = _op.strided_slice(re, [0], [n // 2 + 1], axes=[ndim - 2])
            im = _op.strided_slice(im, [0], [n // 2 + 1], axes=[ndim - 2])
        stacked = _op.stack([re, im], ndim - 1)
        inverse_perm = [perm.index(a) for a in range(ndim)]
        return _op.transpose(stacked, inverse_perm)


@register("STFT")
class STFT(OnnxOpConverter):
    """The short-time Fourier transform of a real signal ``(batch, length, 1)``."""

    @classmethod
    def _impl_v17(cls, inputs, attr, ctx):
        signal = inputs[0]
        shape = ctx.shape(signal)
        if len(shape) != 3 or shape[-1] != 1:
            raise ctx.error("STFT of a complex signal is not supported (real signals: (batch, length, 1))",
                            OpNotImplemented)
        step = int(ctx.value(inputs[1]))
        window = inputs[2] if len(inputs) > 2 and inputs[2] is not None else None
        if len(inputs) > 3 and inputs[3] is not None:
            length = int(ctx.value(inputs[3]))
        elif window is not None:
            length = ctx.shape(window)[0]
        else:
            raise ctx.error("STFT needs a window or a frame_length")
        dtype = ctx.dtype(signal)
        if window is None:
            window = const(np.ones(length, dtype), dtype)
        data = _op.reshape(signal, shape[:2])
        out = _op.stft(data, length, step, length, window, False, bool(attr.get("onesided", 1)))
        return _op.transpose(out, (0, 2, 1, 3))


@register("NegativeLogLikelihoodLoss")
class NegativeLogLikelihoodLoss(OnnxOpConverter):
    """``nn.nll_loss`` (weights of one when the model gives none; no class is ignored without ``ignore_index``)."""

    @classmethod
    def _impl_v12(cls, inputs, attr, ctx):
        x, target = inputs[0], inputs[1]
        dtype = ctx.dtype(x)
        classes = ctx.shape(x)[1]
        weight = inputs[2] if len(inputs) > 2 and inputs[2] is not None else const(np.ones(classes, dtype), dtype)
        ignore = attr.get("ignore_index")
        if ignore is None:
            ignore = -(2**31)  # no class index is this
        return _nn.nll_loss(x, target, weight, attr.get("reduction", "mean"), int(ignore))


@register("MaxRoiPool")
class MaxRoiPool(OnnxOpConverter):
    """Max pooling over the bins of each region ``[batch, x1, y1, x2, y2]``: ``vision.roi_pool``."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return _op.vision.roi_pool(inputs[0], inputs[1], tuple(attr["pooled_shape"]),
                                   float(attr.get("spatial_scale", 1.0)))
