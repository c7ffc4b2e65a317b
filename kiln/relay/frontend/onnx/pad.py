"""Converter of ONNX Pad (``constant``, ``edge``, ``reflect`` or ``wrap``; pads as an attribute before opset 11, as
inputs after, ``axes`` from 18): negative amounts crop; pads or axes known only at run time go to ``dyn.nn.pad``
(:func:`.dynamic.pad`)."""

import numpy as np

from ....error import OpNotImplemented
from ... import op as _op
from ...op import nn as _nn
from . import dynamic
from .common import OnnxOpConverter, const, register


def pad(x, pads, mode, value, ctx):
    """ONNX padding: ``pads`` is all begins then all ends; negative amounts crop."""
    shape = ctx.shape(x)
    n = len(shape)
    pads = [int(p) for p in pads]
    if len(pads) != 2 * n:
        raise ctx.error(f"pads has {len(pads)} values for {n} axes (all begins, then all ends)")
    before, after = pads[:n], pads[n:]
    if min(pads, default=0) < 0:
        x = _op.strided_slice(x, [max(-b, 0) for b in before],
                              [d - max(-a, 0) for d, a in zip(shape, after, strict=True)])
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise ctx.error(f"pad mode {mode!r} is not supported", OpNotImplemented)
    width = [(max(b, 0), max(a, 0)) for b, a in zip(before, after, strict=True)]
    if not any(b or a for b, a in width):
        return x
    if mode == "wrap":  # the end of the axis before it, its beginning after it
        for axis, (b, a) in enumerate(width):
            size = ctx.shape(x)[axis]
            if b > size or a > size:
                raise ctx.error(f"wrap padding of {max(a, b)} exceeds axis {axis} of size {size}")
            parts = [_op.strided_slice(x, [size - b], [size], axes=[axis])] if b else []
            parts.append(x)
            parts += [_op.strided_slice(x, [0], [a], axes=[axis])] if a else []
            x = _op.concatenate(parts, axis) if len(parts) > 1 else x
        return x
    if not isinstance(value, np.ndarray | float | int):
        value = _op.reshape(value, ())
    else:
        value = const(value, ctx.dtype(x))
    return _nn.pad(x, width, value, mode)


@register("Pad")
class Pad(OnnxOpConverter):
    """Pad (``constant``, ``edge``, ``reflect`` or ``wrap``; attributes before opset 11, inputs after, ``axes`` from
    18)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        pads = attr.get("pads", attr.get("paddings"))
        return pad(inputs[0], pads, attr.get("mode", "constant"), float(attr.get("value", 0.0)), ctx)

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        x = inputs[0]
        n = ctx.ndim(x)
        given = inputs[3] if len(inputs) > 3 else None
        axes = None if given is None else ctx.value_or_none(given, "axes")
        value = 0
        if len(inputs) > 2 and inputs[2] is not None:
            value = inputs[2] if not ctx.is_const(inputs[2]) else ctx.value(inputs[2]).reshape(())
        pads = ctx.value_or_none(inputs[1], "pads")
        if pads is None or (given is not None and axes is None):  # known only at run time
            axes = given if given is not None and axes is None else axes
            return dynamic.pad(x, inputs[1], axes, attr.get("mode", "constant"), value, ctx)
        pads = [int(p) for p in pads.reshape(-1)]
        if axes is not None:
            full = [0] * (2 * n)
            k = len(axes)
            for i, axis in enumerate(int(a) % n for a in axes.reshape(-1)):
                full[axis], full[n + axis] = pads[i], pads[k + i]
            pads = full
        return pad(x, pads, attr.get("mode", "constant"), value, ctx)
