"""``dyn.image.resize2d``: :func:`kiln.relay.image.resize2d` with ``size`` (output height and width) a 1-D integer
tensor of 2 entries and ``roi`` a float tensor, known at run time (TVM's ``relay/op/dyn/image``).

``dyn.image.resize_nd`` is ONNX's ``Resize`` with run-time ``scales`` or ``sizes`` (kiln's own operator: TVM's
frontend approximates it with ``dyn.image.resize2d``, whose coordinates follow ``out / in`` rather than the given
scale): any axes of N-D data, each resized to a length of ``size`` with the coordinate scale of ``scale`` (both
run-time tensors; ONNX's ``floor(in * scale)`` or ``keep_aspect_ratio_policy`` rounding is the caller's, so the
operator takes the pair), every coordinate mode, nearest rounding, ``antialias`` and ``tf_crop_and_resize``'s ``roi``
(kernel: :func:`kiln.topi.image.dyn_resize.resize_nd`)."""

from dataclasses import dataclass

from ....error import OpAttributeInvalid, TypeInferenceError
from ....ir.attrs import Attrs
from ....ir.type import Any, TensorType
from ....tir.layout import layout as parse_layout
from ..image import resize2d as static_resize2d
from ..op import OpPattern, make_call, register_op_attr, register_relay_op, register_shape_func
from ..type_relations import FLOAT, INTEGER, NUMERIC, check_dtype, tensor_arg
from .common import constant_ints, dim64, entries, nonnegative_checks, shape_tensor, static_length

__all__ = ["DynResize2DAttrs", "DynResizeNDAttrs", "resize2d", "resize_nd"]


@dataclass(frozen=True, slots=True)
class DynResize2DAttrs(Attrs):
    """As :class:`~kiln.relay.op.attrs.Resize2DAttrs` without ``size`` and ``roi``, which are arguments."""

    layout: str = "NCHW"
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = ""
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: str = ""


def _axes(attrs, data):
    lay = parse_layout(attrs.layout)
    h, w = lay.index_of("H"), lay.index_of("W")
    if h < 0 or w < 0 or lay.ndim != data.ndim:
        raise TypeInferenceError(f"data {data} does not fit layout {attrs.layout}")
    return h, w


def _resize2d_rel(types, attrs):
    data, size, roi = (tensor_arg(types, i, n) for i, n in enumerate(("data", "size", "roi")))
    h, w = _axes(attrs, data)
    if static_length(size, "dyn.image.resize2d", "size") != 2:
        raise TypeInferenceError(f"size must hold 2 entries (height, width), got {size}")
    static_length(roi, "dyn.image.resize2d", "roi")
    shape = list(data.shape)
    shape[h], shape[w] = Any(), Any()
    check_dtype(attrs.out_dtype or data.dtype, NUMERIC, "the result", "dyn.image.resize2d")
    return TensorType(tuple(shape), attrs.out_dtype or data.dtype)


# size may be a float tensor (TVM's relation does not check its dtype; its tests pass float sizes): truncated
register_relay_op("dyn.image.resize2d", 3, _resize2d_rel, OpPattern.OPAQUE, DynResize2DAttrs,
                  dtypes=(NUMERIC, NUMERIC, FLOAT))


@register_shape_func("dyn.image.resize2d", True)
def _resize2d_shape_func(attrs, inputs, out_types):
    """The data's shape with H and W from ``size``; checks: neither negative."""
    data, size = inputs[0], inputs[1]
    lay = parse_layout(attrs.layout)
    dims = [dim64(data, k) for k in range(len(data.shape))]
    values = entries(size, 2)
    dims[lay.index_of("H")], dims[lay.index_of("W")] = values
    return [shape_tensor(dims, "dyn_resize2d_shape")], nonnegative_checks(values, "dyn.image.resize2d", "size")


def resize2d(data, size, roi=None, layout="NCHW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """Resize the H x W plane of ``data`` to the run-time ``size`` (see :func:`kiln.relay.image.resize2d`); ``roi``
    (a float tensor, only read by ``tf_crop_and_resize``) defaults to zeros."""
    if roi is None:
        from ...expr import const

        roi = const([0.0] * 4, "float32")
    attrs = DynResize2DAttrs(layout, method, coordinate_transformation_mode, rounding_method, cubic_alpha,
                             cubic_exclude, extrapolation_value, out_dtype or "")
    return make_call("dyn.image.resize2d", [data, size, roi], attrs)


def static_attrs(attrs, size, roi):
    """The keyword arguments of the static ``resize2d`` for a dyn call's ``attrs`` and the values of its size/roi."""
    return dict(size=tuple(size), roi=tuple(float(v) for v in roi), layout=attrs.layout, method=attrs.method,
                coordinate_transformation_mode=attrs.coordinate_transformation_mode,
                rounding_method=attrs.rounding_method, cubic_alpha=attrs.cubic_alpha,
                cubic_exclude=attrs.cubic_exclude, extrapolation_value=attrs.extrapolation_value,
                out_dtype=attrs.out_dtype or None)


@register_op_attr("dyn.image.resize2d", "FDynamicToStatic")
def _resize2d_to_static(call, values):
    """``image.resize2d(data, size)`` once ``size`` is a constant (``roi`` only matters to ``tf_crop_and_resize``,
    which kiln does not support, so a run-time ``roi`` does not keep the call dynamic)."""
    if values[1] is None or (values[1] < 0).any():
        return None
    roi = values[2].reshape(-1) if values[2] is not None else (0.0, 0.0, 0.0, 0.0)
    return static_resize2d(call.args[0], **static_attrs(call.attrs, constant_ints(values[1]), roi))


_RESIZE_METHODS = ("nearest", "linear", "cubic")


@dataclass(frozen=True, slots=True)
class DynResizeNDAttrs(Attrs):
    """Attributes of ``dyn.image.resize_nd``: the resized ``axes`` (in the order they are interpolated) and ONNX's
    ``Resize`` attributes (``rounding_method`` is ``nearest_mode``, ``cubic_alpha`` ``cubic_coeff_a``,
    ``cubic_exclude`` ``exclude_outside``)."""

    axes: tuple = ()
    method: str = "nearest"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = "round_prefer_floor"
    cubic_alpha: float = -0.75
    cubic_exclude: int = 0
    antialias: int = 0
    extrapolation_value: float = 0.0


def _resize_nd_rel(types, attrs):
    data, size, scale, roi = (tensor_arg(types, i, n) for i, n in enumerate(("data", "size", "scale", "roi")))
    count = len(attrs.axes)
    if len(set(attrs.axes)) != count or any(not 0 <= a < data.ndim for a in attrs.axes):
        raise TypeInferenceError(f"axes {attrs.axes} are not distinct axes of {data.ndim}-D data")
    for ttype, what, length in ((size, "size", count), (scale, "scale", count), (roi, "roi", 2 * count)):
        if static_length(ttype, "dyn.image.resize_nd", what) != length:
            raise TypeInferenceError(f"{what} must hold {length} entries for axes {attrs.axes}, got {ttype}")
    shape = list(data.shape)
    for a in attrs.axes:
        shape[a] = Any()
    return TensorType(tuple(shape), data.dtype)


register_relay_op("dyn.image.resize_nd", 4, _resize_nd_rel, OpPattern.OPAQUE, DynResizeNDAttrs,
                  dtypes=(NUMERIC, INTEGER, FLOAT, FLOAT))


@register_shape_func("dyn.image.resize_nd", True)
def _resize_nd_shape_func(attrs, inputs, out_types):
    """The data's shape with the resized axes' lengths from ``size``; checks: none negative."""
    data, size = inputs[0], inputs[1]
    dims = [dim64(data, k) for k in range(len(data.shape))]
    values = entries(size, len(attrs.axes))
    for a, v in zip(attrs.axes, values, strict=True):
        dims[a] = v
    return [shape_tensor(dims, "dyn_resize_nd_shape")], nonnegative_checks(values, "dyn.image.resize_nd", "size")


def resize_nd(data, size, scale, axes, roi=None, method="nearest", coordinate_transformation_mode="half_pixel",
              rounding_method="round_prefer_floor", cubic_alpha=-0.75, cubic_exclude=0, antialias=0,
              extrapolation_value=0.0):
    """Resize ``axes`` of ``data`` to the lengths held by ``size``, with the coordinate scales held
    by ``scale``, as ONNX's ``Resize`` (see the module docstring).

    Parameters
    ----------
    data : relay.Expr
    size : relay.Expr
        1-D integer tensor: the output length of each of ``axes``.
    scale : relay.Expr
        1-D float tensor: the coordinate scale of each of ``axes``.
    axes : sequence of int
        The resized axes, in the order they are interpolated.
    roi : relay.Expr, optional
        1-D float tensor of the crop starts then ends (``tf_crop_and_resize``); zeros when None.
    method, coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude, antialias,
    extrapolation_value :
        ONNX's ``mode``, ``coordinate_transformation_mode``, ``nearest_mode``, ``cubic_coeff_a``,
        ``exclude_outside``, ``antialias`` and ``extrapolation_value``.

    Returns
    -------
    relay.Expr
    """
    if method not in _RESIZE_METHODS:
        raise OpAttributeInvalid(f"dyn.image.resize_nd: method must be one of {_RESIZE_METHODS}, got {method!r}")
    axes = tuple(int(a) for a in axes)
    if roi is None:
        from ...expr import const

        roi = const([0.0] * (2 * len(axes)), "float32")
    attrs = DynResizeNDAttrs(axes, method, coordinate_transformation_mode, rounding_method, float(cubic_alpha),
                             int(cubic_exclude), int(antialias), float(extrapolation_value))
    return make_call("dyn.image.resize_nd", [data, size, scale, roi], attrs)
