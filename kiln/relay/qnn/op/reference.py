"""Numpy values of the quantized operators (``FEvaluate``; the definitions are in :mod:`.qnn`'s docstring).

Each follows its canonical form (:mod:`.canonicalize`) operation by operation, so the interpreter and compiled
code agree exactly: ``quantize`` divides and rounds (halves away from zero, as Relay's ``round``) in float32, the
requantizations scale and round in float64 by the ratio of scales as TVM's fixed-point multiplier holds it (31-bit
significand), so they give TVM's results, ties included (products beyond 2**53 aside).
"""

import dataclasses

import numpy as np

from ...reference.common import register, round_half_away
from ...reference.conv import conv2d as _conv2d
from ...reference.nn import dense as _dense
from . import qnn  # noqa: F401  (the operators are registered before their values)
from .requantize_config import resolve_rounding

__all__ = ["quantize", "dequantize", "requantize", "qnn_add", "qnn_mul", "qnn_dense", "qnn_conv2d", "INT_RANGE"]

INT_RANGE = {d: (int(np.iinfo(d).min), int(np.iinfo(d).max)) for d in ("int8", "uint8", "int16", "uint16", "int32")}
"""The values of each quantized dtype, which results are clipped to."""


def _along(param, axis, ndim):
    """A scalar or per-channel ``param`` shaped to broadcast along ``axis`` of a rank-``ndim`` tensor."""
    param = np.asarray(param)
    if param.ndim == 0 or param.size == 1 or ndim == 0:
        return param.reshape(())
    shape = [1] * ndim
    shape[axis % ndim] = param.size
    return param.reshape(shape)


def _clip(values, dtype):
    low, high = INT_RANGE[np.dtype(dtype).name]
    return np.clip(values, low, high).astype(dtype)


def _round(values, rounding):
    """``UPWARD`` (TVM's default): halves up; ``TONEAREST``: halves away from zero."""
    if rounding == "TONEAREST":
        return np.sign(values) * np.floor(np.abs(values) + 0.5)
    return np.floor(values + 0.5)


def fixed_point_ratio(ratio):
    """A ratio of scales as TVM's requantization holds it: its significand in [0.5, 1) rounded (halves away) to a
    31-bit integer, times its power of two. Multiplying by this rather than the exact ratio gives TVM's results
    even at ties (``-5 * 17 / 10`` is ``-8.5`` exactly, but TVM's 1.7 is slightly more, so it rounds to -9)."""
    ratio = np.asarray(ratio, np.float64)
    significand, exponent = np.frexp(ratio)
    return np.floor(significand * 2.0 ** 31 + 0.5) * np.exp2(exponent.astype(np.float64) - 31)


def _requantized(centred, in_scale, out_scale, out_zp, rounding):
    """``round(centred * in_scale / out_scale) + out_zp`` in float64, unclipped, with TVM's fixed-point ratio."""
    ratio = fixed_point_ratio(np.asarray(in_scale, np.float64) / np.asarray(out_scale, np.float64))
    return _round(centred.astype(np.float64) * ratio, rounding) + np.asarray(out_zp, np.float64)


@register("qnn.quantize")
def quantize(attrs, data, scale, zero_point):
    """``clip(round(data / scale) + zero_point)`` in float32."""
    nd = data.ndim
    scaled = round_half_away(data.astype(np.float32) / _along(scale, attrs.axis, nd).astype(np.float32))
    return _clip(scaled + _along(zero_point, attrs.axis, nd).astype(np.float32), attrs.out_dtype)


@register("qnn.dequantize")
def dequantize(attrs, data, scale, zero_point):
    """``scale * (data - zero_point)``."""
    nd = data.ndim
    centred = (data.astype(np.int32) - _along(zero_point, attrs.axis, nd).astype(np.int32)).astype(np.float32)
    return (centred * _along(scale, attrs.axis, nd)).astype(attrs.out_dtype)


@register("qnn.requantize")
def requantize(attrs, data, in_scale, in_zp, out_scale, out_zp):
    """``clip(round(in_scale / out_scale * (data - in_zp)) + out_zp)``."""
    nd, ax = data.ndim, attrs.axis
    centred = data.astype(np.int64) - _along(in_zp, ax, nd)
    value = _requantized(centred, _along(in_scale, ax, nd), _along(out_scale, ax, nd), _along(out_zp, ax, nd),
                         resolve_rounding(attrs.rounding))
    return _clip(value, attrs.out_dtype)


@register("qnn.add")
def qnn_add(attrs, lhs, rhs, ls, lz, rs, rz, os_, oz):
    """Both operands requantized to the output (unclipped), summed, less one output zero point."""
    nl, nr, la, ra = lhs.ndim, rhs.ndim, attrs.lhs_axis, attrs.rhs_axis
    a = _requantized(lhs.astype(np.int64) - _along(lz, la, nl), _along(ls, la, nl), _along(os_, la, nl),
                     _along(oz, la, nl), "UPWARD")
    b = _requantized(rhs.astype(np.int64) - _along(rz, ra, nr), _along(rs, ra, nr), _along(os_, ra, nr),
                     _along(oz, ra, nr), "UPWARD")
    return _clip(a + b - _along(oz, la, nl).astype(np.float64), lhs.dtype)


@register("qnn.mul")
def qnn_mul(attrs, lhs, rhs, ls, lz, rs, rz, os_, oz):
    """The centred product, of scale ``ls * rs``, requantized to the output."""
    a = lhs.astype(np.int64) - _along(lz, attrs.lhs_axis, lhs.ndim)
    b = rhs.astype(np.int64) - _along(rz, attrs.rhs_axis, rhs.ndim)
    scale = (_along(ls, attrs.lhs_axis, lhs.ndim).astype(np.float64)
             * _along(rs, attrs.rhs_axis, rhs.ndim).astype(np.float64))  # per channel: along each operand's axis
    return _clip(_requantized(a * b, scale, os_, oz, "UPWARD"), lhs.dtype)


@register("qnn.dense")
def qnn_dense(attrs, data, weight, in_zp, k_zp, in_scale, k_scale):
    """``(data - in_zp) @ (weight - k_zp).T`` in ``out_dtype``."""
    centred_w = weight.astype(np.int64) - _along(k_zp, 0, 2)
    centred_d = data.astype(np.int64) - np.asarray(in_zp).reshape(())
    return _dense(dataclasses.replace(attrs, out_dtype=attrs.out_dtype or "int32"), centred_d, centred_w)


@register("qnn.conv2d")
def qnn_conv2d(attrs, data, kernel, in_zp, k_zp, in_scale, k_scale):
    """The convolution of the centred operands (padding, a zero after centring, reads the input zero point)."""
    out_axis = attrs.kernel_layout.index("O")
    centred_k = kernel.astype(np.int64) - _along(k_zp, out_axis, kernel.ndim)
    centred_d = data.astype(np.int64) - np.asarray(in_zp).reshape(())
    if not attrs.out_dtype:
        attrs = dataclasses.replace(attrs, out_dtype="int32")
    return _conv2d(attrs, centred_d, centred_k)
