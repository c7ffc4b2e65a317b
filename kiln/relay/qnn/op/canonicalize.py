"""The quantized operators in plain Relay operators (TVM's ``FTVMQnnCanonicalize``), which ``QnnCanonicalize``
(:mod:`kiln.relay.transform.qnn_canonicalize`) applies before a build: what the definitions in :mod:`.qnn`'s
docstring compute, operation by operation as the numpy values of :mod:`.reference` do (rounding in float32 for
``quantize``, in float64 for the requantizations), so compiled code and the interpreter agree exactly.
"""

from ....ir.op import register_op_attr
from ... import op as _op
from ...expr import const
from ...op import nn as _nn
from ...op import tensor as _t
from .reference import INT_RANGE
from .requantize_config import resolve_rounding

__all__ = ["along", "round_half_up", "requantize_value", "fixed_point_ratio"]


def along(param, param_type, axis, ndim):
    """A scalar or per-channel ``param`` reshaped to broadcast along ``axis`` of a rank-``ndim`` tensor."""
    if len(param_type.shape) == 0 or ndim == 0 or int(param_type.shape[0]) == 1:
        return _t.reshape(param, ()) if len(param_type.shape) else param
    shape = [1] * ndim
    shape[axis % ndim] = int(param_type.shape[0])
    return _t.reshape(param, shape)


def round_half_up(x, rounding):
    """``UPWARD``: ``floor(x + 0.5)``; ``TONEAREST``: halves away from zero."""
    half = const(0.5, "float64")
    if rounding == "TONEAREST":
        return _t.multiply(_t.sign(x), _t.floor(_t.add(_t.abs(x), half)))
    return _t.floor(_t.add(x, half))


def _f64(x):
    return _t.cast(x, "float64")


def fixed_point_ratio(ratio):
    """``ratio`` (float64, positive) as TVM's fixed-point multiplier represents it: its significand in [0.5, 1)
    rounded to 31 bits (:func:`.reference.fixed_point_ratio`)."""
    two = const(2.0, "float64")
    exponent = _t.add(_t.floor(_op.log2(ratio)), const(1.0, "float64"))
    # log2 may round across an integer near a power of two: bring the significand back into [0.5, 1)
    low = _op.less(_t.divide(ratio, _t.power(two, exponent)), const(0.5, "float64"))
    exponent = _t.subtract(exponent, _t.cast(low, "float64"))
    high = _op.greater_equal(_t.divide(ratio, _t.power(two, exponent)), const(1.0, "float64"))
    exponent = _t.add(exponent, _t.cast(high, "float64"))
    significand = _t.divide(ratio, _t.power(two, exponent))
    q31 = _t.floor(_t.add(_t.multiply(significand, const(2.0 ** 31, "float64")), const(0.5, "float64")))
    value = _t.multiply(q31, _t.power(two, _t.subtract(exponent, const(31.0, "float64"))))
    return _t.where(_op.greater(ratio, const(0.0, "float64")), value, ratio)


def requantize_value(centred, scale_in, scale_out, zp_out, rounding):
    """``round(centred * scale_in / scale_out) + zp_out`` in float64 (operands already shaped to broadcast), the
    ratio of scales as TVM's fixed-point multiplier holds it."""
    ratio = fixed_point_ratio(_t.divide(_f64(scale_in), _f64(scale_out)))
    return _t.add(round_half_up(_t.multiply(_f64(centred), ratio), rounding), _f64(zp_out))


def _clip_cast(x, dtype):
    low, high = INT_RANGE[dtype]
    return _t.cast(_t.clip(x, low, high), dtype)


def _centred(x, zp, wide="int64"):
    return _t.subtract(_t.cast(x, wide), _t.cast(zp, wide))


def _quantize(attrs, inputs, types):
    data, scale, zp = inputs
    nd = len(types[0].shape)
    s, z = along(scale, types[1], attrs.axis, nd), along(zp, types[2], attrs.axis, nd)
    value = _t.add(_t.round(_t.divide(data, s)), _t.cast(z, "float32"))
    return _clip_cast(value, attrs.out_dtype)


def _dequantize(attrs, inputs, types):
    data, scale, zp = inputs
    nd = len(types[0].shape)
    centred = _centred(data, along(zp, types[2], attrs.axis, nd), "int32")
    return _t.cast(_t.multiply(_t.cast(centred, "float32"), along(scale, types[1], attrs.axis, nd)), attrs.out_dtype)


def _requantize(attrs, inputs, types):
    data, s_in, z_in, s_out, z_out = inputs
    nd = len(types[0].shape)
    p = [along(x, t, attrs.axis, nd) for x, t in zip(inputs[1:], types[1:5], strict=True)]
    value = requantize_value(_centred(data, p[1]), p[0], p[2], p[3], resolve_rounding(attrs.rounding))
    return _clip_cast(value, attrs.out_dtype)


def binary_operands_at_output_scale(attrs, inputs, types):
    """``(a, b, zero)`` of a quantized binary operator (``qnn.add``, ``qnn.subtract``): both operands requantized to
    the output's scale and zero point (float64, unclipped), and the output zero point broadcast like the left one."""
    lhs, rhs, ls, lz, rs, rz, os_, oz = inputs

    def to_output(x, x_type, scale, zp, axis):
        nd = len(x_type.shape)
        return requantize_value(_centred(x, along(zp[0], zp[1], axis, nd)), along(scale[0], scale[1], axis, nd),
                                along(os_, types[6], axis, nd), along(oz, types[7], axis, nd), "UPWARD")

    a = to_output(lhs, types[0], (ls, types[2]), (lz, types[3]), attrs.lhs_axis)
    b = to_output(rhs, types[1], (rs, types[4]), (rz, types[5]), attrs.rhs_axis)
    return a, b, _f64(along(oz, types[7], attrs.lhs_axis, len(types[0].shape)))


def _add(attrs, inputs, types):
    a, b, zero = binary_operands_at_output_scale(attrs, inputs, types)
    return _clip_cast(_t.subtract(_t.add(a, b), zero), types[0].dtype)


def _mul(attrs, inputs, types):
    lhs, rhs, ls, lz, rs, rz, os_, oz = inputs
    nl, nr = len(types[0].shape), len(types[1].shape)
    product = _t.multiply(_centred(lhs, along(lz, types[3], attrs.lhs_axis, nl)),
                          _centred(rhs, along(rz, types[5], attrs.rhs_axis, nr)))
    scale = _t.multiply(_f64(along(ls, types[2], attrs.lhs_axis, nl)), _f64(along(rs, types[4], attrs.rhs_axis, nr)))
    return _clip_cast(requantize_value(product, scale, os_, oz, "UPWARD"), types[0].dtype)


def _dense(attrs, inputs, types):
    data, weight, in_zp, k_zp = inputs[:4]
    w = _centred(weight, along(k_zp, types[3], 0, 2), "int32")
    return _nn.dense(_centred(data, in_zp, "int32"), w, units=attrs.units, out_dtype=attrs.out_dtype or "int32")


def _conv2d(attrs, inputs, types):
    data, kernel, in_zp, k_zp = inputs[:4]
    k = _centred(kernel, along(k_zp, types[3], attrs.kernel_layout.index("O"), 4), "int32")
    return _nn.conv2d(_centred(data, in_zp, "int32"), k, **dict(attrs, out_dtype=attrs.out_dtype or "int32"))


for _name, _fn in (("qnn.quantize", _quantize), ("qnn.dequantize", _dequantize), ("qnn.requantize", _requantize),
                   ("qnn.add", _add), ("qnn.mul", _mul), ("qnn.dense", _dense), ("qnn.conv2d", _conv2d)):
    register_op_attr(_name, "FTVMQnnCanonicalize", _fn)
