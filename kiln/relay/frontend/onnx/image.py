"""Converters of ONNX Resize and Upsample onto ``image.resize2d``.

The output size comes from ``sizes`` or from ``floor(input * scale)``; only the last two axes (of a 4-D NCHW
tensor) or the last one (of a 3-D tensor, resized as a one-row image) may change. ``resize2d`` derives the
coordinate mapping from the input and output sizes, which equals ONNX's ``1 / scale`` whenever ``input * scale`` is
a whole number (the usual case); for other scales the sampling positions differ slightly. Nearest-neighbour
``Upsample`` by whole factors is exactly ``repeat`` along each axis.
"""

import math

import numpy as np

from ....error import OpNotImplemented
from ... import op as _op
from ...op import image as _image
from .common import OnnxOpConverter, register

_METHODS = {"nearest": "nearest_neighbor", "linear": "linear", "bilinear": "linear", "cubic": "cubic"}
_COORDINATE_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn")


def _resize(x, out_shape, method, ctx, coordinate_mode="asymmetric", rounding="", cubic_alpha=-0.75,
            cubic_exclude=0, extrapolation=0.0):
    """Resize ``x`` to ``out_shape`` (same rank; only the spatial axes may differ)."""
    shape = ctx.shape(x)
    out_shape = tuple(int(d) for d in out_shape)
    if out_shape == shape:
        return x
    if len(shape) not in (3, 4) or out_shape[:2] != shape[:2]:
        raise ctx.error(f"resizing {shape} to {out_shape} is not supported (kiln resizes the spatial axes of "
                        f"3-D and 4-D tensors)", OpNotImplemented)
    if method not in _METHODS:
        raise ctx.error(f"unknown mode {method!r}")
    if coordinate_mode not in _COORDINATE_MODES:
        raise ctx.error(f"coordinate_transformation_mode {coordinate_mode!r} is not supported", OpNotImplemented)
    if len(shape) == 3:
        x = _op.reshape(x, shape[:2] + (1, shape[2]))
    out = _image.resize2d(x, out_shape[2:] if len(shape) == 4 else (1, out_shape[2]), layout="NCHW",
                          method=_METHODS[method], coordinate_transformation_mode=coordinate_mode,
                          rounding_method=rounding if method == "nearest" else "", cubic_alpha=cubic_alpha,
                          cubic_exclude=cubic_exclude, extrapolation_value=extrapolation)
    return _op.reshape(out, out_shape) if len(shape) == 3 else out


def _scaled(shape, scales):
    return [int(math.floor(d * float(s))) for d, s in zip(shape, scales)]


@register("Resize")
class Resize(OnnxOpConverter):
    """Nearest, linear or cubic resizing (see the module docstring)."""

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        x = inputs[0]
        scales = ctx.value(inputs[1], "scales").reshape(-1)
        return _resize(x, _scaled(ctx.shape(x), scales), attr.get("mode", "nearest"), ctx)

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        x = inputs[0]
        shape = ctx.shape(x)
        if attr.get("antialias", 0):
            raise ctx.error("antialias=1 is not supported", OpNotImplemented)
        axes = [int(a) % len(shape) for a in attr.get("axes", range(len(shape)))]
        scales = ctx.optional_value(inputs, 2, "scales")
        sizes = ctx.optional_value(inputs, 3, "sizes")
        out = list(shape)
        if sizes is not None and sizes.size:
            sizes = [int(s) for s in sizes.reshape(-1)]
            policy = attr.get("keep_aspect_ratio_policy", "stretch")
            if policy != "stretch":
                ratios = [s / shape[a] for s, a in zip(sizes, axes)]
                ratio = min(ratios) if policy == "not_larger" else max(ratios)
                sizes = [int(np.floor(shape[a] * ratio + 0.5)) for a in axes]
            for a, s in zip(axes, sizes):
                out[a] = s
        elif scales is not None and scales.size:
            for a, s in zip(axes, _scaled([shape[a] for a in axes], scales.reshape(-1))):
                out[a] = s
        else:
            raise ctx.error("needs scales or sizes")
        mode = attr.get("mode", "nearest")
        return _resize(x, out, mode, ctx, attr.get("coordinate_transformation_mode", "half_pixel"),
                       attr.get("nearest_mode", "round_prefer_floor"), attr.get("cubic_coeff_a", -0.75),
                       attr.get("exclude_outside", 0), attr.get("extrapolation_value", 0.0))


@register("Upsample")
class Upsample(OnnxOpConverter):
    """Upsampling by ``scales`` (attribute in opset 7, input from 9): ``repeat`` for whole nearest factors, else
    ``resize2d`` with asymmetric coordinates."""

    @classmethod
    def _impl_v7(cls, inputs, attr, ctx):
        return cls._upsample(inputs[0], attr["scales"], attr, ctx)

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        return cls._upsample(inputs[0], ctx.value(inputs[1], "scales").reshape(-1), attr, ctx)

    @staticmethod
    def _upsample(x, scales, attr, ctx):
        mode = attr.get("mode", "nearest")
        scales = [float(s) for s in scales]
        if mode == "nearest" and all(s == int(s) and s >= 1 for s in scales):
            for axis, s in enumerate(scales):
                if s != 1:
                    x = _op.repeat(x, int(s), axis)
            return x
        return _resize(x, _scaled(ctx.shape(x), scales), mode, ctx)
