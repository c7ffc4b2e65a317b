"""``image.resize1d/2d/3d`` and ``image.crop_and_resize`` in numpy: :func:`kiln.topi.testing.resize.resize` (whose
docstring gives the formulas), the one implementation the reference interpreter and TVM's ``resize*_python`` and
``crop_and_resize_python`` share.

Values are read as float32 (float64 data stays float64) and the result is cast to ``out_dtype`` (truncating for
integers, as TVM's cast does).
"""

from ...topi.testing.resize import crop_and_resize_python, resize
from .common import register


@register("image.resize1d", "image.resize2d", "image.resize3d")
def resize_nd(attrs, data):
    """Resize the W axis, the H x W plane or the D x H x W volume (any layout whose spatial axes are not split)."""
    return resize(data, attrs.size, attrs.layout, attrs.method, attrs.coordinate_transformation_mode,
                  attrs.rounding_method, attrs.cubic_alpha, attrs.cubic_exclude, attrs.extrapolation_value, attrs.roi,
                  attrs.out_dtype or None)


@register("image.crop_and_resize")
def crop_and_resize(attrs, data, boxes, box_indices):
    """Each box cropped and resized (bilinear or nearest), ``extrapolation_value`` outside the image."""
    return crop_and_resize_python(data, boxes, box_indices, attrs.crop_size, attrs.layout, attrs.method,
                                  attrs.extrapolation_value, attrs.out_dtype or None)
