"""``resize1d``, ``resize3d`` and ``upsampling``/``upsampling3d`` (TVM's ``topi.image.resize1d/3d``,
``topi.nn.upsampling``), built on :func:`.resize.resize2d`.

``resize1d`` is ``resize2d`` of the data with a size-1 H axis inserted before W: every coordinate mode maps a
single output row to the single input row exactly, so only W interpolates. ``resize3d`` interpolates separably, as
linear and cubic interpolation are products of one weight per axis: ``resize2d`` of the H x W planes, then
``resize2d`` along D with a size-1 W axis (the data moved to ``N, D, 1, C*H*W`` in layout ``NHWC``). The planes keep
the interpolation's float type, so the result is rounded (or cast to integers) once, as the numpy reference does.
"""

import math

from ...tir.layout import layout as parse_layout
from ..transform import layout_transform, reshape, transpose
from ..utils import get_const_tuple
from .resize import resize2d

__all__ = ["resize1d", "resize3d", "upsampling", "upsampling3d", "upsampled_size"]


def upsampled_size(size, scale) -> int:
    """TVM's output length of ``upsampling``: ``round(size * scale)``."""
    return int(math.floor(size * scale + 0.5))


def resize1d(data, roi, size, layout="NCW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """Resize the W axis of ``data`` to ``size[0]`` (see the module docstring)."""
    del roi
    shape = get_const_tuple(data.shape)
    w_axis = parse_layout(layout).index_of("W")
    lifted = reshape(data, shape[:w_axis] + (1,) + shape[w_axis:])
    layout2d = layout[:w_axis] + "H" + layout[w_axis:]
    out = resize2d(lifted, (0.0,) * 4, (1, int(size[0])), layout2d, method, coordinate_transformation_mode,
                   rounding_method, cubic_alpha, cubic_exclude, extrapolation_value, out_dtype)
    out_shape = list(shape)
    out_shape[w_axis] = int(size[0])
    return reshape(out, out_shape)


def resize3d(data, roi, size, layout="NCDHW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """Resize the D x H x W volume of ``data`` to ``size`` (see the module docstring)."""
    del roi
    x = data if layout == "NCDHW" else layout_transform(data, layout, "NCDHW")
    n, c, d, h, w = get_const_tuple(x.shape)
    od, oh, ow = (int(s) for s in size)
    args = (method, coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude, extrapolation_value)
    # the planes keep the interpolation's float type (no rounding to an integer or float16 result in between)
    between = out_dtype if method == "nearest_neighbor" else "float64" if data.dtype == "float64" else "float32"
    planes = resize2d(reshape(x, (n, c * d, h, w)), (0.0,) * 4, (oh, ow), "NCHW", *args, between)
    moved = reshape(transpose(reshape(planes, (n, c, d, oh, ow)), (0, 2, 1, 3, 4)), (n, d, 1, c * oh * ow))
    depth = resize2d(moved, (0.0,) * 4, (od, 1), "NHWC", *args, out_dtype or data.dtype)
    out = transpose(reshape(depth, (n, od, c, oh, ow)), (0, 2, 1, 3, 4))
    return out if layout == "NCDHW" else layout_transform(out, "NCDHW", layout)


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
