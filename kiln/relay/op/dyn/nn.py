"""The ``relay.op.dyn.nn`` operators (TVM's ``relay/op/dyn/nn``), whose result shape comes from tensors known at
run time: ``dyn.nn.pad`` (``pad_width`` an ``(ndim, 2)`` integer tensor; the shape function adds the widths to the
data's shape and refuses a negative one) and ``dyn.nn.upsampling``/``dyn.nn.upsampling3d`` (the scales numeric scalar
tensors; the shape function rounds ``size * scale`` per scaled axis and refuses a scale that is not positive). The
upsamplings share the static operators' attributes (their scale fields unused), as TVM's do."""

from dataclasses import dataclass

import numpy as np

from ....error import TypeInferenceError
from ....ir.attrs import Attrs
from ....ir.type import Any, TensorType, is_any
from ....tir import op as _op
from ....tir.layout import layout as parse_layout
from ..attrs_image import UpSampling3DAttrs, UpSamplingAttrs
from ..nn import pad as static_pad
from ..nn_extra import upsampling as static_upsampling
from ..nn_extra import upsampling3d as static_upsampling3d
from ..op import OpPattern, make_call, register_op_attr, register_relay_op, register_shape_func
from ..type_relations import ALL, NUMERIC, SIGNED, tensor_arg
from .common import dim64, int64, scalar_arg, shape_tensor

__all__ = ["DynPadAttrs", "pad", "upsampling", "upsampling3d"]


@dataclass(frozen=True, slots=True)
class DynPadAttrs(Attrs):
    """``pad_mode``: ``constant`` (fill with the pad value), ``edge``, ``reflect`` or ``wrap`` (the axis repeated
    periodically, as numpy's and ONNX's ``wrap``; kiln's extension, with no static ``nn.pad`` form)."""

    pad_mode: str = "constant"

    def __post_init__(self):
        self._require(self.pad_mode in ("constant", "edge", "reflect", "wrap"), "pad_mode",
                      "must be constant, edge, reflect or wrap")


def _pad_rel(types, attrs):
    data, width, value = (tensor_arg(types, i, n) for i, n in enumerate(("data", "pad_width", "pad_value")))
    if width.ndim != 2 or width.shape[1] != 2 or is_any(width.shape[0]) or width.shape[0] != data.ndim:
        raise TypeInferenceError(f"pad_width must be a ({data.ndim}, 2) tensor for {data}, got {width}")
    if value.shape:
        raise TypeInferenceError(f"pad_value must be a scalar, got {value}")
    return TensorType((Any(),) * data.ndim, data.dtype)


register_relay_op("dyn.nn.pad", 3, _pad_rel, OpPattern.OPAQUE, DynPadAttrs, dtypes=(ALL, SIGNED, ALL))


@register_shape_func("dyn.nn.pad", True)
def _pad_shape_func(attrs, inputs, out_types):
    """``before + size + after`` per axis; checks: no negative width."""
    data, width = inputs[0], inputs[1]
    dims, checks = [], []
    for k in range(len(data.shape)):
        before, after = int64(width[k, 0]), int64(width[k, 1])
        dims.append(before + dim64(data, k) + after)
        checks += [(_op.greater_equal(before, 0), f"dyn.nn.pad: pad_width[{k}][0] is negative"),
                   (_op.greater_equal(after, 0), f"dyn.nn.pad: pad_width[{k}][1] is negative")]
    return [shape_tensor(dims, "dyn_pad_shape")], checks


def pad(data, pad_width, pad_value, pad_mode="constant"):
    """Pad each axis of ``data`` by the ``(before, after)`` rows of the ``(ndim, 2)`` integer tensor ``pad_width``."""
    return make_call("dyn.nn.pad", [data, pad_width, pad_value], DynPadAttrs(pad_mode))


@register_op_attr("dyn.nn.pad", "FDynamicToStatic")
def _pad_to_static(call, values):
    """``nn.pad(data, pad_width)`` once ``pad_width`` is a constant."""
    if values[1] is None or (values[1] < 0).any() or call.attrs.pad_mode == "wrap":
        return None
    return static_pad(call.args[0], values[1].tolist(), call.args[2], call.attrs.pad_mode)


# ---- dyn.nn.upsampling / dyn.nn.upsampling3d: the scales as scalar tensors ----------------------------------------

_SPATIAL = {"dyn.nn.upsampling": "HW", "dyn.nn.upsampling3d": "DHW"}


def _upsampling_rel(op_name):
    axes = _SPATIAL[op_name]

    def relation(types, attrs):
        data = tensor_arg(types, 0, "data")
        for k, axis in enumerate(axes):
            scalar_arg(tensor_arg(types, k + 1, f"scale_{axis.lower()}"), op_name, f"scale_{axis.lower()}")
        lay = parse_layout(attrs.layout)
        if lay.ndim != data.ndim or any(lay.index_of(a) < 0 for a in axes):
            raise TypeInferenceError(f"data {data} does not fit layout {attrs.layout}")
        shape = list(data.shape)
        for axis in axes:
            shape[lay.index_of(axis)] = Any()
        return TensorType(tuple(shape), data.dtype)

    return relation


# the scales may be of any numeric dtype (TVM's relation does not check them; its tests bind integer scales)
register_relay_op("dyn.nn.upsampling", 3, _upsampling_rel("dyn.nn.upsampling"), OpPattern.OPAQUE,
                  UpSamplingAttrs, dtypes=NUMERIC)
register_relay_op("dyn.nn.upsampling3d", 4, _upsampling_rel("dyn.nn.upsampling3d"), OpPattern.OPAQUE,
                  UpSampling3DAttrs, dtypes=NUMERIC)


def upsampled_dim(size, scale):
    """``round(size * scale)`` (halves up, as :func:`kiln.topi.image.resize_nd.upsampled_size`) in float64, as an
    int64 expression."""
    product = _op.cast(size, "float64") * _op.cast(scale, "float64")
    return _op.cast(_op.floor(product + _op.const(0.5, "float64")), "int64")


def _upsampling_shape_func(op_name):
    axes = _SPATIAL[op_name]

    def shape_func(attrs, inputs, out_types):
        """The data's shape with each scaled axis ``round(size * scale)``; checks: every scale positive."""
        data, scales = inputs[0], inputs[1:]
        lay = parse_layout(attrs.layout)
        dims = [dim64(data, k) for k in range(len(data.shape))]
        checks = []
        for axis, scale in zip(axes, scales, strict=True):
            value = scale() if len(scale.shape) == 0 else scale[0]
            dims[lay.index_of(axis)] = upsampled_dim(dims[lay.index_of(axis)], value)
            checks.append((_op.greater(value, _op.const(0, value.dtype)),
                           f"{op_name}: scale_{axis.lower()} must be positive"))
        return [shape_tensor(dims, op_name.replace(".", "_") + "_shape")], checks

    return shape_func


register_shape_func("dyn.nn.upsampling", True, _upsampling_shape_func("dyn.nn.upsampling"))
register_shape_func("dyn.nn.upsampling3d", True, _upsampling_shape_func("dyn.nn.upsampling3d"))


def upsampling(data, scale_h, scale_w, layout="NCHW", method="nearest_neighbor", align_corners=False):
    """:func:`kiln.relay.nn.upsampling` with ``scale_h`` and ``scale_w`` numeric scalar tensors known at run time
    (TVM's ``relay.op.dyn.nn._make.upsampling``)."""
    return make_call("dyn.nn.upsampling", [data, scale_h, scale_w],
                     UpSamplingAttrs(layout=layout, method=method, align_corners=bool(align_corners)))


def upsampling3d(data, scale_d, scale_h, scale_w, layout="NCDHW", method="nearest_neighbor",
                 coordinate_transformation_mode="half_pixel"):
    """:func:`kiln.relay.nn.upsampling3d` with the three scales numeric scalar tensors known at run time."""
    return make_call("dyn.nn.upsampling3d", [data, scale_d, scale_h, scale_w], UpSampling3DAttrs(
        layout=layout, method=method, coordinate_transformation_mode=coordinate_transformation_mode))


def _scales(values, count):
    """The constant scales as floats, or None while one is unknown or not positive."""
    if any(v is None for v in values[1:count + 1]):
        return None
    scales = [float(np.asarray(v).reshape(-1)[0]) for v in values[1:count + 1]]
    return scales if all(s > 0 for s in scales) else None


@register_op_attr("dyn.nn.upsampling", "FDynamicToStatic")
def _upsampling_to_static(call, values):
    """``nn.upsampling`` once both scales are constants."""
    scales = _scales(values, 2)
    if scales is None:
        return None
    a = call.attrs
    return static_upsampling(call.args[0], *scales, a.layout, a.method, a.align_corners)


@register_op_attr("dyn.nn.upsampling3d", "FDynamicToStatic")
def _upsampling3d_to_static(call, values):
    """``nn.upsampling3d`` once the three scales are constants."""
    scales = _scales(values, 3)
    if scales is None:
        return None
    a = call.attrs
    return static_upsampling3d(call.args[0], *scales, a.layout, a.method, a.coordinate_transformation_mode)
