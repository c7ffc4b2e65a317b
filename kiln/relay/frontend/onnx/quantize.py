"""Converters of ONNX QuantizeLinear and DequantizeLinear, written with Relay's element-wise operators.

``QuantizeLinear``: ``saturate(round_half_to_even(x / scale) + zero_point)`` in the zero point's integer type
(``output_dtype``, or uint8 without either). ``DequantizeLinear``: ``(x - zero_point) * scale`` in the scale's
type. Scale and zero point are scalars (per tensor), 1-D along ``axis`` (per axis), or, with ``block_size``, of the
input's rank with each entry covering ``block_size`` elements along ``axis`` (blocked).
"""

import numpy as np

from ....error import OpNotImplemented
from ... import op as _op
from .common import OnnxOpConverter, register
from .math import round_half_to_even
from .tensor import cast_dtype


def _broadcastable(param, x, attr, ctx):
    """``param`` (scale or zero point) shaped to broadcast against ``x``."""
    pshape, xshape = ctx.shape(param), ctx.shape(x)
    if len(pshape) == 0 or (len(pshape) == 1 and pshape[0] == 1 and not attr.get("block_size")):
        return _op.reshape(param, ()) if pshape else param
    axis = ctx.axis(attr.get("axis", 1), len(xshape))
    block = attr.get("block_size", 0)
    if block:
        param = _op.repeat(param, block, axis)
        if block * pshape[axis] != xshape[axis]:
            param = _op.strided_slice(param, [0], [xshape[axis]], axes=[axis])
        return param
    return _op.reshape(param, (pshape[0],) + (1,) * (len(xshape) - axis - 1))


@register("QuantizeLinear")
class QuantizeLinear(OnnxOpConverter):
    """Quantize to an integer type (see the module docstring)."""

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        x, scale = inputs[0], inputs[1]
        zero = inputs[2] if len(inputs) > 2 else None
        if zero is not None:
            dtype = ctx.dtype(zero)
        elif attr.get("output_dtype"):
            dtype = cast_dtype(attr["output_dtype"], ctx)
        else:
            dtype = "uint8"
        if not dtype.startswith(("int", "uint")):
            raise ctx.error(f"quantizing to {dtype} is not supported", OpNotImplemented)
        work = ctx.dtype(scale)
        xs = x if ctx.dtype(x) == work else _op.cast(x, work)
        q = round_half_to_even(_op.divide(xs, _broadcastable(scale, x, attr, ctx)), ctx)
        if zero is not None:
            q = _op.add(q, _op.cast(_broadcastable(zero, x, attr, ctx), work))
        info = np.iinfo(dtype)
        return _op.cast(_op.clip(q, float(info.min), float(info.max)), dtype)


@register("DequantizeLinear")
class DequantizeLinear(OnnxOpConverter):
    """Dequantize an integer tensor (see the module docstring)."""

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        x, scale = inputs[0], inputs[1]
        zero = inputs[2] if len(inputs) > 2 else None
        work = ctx.dtype(scale)
        if attr.get("output_dtype"):
            out_dtype = cast_dtype(attr["output_dtype"], ctx)
            if out_dtype != work:
                raise ctx.error(f"output_dtype {out_dtype} differs from the scale's {work}", OpNotImplemented)
        if not ctx.dtype(x).startswith(("int", "uint")):
            raise ctx.error(f"dequantizing {ctx.dtype(x)} is not supported", OpNotImplemented)
        y = _op.cast(x, work)
        if zero is not None:
            y = _op.subtract(y, _op.cast(_broadcastable(zero, x, attr, ctx), work))
        return _op.multiply(y, _broadcastable(scale, x, attr, ctx))

