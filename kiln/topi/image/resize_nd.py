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


def upsampling(data, scale_h, scale_w, layout="NCHW", method="nearest_neighbor", align_corners=False):
    """Upsample the H x W plane by ``scale_h`` x ``scale_w`` (sizes rounded), as ``resize2d`` with the
    ``align_corners`` or ``asymmetric`` coordinate mode."""
    lay = parse_layout(layout)
    shape = get_const_tuple(data.shape)
    size = (upsampled_size(shape[lay.index_of("H")], scale_h), upsampled_size(shape[lay.index_of("W")], scale_w))
    resize_method = {"bilinear": "linear", "bicubic": "cubic"}.get(method, method)
    mode = "align_corners" if align_corners else "asymmetric"
    return resize2d(data, (0.0,) * 4, size, layout, resize_method, mode)


def upsampling3d(data, scale_d, scale_h, scale_w, layout="NCDHW", method="nearest_neighbor",
                 coordinate_transformation_mode="half_pixel"):
    """Upsample the D x H x W volume by the three scales (sizes rounded), as :func:`resize3d`."""
    lay = parse_layout(layout)
    shape = get_const_tuple(data.shape)
    size = tuple(upsampled_size(shape[lay.index_of(a)], s) for a, s in zip("DHW", (scale_d, scale_h, scale_w),
                                                                          strict=True))
    resize_method = "linear" if method == "trilinear" else method
    return resize3d(data, None, size, layout, resize_method, coordinate_transformation_mode)
