"""Image operators (``relay.image``): ``resize1d resize2d resize3d crop_and_resize dilation2d affine_grid
grid_sample``."""

from ...error import TypeInferenceError
from ...ir.expr import RelayExpr
from ...ir.type import TensorType
from ...tir.layout import layout as parse_layout
from . import attrs as A
from . import attrs_image as AI
from .dispatch import constant_value, dyn_ops, is_dynamic
from .op import OpPattern, make_call, register_relay_op
from .type_relations import FLOAT, INTEGER, NUMERIC, check_dtype, dims_match, same_dtype, shapes_match, tensor_arg


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
    """Resize the H x W plane of ``data`` to ``size`` by nearest-neighbour, linear or cubic interpolation; ``size``
    a non-constant Relay expression (2 integers) makes ``dyn.image.resize2d``."""
    if is_dynamic(size) or is_dynamic(roi):
        from ..expr import const

        if not isinstance(roi, RelayExpr):
            roi = const(list(roi) if roi is not None else [0.0] * 4, "float32")
        if not isinstance(size, RelayExpr):
            size = const(list(size), "int64")
        return dyn_ops().image.resize2d(data, size, roi, layout, method, coordinate_transformation_mode,
                                        rounding_method, cubic_alpha, cubic_exclude, extrapolation_value, out_dtype)
    size = constant_value(size)
    if isinstance(roi, RelayExpr):  # a constant
        roi = roi.data.numpy().reshape(-1).tolist()
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


register_relay_op("image.resize1d", 1, _resize_nd_rel("image.resize1d", "W", NUMERIC), OpPattern.INJECTIVE,
                  AI.Resize1DAttrs, dtypes=NUMERIC)
register_relay_op("image.resize3d", 1, _resize_nd_rel("image.resize3d", "DHW", NUMERIC), OpPattern.INJECTIVE,
                  AI.Resize3DAttrs, dtypes=NUMERIC)


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


def _crop_and_resize_rel(types, attrs):
    data, boxes, indices = (tensor_arg(types, i, n) for i, n in enumerate(["data", "boxes", "box_indices"]))
    if data.ndim != 4 or boxes.ndim != 2 or boxes.shape[1] != 4 or indices.shape != (boxes.shape[0],):
        raise TypeInferenceError(f"image.crop_and_resize: data {data} must be 4-D, boxes {boxes} (num_boxes, 4) and "
                                 f"box_indices {indices} (num_boxes,)")
    c = data.shape[attrs.layout.index("C")]
    if attrs.layout == "NCHW":
        shape = (boxes.shape[0], c) + tuple(attrs.crop_size)
    else:
        shape = (boxes.shape[0],) + tuple(attrs.crop_size) + (c,)
    check_dtype(attrs.out_dtype or data.dtype, NUMERIC, "the result", "image.crop_and_resize")
    return TensorType(shape, attrs.out_dtype or data.dtype)


register_relay_op("image.crop_and_resize", 3, _crop_and_resize_rel, OpPattern.INJECTIVE, AI.CropAndResizeAttrs,
                  dtypes=(FLOAT, FLOAT, INTEGER))


def crop_and_resize(data, boxes, box_indices, crop_size, layout="NCHW", method="bilinear", extrapolation_value=0,
                    out_dtype=None):
    """Crop the normalized boxes ``[y1, x1, y2, x2]`` out of the images ``box_indices`` and resize each to
    ``crop_size`` (TensorFlow's ``crop_and_resize``); samples outside an image are ``extrapolation_value``."""
    return make_call("image.crop_and_resize", [data, boxes, box_indices], AI.CropAndResizeAttrs(
        tuple(crop_size), layout, method, float(extrapolation_value), out_dtype or ""))


def _dilation2d_rel(types, attrs):
    data, weight = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "weight")
    if data.ndim != 4 or weight.ndim != 3:
        raise TypeInferenceError(f"image.dilation2d: data {data} must be 4-D and weight {weight} 3-D")
    c_axis = attrs.data_layout.index("C")
    kc = weight.shape[attrs.kernel_layout.index("I")]
    if not dims_match(kc, data.shape[c_axis]):
        raise TypeInferenceError(f"image.dilation2d: weight {weight} has {kc} channels, data {data} "
                                 f"{data.shape[c_axis]}")
    same_dtype([data, weight], "image.dilation2d data and weight")
    shape = list(data.shape)
    for j, a in enumerate("HW"):
        k = weight.shape[attrs.kernel_layout.index(a)]
        axis = attrs.data_layout.index(a)
        shape[axis] = (data.shape[axis] + attrs.padding[j] + attrs.padding[2 + j] - attrs.dilations[j] * (k - 1)
                       - 1) // attrs.strides[j] + 1
        if shape[axis] <= 0:
            raise TypeInferenceError(f"image.dilation2d: weight {weight} is larger than the padded input {data}")
    return TensorType(tuple(shape), attrs.out_dtype or data.dtype)


register_relay_op("image.dilation2d", 2, _dilation2d_rel, OpPattern.OUT_ELEMWISE_FUSABLE, AI.Dilation2DAttrs,
                  dtypes=NUMERIC)


def dilation2d(data, weight, strides=(1, 1), padding=(0, 0), dilations=(1, 1), data_layout="NCHW",
               kernel_layout="IHW", out_dtype=""):
    """Morphological dilation: the maximum over the window of ``data + weight`` per channel."""
    return make_call("image.dilation2d", [data, weight], AI.Dilation2DAttrs(
        strides, padding, dilations, data_layout, kernel_layout, out_dtype))


def _affine_grid_rel(types, attrs):
    theta = tensor_arg(types, 0, "data")
    if theta.ndim != 3 or theta.shape[1:] != (2, 3):
        raise TypeInferenceError(f"image.affine_grid: data {theta} must be (batch, 2, 3)")
    return TensorType((theta.shape[0], 2) + tuple(attrs.target_shape), theta.dtype)


register_relay_op("image.affine_grid", 1, _affine_grid_rel, OpPattern.INJECTIVE, AI.AffineGridAttrs, dtypes=FLOAT)


def affine_grid(data, target_shape=None):
    """The sampling grid ``(batch, 2, H, W)`` of the affine matrices ``data`` ``(batch, 2, 3)`` applied to the
    normalized coordinates of an ``H x W`` image (``[-1, 1]``, corners aligned)."""
    return make_call("image.affine_grid", [data], AI.AffineGridAttrs(tuple(target_shape)))


def _grid_sample_rel(types, attrs):
    data, grid = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "grid")
    k = len(attrs.layout) - 2
    if data.ndim != k + 2 or grid.ndim != k + 2 or not shapes_match(grid.shape[:2], (data.shape[0], k)):
        raise TypeInferenceError(f"image.grid_sample: data {data} must be {attrs.layout} and grid {grid} "
                                 f"(N, {k}, {'D, ' if k == 3 else ''}H, W)")
    same_dtype([data, grid], "image.grid_sample data and grid")
    return TensorType(data.shape[:2] + grid.shape[2:], data.dtype)


register_relay_op("image.grid_sample", 2, _grid_sample_rel, OpPattern.INJECTIVE, AI.GridSampleAttrs, dtypes=FLOAT)


def grid_sample(data, grid, method="bilinear", layout="NCHW", padding_mode="zeros", align_corners=True):
    """Sample ``data`` (NCHW or NCDHW) at the normalized ``(x, y[, z])`` positions of ``grid`` (bilinear, nearest
    or, in 2-D, bicubic; outside the image: zeros, the border, or the reflection)."""
    return make_call("image.grid_sample", [data, grid], AI.GridSampleAttrs(method, layout, padding_mode,
                                                                           align_corners))
