"""Quantized operators (TVM's ``relay.qnn.op``): ``quantize dequantize requantize add mul dense conv2d``.

A quantized tensor ``q`` stands for the real values ``scale * (q - zero_point)``. Scales (float32) and zero points
(int32) are Relay arguments, scalars or, along ``axis``, one per channel. The operators, as TVM defines them:

* ``quantize(x, s, z)`` = ``clip(round(x / s) + z)`` in ``out_dtype`` (round half to even);
* ``dequantize(q, s, z)`` = ``s * (q - z)`` in float32;
* ``requantize(q, s_in, z_in, s_out, z_out)`` = ``clip(round(s_in / s_out * (q - z_in)) + z_out)`` (``rounding``:
  ``"UPWARD"``, TVM's default, rounds halves up; ``"TONEAREST"`` away from zero);
* ``add``/``mul`` of two quantized tensors into the output's quantization: ``add`` requantizes both operands to it
  and sums, ``mul`` requantizes the product of the centred operands (its scale ``s_l * s_r``); the lhs dtype;
* ``dense``/``conv2d``: the integer product of the centred operands in ``out_dtype`` (int32), scales unused (they
  describe the result: ``s_data * s_kernel``); convolution padding reads the input zero point.

Their values (``FEvaluate``, :mod:`.reference`) let the interpreter run them and ``FoldConstant(fold_qnn=True)``
fold them; plain ``FoldConstant`` keeps them, as TVM's does.
"""

from dataclasses import dataclass

from ....error import TypeInferenceError
from ....ir.attrs import Attrs
from ....ir.type import TensorType
from ...op import attrs as A
from ...op.nn import _conv2d_rel, _dense_rel
from ...op.op import OpPattern, make_call, register_relay_op
from ...op.type_relations import broadcast_shapes, tensor_arg

__all__ = ["quantize", "dequantize", "requantize", "add", "mul", "dense", "conv2d", "QuantizeAttrs",
           "DequantizeAttrs", "RequantizeAttrs", "BroadcastAttrs"]

QUANTIZED = ("int8", "uint8", "int16", "int32")


@dataclass(frozen=True, slots=True)
class QuantizeAttrs(Attrs):
    out_dtype: str = "int8"
    axis: int = -1


@dataclass(frozen=True, slots=True)
class DequantizeAttrs(Attrs):
    axis: int = -1
    out_dtype: str = "float32"


@dataclass(frozen=True, slots=True)
class RequantizeAttrs(Attrs):
    axis: int = -1
    rounding: str = "None"
    compute_dtype: str = "None"
    out_dtype: str = "int8"


@dataclass(frozen=True, slots=True)
class BroadcastAttrs(Attrs):
    lhs_axis: int = -1
    rhs_axis: int = -1


def _check_params(op, types, pairs, data):
    """Each ``(scale index, zero point index)`` of ``pairs`` is a float32 and an int32 scalar or channel vector."""
    for s, z in pairs:
        for index, dtype, what in ((s, "float32", "scale"), (z, "int32", "zero_point")):
            t = tensor_arg(types, index, what)
            if t.dtype != dtype or len(t.shape) > 1:
                raise TypeInferenceError(f"{op}: {what} (argument {index}) must be a {dtype} scalar or vector, "
                                         f"got {t} (data {data})")


def _quantized(op, t, what, dtypes=QUANTIZED):
    if t.dtype not in dtypes:
        raise TypeInferenceError(f"{op}: {what} must be one of {', '.join(dtypes)}, got {t}")
    return t


def _quantize_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    _check_params("qnn.quantize", types, [(1, 2)], data)
    _quantized("qnn.quantize", TensorType((), attrs.out_dtype), "out_dtype", (*QUANTIZED, "uint16"))  # as TVM
    return TensorType(data.shape, attrs.out_dtype)


def _dequantize_rel(types, attrs):
    data = _quantized("qnn.dequantize", tensor_arg(types, 0, "data"), "data")
    _check_params("qnn.dequantize", types, [(1, 2)], data)
    return TensorType(data.shape, attrs.out_dtype)


def _requantize_rel(types, attrs):
    data = _quantized("qnn.requantize", tensor_arg(types, 0, "data"), "data")
    _check_params("qnn.requantize", types, [(1, 2), (3, 4)], data)
    if attrs.rounding not in ("None", "UPWARD", "TONEAREST"):
        raise TypeInferenceError(f"qnn.requantize: rounding must be UPWARD or TONEAREST, got {attrs.rounding!r}")
    return TensorType(data.shape, _quantized("qnn.requantize", TensorType((), attrs.out_dtype), "out_dtype").dtype)


def _binary_rel(name):
    def rel(types, attrs):
        lhs, rhs = tensor_arg(types, 0, "lhs"), tensor_arg(types, 1, "rhs")
        _quantized(name, lhs, "lhs")
        _quantized(name, rhs, "rhs")
        _check_params(name, types, [(2, 3), (4, 5), (6, 7)], lhs)
        return TensorType(broadcast_shapes(lhs.shape, rhs.shape), lhs.dtype)

    return rel


def _product_rel(name, base):
    def rel(types, attrs):
        data, weight = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "weight")
        _quantized(name, data, "data")
        _quantized(name, weight, "weight")
        _check_params(name, types, [(4, 2), (5, 3)], data)
        return base(types[:2], attrs)

    return rel


_F32, _I32 = ("float32",), ("int32",)
_PARAMS = (_F32, _I32)  # a scale and a zero point
register_relay_op("qnn.quantize", 3, _quantize_rel, OpPattern.ELEMWISE, QuantizeAttrs, dtypes=(_F32, *_PARAMS))
register_relay_op("qnn.dequantize", 3, _dequantize_rel, OpPattern.ELEMWISE, DequantizeAttrs,
                  dtypes=(QUANTIZED, *_PARAMS))
register_relay_op("qnn.requantize", 5, _requantize_rel, OpPattern.ELEMWISE, RequantizeAttrs,
                  dtypes=(QUANTIZED, *_PARAMS, *_PARAMS))
for _name in ("qnn.add", "qnn.mul"):
    register_relay_op(_name, 8, _binary_rel(_name), OpPattern.BROADCAST, BroadcastAttrs,
                      dtypes=(QUANTIZED, QUANTIZED, *_PARAMS * 3))
register_relay_op("qnn.dense", 6, _product_rel("qnn.dense", _dense_rel), OpPattern.OUT_ELEMWISE_FUSABLE,
                  A.DenseAttrs, dtypes=(QUANTIZED, QUANTIZED, _I32, _I32, _F32, _F32))
register_relay_op("qnn.conv2d", 6, _product_rel("qnn.conv2d", _conv2d_rel), OpPattern.OUT_ELEMWISE_FUSABLE,
                  A.Conv2DAttrs, dtypes=(QUANTIZED, QUANTIZED, _I32, _I32, _F32, _F32))


def quantize(data, output_scale, output_zero_point, axis=-1, out_dtype="int8"):
    """Quantize float ``data`` to ``out_dtype`` with ``output_scale`` and ``output_zero_point`` (module docstring).
    """
    return make_call("qnn.quantize", [data, output_scale, output_zero_point], QuantizeAttrs(out_dtype, axis))


def dequantize(data, input_scale, input_zero_point, axis=-1, out_dtype="float32"):
    """The real values ``input_scale * (data - input_zero_point)`` of quantized ``data``."""
    return make_call("qnn.dequantize", [data, input_scale, input_zero_point], DequantizeAttrs(axis, out_dtype))


def requantize(data, input_scale, input_zero_point, output_scale, output_zero_point, axis=-1, rounding="None",
               compute_dtype="None", out_dtype="int8"):
    """``data`` quantized with the input scale and zero point, re-expressed with the output ones."""
    return make_call("qnn.requantize", [data, input_scale, input_zero_point, output_scale, output_zero_point],
                     RequantizeAttrs(axis, rounding, compute_dtype, out_dtype))


def add(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale, output_zero_point,
        lhs_axis=-1, rhs_axis=-1):
    """The quantized sum of quantized ``lhs`` and ``rhs`` in the output's quantization."""
    return make_call("qnn.add", [lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
                                 output_zero_point], BroadcastAttrs(lhs_axis, rhs_axis))


def mul(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale, output_zero_point,
        lhs_axis=-1, rhs_axis=-1):
    """The quantized product of quantized ``lhs`` and ``rhs`` in the output's quantization."""
    return make_call("qnn.mul", [lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
                                 output_zero_point], BroadcastAttrs(lhs_axis, rhs_axis))


def dense(data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale, units, out_dtype="int32"):
    """``(data - input_zero_point) @ (weight - kernel_zero_point).T`` in ``out_dtype`` (TVM's argument order)."""
    return make_call("qnn.dense", [data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale],
                     A.DenseAttrs(units, out_dtype))


def conv2d(data, kernel, input_zero_point, kernel_zero_point, input_scale, kernel_scale, kernel_size, channels,
           strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, data_layout="NCHW", kernel_layout="OIHW",
           out_layout="", out_dtype="int32"):
    """The 2-D convolution of the centred ``data`` and ``kernel`` in ``out_dtype`` (padding reads the input zero
    point; TVM's argument order)."""
    return make_call("qnn.conv2d", [data, kernel, input_zero_point, kernel_zero_point, input_scale, kernel_scale],
                     A.Conv2DAttrs(strides, padding, dilation, groups, channels, kernel_size, data_layout,
                                   kernel_layout, out_layout, out_dtype))


# the operators defined beside their plain counterparts, reachable here too (TVM's relay.qnn.op.qnn holds them all)
from .qnn_elemwise import (  # noqa: E402, F401
    abs,  # noqa: A004
    erf,
    exp,
    hardswish,
    leaky_relu,
    log,
    rsqrt,
    sigmoid,
    softmax,
    sqrt,
    tanh,
)
from .qnn_nn import avg_pool2d, batch_matmul, concatenate, conv2d_transpose, subtract  # noqa: E402, F401
