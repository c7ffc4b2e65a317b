"""``resize1d``, ``resize3d`` and ``upsampling``/``upsampling3d`` (TVM's ``topi.image.resize1d/3d``,
``topi.nn.upsampling``): :func:`.resize.resize` of the W axis, of the D x H x W volume, or of the H x W plane or
volume to the rounded scaled sizes."""

import math

from ...tir.layout import layout as parse_layout
from ..utils import get_const_tuple
from .resize import resize, resize2d

__all__ = ["resize1d", "resize3d", "upsampling", "upsampling3d", "upsampled_size"]


def upsampled_size(size, scale) -> int:
    """TVM's output length of ``upsampling``: ``round(size * scale)``."""
    return int(math.floor(size * scale + 0.5))


def resize1d(data, roi, size, layout="NCW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """Resize the W axis of ``data`` to ``size[0]`` (:func:`.resize.resize`)."""
    return resize(data, tuple(size), layout, "W", method, coordinate_transformation_mode, rounding_method,
                  cubic_alpha, cubic_exclude, extrapolation_value, roi, out_dtype, name="T_resize1d")


def resize3d(data, roi, size, layout="NCDHW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """Resize the D x H x W volume of ``data`` to ``size`` (:func:`.resize.resize`)."""
    return resize(data, tuple(size), layout, "DHW", method, coordinate_transformation_mode, rounding_method,
                  cubic_alpha, cubic_exclude, extrapolation_value, roi, out_dtype, name="T_resize3d")


def _sizes(data, layout, axes, scales, output_shape):
    """The output lengths of the scaled ``axes``: read from ``output_shape`` (``dyn.nn.upsampling*``, whose shape
    function rounded them at run time) or the rounded products of the static sizes and scales."""
    lay = parse_layout(layout)
    if output_shape is not None:
        return tuple(output_shape[lay.index_of(a)] for a in axes)
    shape = get_const_tuple(data.shape)
    return tuple(upsampled_size(shape[lay.index_of(a)], s) for a, s in zip(axes, scales, strict=True))


def upsampling(data, scale_h, scale_w, layout="NCHW", method="nearest_neighbor", align_corners=False,
               output_shape=None):
    """Upsample the H x W plane by ``scale_h`` x ``scale_w`` (sizes rounded), as ``resize2d`` with the
    ``align_corners`` or ``asymmetric`` coordinate mode. ``output_shape`` (the result's shape, size variables where
    the scales are known only at run time) gives the sizes instead of the scales, as TVM's argument does."""
    size = _sizes(data, layout, "HW", (scale_h, scale_w), output_shape)
    resize_method = {"bilinear": "linear", "bicubic": "cubic"}.get(method, method)
    mode = "align_corners" if align_corners else "asymmetric"
    return resize2d(data, (0.0,) * 4, size, layout, resize_method, mode)


def upsampling3d(data, scale_d, scale_h, scale_w, layout="NCDHW", method="nearest_neighbor",
                 coordinate_transformation_mode="half_pixel", output_shape=None):
    """Upsample the D x H x W volume by the three scales (sizes rounded), as :func:`resize3d`; ``output_shape`` as
    for :func:`upsampling`."""
    size = _sizes(data, layout, "DHW", (scale_d, scale_h, scale_w), output_shape)
    resize_method = "linear" if method == "trilinear" else method
    return resize3d(data, None, size, layout, resize_method, coordinate_transformation_mode)
