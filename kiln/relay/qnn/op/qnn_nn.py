"""Quantized operators built on a plain one (TVM's ``relay.qnn.op``): ``subtract concatenate batch_matmul
conv2d_transpose avg_pool2d``, each with its type relation, canonical form in plain Relay operators
(``FTVMQnnCanonicalize``) and numpy value (``FEvaluate``), all here beside the builder.

* ``subtract`` as ``add`` (:mod:`.qnn`): both operands requantized to the output, subtracted, plus one output
  zero point;
* ``concatenate(data, scales, zero_points, s_out, z_out)``: each tensor requantized to the output, then joined;
* ``batch_matmul`` and ``conv2d_transpose``: the plain operator on the centred operands in int32 (scale
  ``s_data * s_weight``, zero point 0);
* ``avg_pool2d``: the average of the centred values requantized to the output's quantization (rounding halves
  away from zero, as ``quantize``), so it equals quantizing the real average.
"""

import dataclasses

import numpy as np

from ....error import TypeInferenceError
from ....ir.op import Op, register_op_attr
from ....ir.type import TupleType
from ...expr import Tuple, TupleGetItem
from ...op import attrs as A
from ...op import tensor as _t
from ...op.attrs_nn import Conv2DTransposeAttrs
from ...op.op import OpPattern, make_call, register_relay_op
from ...op.type_relations import tensor_arg
from .canonicalize import _centred, _clip_cast, along, binary_operands_at_output_scale, requantize_value
from .qnn import _F32, _I32, _PARAMS, QUANTIZED, BroadcastAttrs, _binary_rel, _check_params, _quantized
from .reference import _along, _clip, _requantized

__all__ = ["subtract", "concatenate", "batch_matmul", "conv2d_transpose", "avg_pool2d"]


def _base(name, attrs, *args):
    """The value of plain operator ``name`` (its ``FEvaluate``)."""
    return Op.get(name).get_attr("FEvaluate")(attrs, *args)


def _base_rel(qnn_name, base_name, params, data_args=2):
    """A relation checking the quantized operands and ``params`` ((scale, zero point) indices), then typing as
    ``base_name`` does on the data arguments."""

    def rel(types, attrs):
        data = [_quantized(qnn_name, tensor_arg(types, i, "data"), "data") for i in range(data_args)]
        _check_params(qnn_name, types, params, data[0])
        return Op.get(base_name).get_attr("FTypeRelation")(types[:data_args], attrs)

    return rel


# -- subtract ----------------------------------------------------------------------------------------------------------

register_relay_op("qnn.subtract", 8, _binary_rel("qnn.subtract"), OpPattern.BROADCAST, BroadcastAttrs,
                  dtypes=(QUANTIZED, QUANTIZED, *_PARAMS * 3))


def subtract(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale, output_zero_point,
             lhs_axis=-1, rhs_axis=-1):
    """The quantized difference of quantized ``lhs`` and ``rhs`` in the output's quantization."""
    return make_call("qnn.subtract", [lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
                                      output_zero_point], BroadcastAttrs(lhs_axis, rhs_axis))


def _subtract_canonical(attrs, inputs, types):
    a, b, zero = binary_operands_at_output_scale(attrs, inputs, types)
    return _clip_cast(_t.add(_t.subtract(a, b), zero), types[0].dtype)


def _subtract_value(attrs, lhs, rhs, ls, lz, rs, rz, os_, oz):
    """Both operands requantized to the output (unclipped), subtracted, plus one output zero point."""
    nl, nr, la, ra = lhs.ndim, rhs.ndim, attrs.lhs_axis, attrs.rhs_axis
    a = _requantized(lhs.astype(np.int64) - _along(lz, la, nl), _along(ls, la, nl), _along(os_, la, nl),
                     _along(oz, la, nl), "UPWARD")
    b = _requantized(rhs.astype(np.int64) - _along(rz, ra, nr), _along(rs, ra, nr), _along(os_, ra, nr),
                     _along(oz, ra, nr), "UPWARD")
    return _clip(a - b + _along(oz, la, nl).astype(np.float64), lhs.dtype)


# -- concatenate -------------------------------------------------------------------------------------------------------

def _concatenate_rel(types, attrs):
    data, scales, zero_points = types[:3]
    if not all(isinstance(t, TupleType) for t in (data, scales, zero_points)) \
            or not len(data.fields) == len(scales.fields) == len(zero_points.fields):
        raise TypeInferenceError(f"qnn.concatenate: data, input scales and input zero points must be tuples of one "
                                 f"length, got {data}, {scales} and {zero_points}")
    for i, field in enumerate(data.fields):
        _quantized("qnn.concatenate", field, f"tensor {i}")
        _check_params("qnn.concatenate", [scales.fields[i], zero_points.fields[i]], [(0, 1)], field)
    _check_params("qnn.concatenate", types, [(3, 4)], data)
    return Op.get("concatenate").get_attr("FTypeRelation")([data], attrs)


register_relay_op("qnn.concatenate", 5, _concatenate_rel, OpPattern.INJECTIVE, A.ConcatenateAttrs,
                  dtypes=(QUANTIZED, _F32, _I32, *_PARAMS))


def concatenate(data, input_scales, input_zero_points, output_scale, output_zero_point, axis):
    """The quantized tensors of ``data`` (each with its scale and zero point) joined along ``axis`` in the output's
    quantization."""
    if isinstance(data, list | tuple):
        data = Tuple(list(data))
    elif hasattr(data, "tuple_value") and not isinstance(data, TupleGetItem):  # a TupleWrapper
        data = data.tuple_value
    return make_call("qnn.concatenate", [data, Tuple(list(input_scales)), Tuple(list(input_zero_points)),
                                         output_scale, output_zero_point], A.ConcatenateAttrs(int(axis)))


def _field(expr, i):
    return expr.fields[i] if isinstance(expr, Tuple) else TupleGetItem(expr, i)


def _concatenate_canonical(attrs, inputs, types):
    data, scales, zps, os_, oz = inputs
    parts = []
    for i, field_type in enumerate(types[0].fields):
        centred = _centred(_field(data, i), _field(zps, i))
        value = requantize_value(centred, _field(scales, i), os_, oz, "UPWARD")
        parts.append(_clip_cast(value, field_type.dtype))
    return _t.concatenate(parts, attrs.axis)


def _concatenate_value(attrs, data, scales, zps, os_, oz):
    """Each tensor requantized to the output, then joined."""
    parts = [_clip(_requantized(d.astype(np.int64) - np.asarray(z).reshape(()), s, os_, oz, "UPWARD"), d.dtype)
             for d, s, z in zip(data, scales, zps, strict=True)]
    return np.concatenate(parts, axis=attrs.axis)


# -- batch_matmul, conv2d_transpose ---------------------------------------------------------------------------------

_PRODUCT_DTYPES = (QUANTIZED, QUANTIZED, _I32, _I32, _F32, _F32)
register_relay_op("qnn.batch_matmul", 6, _base_rel("qnn.batch_matmul", "nn.batch_matmul", [(4, 2), (5, 3)]),
                  OpPattern.OUT_ELEMWISE_FUSABLE, A.BatchMatmulAttrs, dtypes=_PRODUCT_DTYPES)
register_relay_op("qnn.conv2d_transpose", 6,
                  _base_rel("qnn.conv2d_transpose", "nn.conv2d_transpose", [(4, 2), (5, 3)]),
                  OpPattern.OUT_ELEMWISE_FUSABLE, Conv2DTransposeAttrs, dtypes=_PRODUCT_DTYPES)


def batch_matmul(x, y, x_zero_point, y_zero_point, x_scale, y_scale, out_dtype="int32"):
    """``(x - x_zero_point) @ (y - y_zero_point)^T`` per batch in ``out_dtype`` (TVM's argument order)."""
    return make_call("qnn.batch_matmul", [x, y, x_zero_point, y_zero_point, x_scale, y_scale],
                     A.BatchMatmulAttrs(out_dtype, False, True))


def conv2d_transpose(data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale, kernel_size=None,
                     channels=None, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, data_layout="NCHW",
                     kernel_layout="IOHW", out_layout="", output_padding=(0, 0), out_dtype="int32"):
    """The transposed 2-D convolution of the centred ``data`` and ``weight`` in ``out_dtype``."""
    attrs = Conv2DTransposeAttrs(channels, kernel_size, strides, padding, output_padding, dilation, groups,
                                 data_layout, kernel_layout, out_layout, out_dtype)
    return make_call("qnn.conv2d_transpose", [data, weight, input_zero_point, kernel_zero_point, input_scale,
                                              kernel_scale], attrs)


def _int32(attrs):
    return dataclasses.replace(attrs, out_dtype=attrs.out_dtype or "int32")


def _weight_axis(name, attrs):
    """The axis of the weight that per-channel kernel zero points run along (its output channels)."""
    return attrs.kernel_layout.index("O") if name == "qnn.conv2d_transpose" else 1


def _product_canonical(name, base):
    def canonical(attrs, inputs, types):
        x, w, x_zp, w_zp = inputs[:4]
        nd = len(types[1].shape)
        centred_w = _centred(w, along(w_zp, types[3], _weight_axis(name, attrs), nd), "int32")
        return make_call(base, [_centred(x, x_zp, "int32"), centred_w], _int32(attrs))

    return canonical


def _product_value(name, base):
    def value(attrs, x, w, x_zp, w_zp, x_scale, w_scale):
        centred_w = w.astype(np.int64) - _along(w_zp, _weight_axis(name, attrs), w.ndim)
        return _base(base, _int32(attrs), x.astype(np.int64) - np.asarray(x_zp).reshape(()), centred_w)

    return value


# -- avg_pool2d --------------------------------------------------------------------------------------------------------

register_relay_op("qnn.avg_pool2d", 5, _base_rel("qnn.avg_pool2d", "nn.avg_pool2d", [(1, 2), (3, 4)], 1),
                  OpPattern.OUT_ELEMWISE_FUSABLE, A.AvgPool2DAttrs, dtypes=(QUANTIZED, *_PARAMS, *_PARAMS))


def avg_pool2d(data, input_scale, input_zero_point, output_scale, output_zero_point, pool_size, strides, padding,
               dilation, ceil_mode=False, count_include_pad=True, layout="NHWC", out_layout=""):
    """The 2-D average pooling of quantized ``data`` in the output's quantization (TVM's argument order)."""
    attrs = A.AvgPool2DAttrs(pool_size, strides, dilation, padding, layout, out_layout, ceil_mode, count_include_pad)
    return make_call("qnn.avg_pool2d", [data, input_scale, input_zero_point, output_scale, output_zero_point], attrs)


def _avg_pool2d_canonical(attrs, inputs, types):
    data, s_in, z_in, s_out, z_out = inputs
    average = make_call("nn.avg_pool2d", [_t.cast(_centred(data, z_in, "int32"), "float32")], attrs)
    return _clip_cast(requantize_value(average, s_in, s_out, z_out, "TONEAREST"), types[0].dtype)


def _avg_pool2d_value(attrs, data, s_in, z_in, s_out, z_out):
    """The average of the centred values, requantized to the output (halves away from zero)."""
    centred = (data.astype(np.int32) - np.asarray(z_in).reshape(())).astype(np.float32)
    average = _base("nn.avg_pool2d", attrs, centred)
    return _clip(_requantized(average, s_in, s_out, z_out, "TONEAREST"), data.dtype)


for _name, _canonical, _value in (
        ("qnn.subtract", _subtract_canonical, _subtract_value),
        ("qnn.concatenate", _concatenate_canonical, _concatenate_value),
        ("qnn.batch_matmul", _product_canonical("qnn.batch_matmul", "nn.batch_matmul"),
         _product_value("qnn.batch_matmul", "nn.batch_matmul")),
        ("qnn.conv2d_transpose", _product_canonical("qnn.conv2d_transpose", "nn.conv2d_transpose"),
         _product_value("qnn.conv2d_transpose", "nn.conv2d_transpose")),
        ("qnn.avg_pool2d", _avg_pool2d_canonical, _avg_pool2d_value)):
    register_op_attr(_name, "FTVMQnnCanonicalize", _canonical)
    register_op_attr(_name, "FEvaluate", _value)
