"""Converters of the ONNX operators that rearrange elements: DepthToSpace, SpaceToDepth, Trilu and EyeLike (an
EyeLike of a static shape becomes a constant)."""

import numpy as np

from ... import op as _op
from ...op import nn as _nn
from .common import OnnxOpConverter, const, register
from .tensor import cast_dtype


@register("DepthToSpace")
class DepthToSpace(OnnxOpConverter):
    """Move channel blocks into ``blocksize`` x ``blocksize`` spatial blocks (modes DCR and CRD):
    ``nn.depth_to_space``."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return _nn.depth_to_space(inputs[0], attr["blocksize"], "NCHW", attr.get("mode", "DCR"))


@register("SpaceToDepth")
class SpaceToDepth(OnnxOpConverter):
    """Move ``blocksize`` x ``blocksize`` spatial blocks into channels (block-major ``DCR`` order, or
    channel-major ``CRD``)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        n, c, h, w = ctx.shape(x)
        b = attr["blocksize"]
        perm = (0, 3, 5, 1, 2, 4) if attr.get("mode", "DCR") == "DCR" else (0, 1, 3, 5, 2, 4)
        y = _op.transpose(_op.reshape(x, (n, c, h // b, b, w // b, b)), perm)
        return _op.reshape(y, (n, c * b * b, h // b, w // b))


@register("Trilu")
class Trilu(OnnxOpConverter):
    """Keep the upper (or lower) triangle of the last two axes from diagonal ``k`` (a constant or a run-time
    value), zero the rest: ``trilu``."""

    @classmethod
    def _impl_v14(cls, inputs, attr, ctx):
        k = inputs[1] if len(inputs) > 1 and inputs[1] is not None else const(0, "int64")
        return _op.trilu(inputs[0], k, bool(attr.get("upper", 1)))


@register("EyeLike")
class EyeLike(OnnxOpConverter):
    """A constant matrix of the input's shape with ones on diagonal ``k``."""

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        rows, cols = ctx.shape(inputs[0])
        dtype = cast_dtype(attr["dtype"], ctx) if "dtype" in attr else ctx.dtype(inputs[0])
        return const(np.eye(rows, cols, attr.get("k", 0), dtype=dtype), dtype)
