"""Image operators (``relay.image``): ``resize2d``."""

from ...error import TypeInferenceError
from ...ir.type import TensorType
from ...tir.layout import layout as parse_layout
from . import attrs as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import NUMERIC, check_dtype, tensor_arg


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
