"""Image operators (``relay.image``): ``resize1d resize2d resize3d``."""

from ...error import TypeInferenceError
from ...ir.type import TensorType
from ...tir.layout import layout as parse_layout
from . import attrs as A
from . import attrs_image as AI
from .op import OpPattern, make_call, register_relay_op
from .type_relations import FLOAT, NUMERIC, check_dtype, tensor_arg


def _resize2d_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    lay = parse_layout(attrs.layout)
    h, w = lay.index_of("H"), lay.index_of("W")
    if h < 0 or w < 0 or lay.ndim != data.ndim:
        raise TypeInferenceError(f"resize2d: data {data} does not fit layout {attrs.layout}")
    shape = list(data.shape)
    shape[h], shape[w] = attrs.size
    check_dtype(attrs.out_dtype or data.dtype, NUMERIC, "the result", "image.resize2d")
    return TensorType(tuple(shape), attrs.out_dtype or data.dtype)


register_relay_op("image.resize2d", 1, _resize2d_rel, OpPattern.INJECTIVE, A.Resize2DAttrs, dtypes=NUMERIC)


def resize2d(data, size, roi=None, layout="NCHW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """Resize the H x W plane of ``data`` to ``size`` by nearest-neighbour, linear or cubic interpolation."""
    return make_call("image.resize2d", [data], A.Resize2DAttrs(
        tuple(size), tuple(roi) if roi is not None else (0.0, 0.0, 0.0, 0.0), layout, method,
        coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude, extrapolation_value,
        out_dtype or ""))


def _resize_nd_rel(op, spatial, numeric):
    def relation(types, attrs):
        data = tensor_arg(types, 0, "data")
        lay = parse_layout(attrs.layout)
        axes = [lay.index_of(a) for a in spatial]
        if min(axes) < 0 or lay.ndim != data.ndim:
            raise TypeInferenceError(f"{op}: data {data} does not fit layout {attrs.layout}")
        shape = list(data.shape)
        for a, s in zip(axes, attrs.size, strict=True):
            shape[a] = s
        check_dtype(attrs.out_dtype or data.dtype, numeric, "the result", op)
        return TensorType(tuple(shape), attrs.out_dtype or data.dtype)

    return relation


# resize3d interpolates its axes one after the other (H and W, then D): float only, so no rounding in between
register_relay_op("image.resize1d", 1, _resize_nd_rel("image.resize1d", "W", NUMERIC), OpPattern.INJECTIVE,
                  AI.Resize1DAttrs, dtypes=NUMERIC)
register_relay_op("image.resize3d", 1, _resize_nd_rel("image.resize3d", "DHW", FLOAT), OpPattern.INJECTIVE,
                  AI.Resize3DAttrs, dtypes=FLOAT)


def resize1d(data, size, roi=None, layout="NCW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """Resize the W axis of ``data`` to ``size`` (an int or a 1-tuple) by nearest-neighbour, linear or cubic
    interpolation (as :func:`resize2d` on one axis)."""
    size = (size,) if isinstance(size, int) else tuple(size)
    return make_call("image.resize1d", [data], AI.Resize1DAttrs(
        size, tuple(roi) if roi is not None else (0.0, 0.0), layout, method, coordinate_transformation_mode,
        rounding_method, cubic_alpha, cubic_exclude, extrapolation_value, out_dtype or ""))


def resize3d(data, size, roi=None, layout="NCDHW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """Resize the D x H x W volume of ``data`` to ``size`` by nearest-neighbour, (tri)linear or cubic
    interpolation."""
    return make_call("image.resize3d", [data], AI.Resize3DAttrs(
        tuple(size), tuple(roi) if roi is not None else (0.0,) * 6, layout, method, coordinate_transformation_mode,
        rounding_method, cubic_alpha, cubic_exclude, extrapolation_value, out_dtype or ""))
