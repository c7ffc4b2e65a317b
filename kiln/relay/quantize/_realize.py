"""Realization: the last step of quantization (TVM's ``QuantizeRealize``, ``src/relay/quantize/realize.cc``).

The calibrated graph still computes in float with ``simulated_quantize`` rounding its values. Realization rewrites
it into integer arithmetic: a value becomes a :class:`QRealizeIntExpr`, an integer tensor ``data`` (of ``dtype``)
with the real number each unit stands for (``dom_scale``), so the float value is ``data * dom_scale``. A
``simulated_quantize`` of a float value scales, rounds and clips it to integers; of an integer value it rescales it
from one scale to another: a shift when the ratio is a power of two (rounding to nearest when
``round_for_shift``), else a fixed-point multiplication in int64. Convolutions, dense and batch_matmul compute on
``dtype_input``/``dtype_weight`` operands into ``dtype_activation`` (scales multiply); ``add`` and ``concatenate``
first bring their operands to one scale; pooling, ``relu``, reshapes and the other data-movement operators carry
the scale through. Wherever an integer value meets an operator without a rule, it is converted back to float
(:meth:`QRealizeIntExpr.realize`).
"""

import dataclasses
import math

import numpy as np

from ...error import KilnError
from ...ir.op import register_op_attr
from .. import op as _op
from ..expr import Call, Constant, Tuple, const
from ..op.annotation import stop_fusion
from ..transform.function_pass import function_pass
from .config import QAnnotateKind, current_qconfig
from .forward_rewrite import TempExpr, forward_rewrite
from .simulated_quantize import OP_NAME

__all__ = ["QRealizeIntExpr", "QuantizeRealize", "fixed_point_multiply"]

ATTR = "FQRealizeRewrite"


class QRealizeIntExpr(TempExpr):
    """An integer tensor ``data`` of ``dtype`` standing for ``data * dom_scale`` (a Python float)."""

    def __init__(self, data, dom_scale, dtype):
        self.data, self.dom_scale, self.dtype = data, float(dom_scale), str(dtype)

    def realize(self):
        return _op.multiply(_op.cast(self.data, "float32"), const(np.float32(self.dom_scale)))


def _scalar(expr) -> float:
    if not isinstance(expr, Constant) or expr.data.shape != ():
        raise KilnError(f"QuantizeRealize: expected a scalar constant (run calibration first), got "
                        f"{type(expr).__name__}")
    return float(expr.data.numpy())


def _forward(ref_call, args, **attr_changes):
    attrs = dataclasses.replace(ref_call.attrs, **attr_changes) if attr_changes else ref_call.attrs
    return Call(ref_call.op, tuple(args), attrs, span=ref_call.span)


def _cast(expr, dtype, current):
    return expr if current == dtype else _op.cast(expr, dtype)


def fixed_point_multiply(data, multiplier, rounding="UPWARD"):
    """``data * multiplier`` for an integer tensor and a real ``multiplier``, in int64 fixed-point arithmetic
    (TVM's ``qnn::FixedPointMultiply``): the multiplier is a 31-bit significand and a power of two; the product is
    shifted back with rounding up (``UPWARD``) or to the nearest (``TONEAREST``, ties away from zero); int32 out."""
    significand, exponent = math.frexp(multiplier)
    fixed = round(significand * (1 << 31))
    if fixed == 1 << 31:
        fixed //= 2
        exponent += 1
    left, right = max(exponent, 0), max(-exponent, 0)
    x = _op.cast(data, "int64")
    if left:
        x = _op.left_shift(x, const(left, "int64"))
    x = _op.multiply(x, const(fixed, "int64"))
    total = right + 31
    pos = 1 << (total - 1)
    if rounding == "TONEAREST":
        rounder = _op.where(_op.greater_equal(x, const(0, "int64")), const(pos, "int64"), const(pos - 1, "int64"))
    else:
        rounder = const(pos, "int64")
    x = _op.right_shift(_op.add(x, rounder), const(total, "int64"))
    return _op.cast(x, "int32")


def _mul_and_div(data, s1, s2, dtype):
    """``data * s1 / s2`` in integers, ``s1 >= s2``: a shift, a multiplication, or a fixed-point product."""
    if s1 == s2:
        return data
    factor = s1 / s2
    shift = math.log2(factor)
    if shift <= 0:
        raise KilnError(f"QuantizeRealize: cannot rescale from {s1} to the larger scale {s2}")
    if shift == int(shift):
        return _op.left_shift(data, const(np.array(int(shift), dtype)))
    if factor == int(factor):
        return _op.multiply(data, const(np.array(int(factor), dtype)))
    return _cast(fixed_point_multiply(data, factor, current_qconfig().rounding), dtype, "int32")


def _unify(ref_args, args, dtype=None):
    """Operands of ``add``/``concatenate`` brought to one dtype and one scale: ``(exprs, dtype, dom_scale)``."""
    cfg = current_qconfig()
    if not all(isinstance(a, QRealizeIntExpr) for a in args):
        raise KilnError("QuantizeRealize: operands to unify must all be quantized")
    if dtype is None:
        dtype = cfg.dtype_input if len(args) == 2 and args[1].dtype == cfg.dtype_input else cfg.dtype_activation
    out = []
    for ref, arg in zip(ref_args, args, strict=True):
        data = arg.data
        if arg.dtype != dtype:
            data = _op.cast(data, dtype)
        elif isinstance(ref, Call) and getattr(ref.op, "name", "") == OP_NAME and ref.attrs.kind == QAnnotateKind.INPUT:
            data = _op.cast(stop_fusion(_op.cast(data, cfg.dtype_input)), dtype)
        out.append(data)
    if len(args) == 2:
        scale = min(args[0].dom_scale, args[1].dom_scale)
    else:
        scale = cfg.global_scale / 2.0 ** (cfg.nbit_activation - 1)
    out = [_mul_and_div(data, arg.dom_scale, scale, dtype) for data, arg in zip(out, args, strict=True)]
    return out, dtype, scale


def register_realize_function(*op_names):
    """Register the decorated rule as ``FQRealizeRewrite`` of ``op_names``."""
    def register(rule):
        for name in op_names:
            register_op_attr(name, ATTR, rule)
        return rule
    return register


@register_realize_function(OP_NAME)
def quantize_realize(ref_call, new_args, ctx):
    """Float to integers, or integers to another scale (see the module docstring)."""
    cfg = current_qconfig()
    if ref_call.attrs.rounding != "round":
        raise KilnError("QuantizeRealize: only rounding='round' is realized")
    scale = _scalar(new_args[1])
    lo, hi = _scalar(new_args[2]), _scalar(new_args[3])
    value = new_args[0]
    if isinstance(value, QRealizeIntExpr):
        data, src = value.data, value.dom_scale
        if src == scale:
            return QRealizeIntExpr(_op.clip(data, lo, hi), scale, value.dtype)
        shift = math.log2(scale / src)
        act = cfg.dtype_activation
        if shift == int(shift):
            if shift > 0:
                if cfg.round_for_shift:
                    data = _op.add(data, const(np.array(int(2 ** (shift - 1)), act)))
                data = _op.right_shift(data, const(np.array(int(shift), act)))
            else:
                data = _op.left_shift(data, const(np.array(int(-shift), act)))
            return QRealizeIntExpr(_op.clip(data, lo, hi), scale, value.dtype)
        data = fixed_point_multiply(data, src / scale, cfg.rounding)
        return QRealizeIntExpr(_op.cast(_op.clip(data, lo, hi), value.dtype), scale, value.dtype)
    if isinstance(value, TempExpr):
        value = value.realize()
    scaled = _op.multiply(value, const(np.float32(1.0 / scale)))
    return QRealizeIntExpr(_op.clip(_op.round(scaled), lo, hi), scale, "float32")


@register_realize_function("nn.conv2d", "nn.conv1d", "nn.dense", "nn.batch_matmul")
def data_weight_realize(ref_call, new_args, ctx):
    """Integer operands (``dtype_input``, ``dtype_weight``) accumulated in ``dtype_activation``."""
    lhs, rhs = new_args
    if not (isinstance(lhs, QRealizeIntExpr) and isinstance(rhs, QRealizeIntExpr)):
        return None
    cfg = current_qconfig()
    ldata = _cast(lhs.data, cfg.dtype_input, lhs.dtype)
    rdata = _cast(rhs.data, cfg.dtype_weight, rhs.dtype)
    out = _forward(ref_call, [ldata, rdata], out_dtype=cfg.dtype_activation)
    return QRealizeIntExpr(out, lhs.dom_scale * rhs.dom_scale, cfg.dtype_activation)


@register_realize_function("multiply")
def multiply_realize(ref_call, new_args, ctx):
    """A product of integers in ``dtype_activation``; the scales multiply."""
    lhs, rhs = new_args
    if not (isinstance(lhs, QRealizeIntExpr) and isinstance(rhs, QRealizeIntExpr)):
        return None
    act = current_qconfig().dtype_activation
    out = _forward(ref_call, [_cast(lhs.data, act, lhs.dtype), _cast(rhs.data, act, rhs.dtype)])
    return QRealizeIntExpr(out, lhs.dom_scale * rhs.dom_scale, act)


@register_realize_function("add")
def add_realize(ref_call, new_args, ctx):
    """A sum at the smaller of the two scales, in ``dtype_activation``."""
    if not all(isinstance(a, QRealizeIntExpr) for a in new_args):
        return None
    args, dtype, scale = _unify(ref_call.args, new_args, current_qconfig().dtype_activation)
    args = [stop_fusion(a) if n.dtype == "float32" else a for a, n in zip(args, new_args, strict=True)]
    return QRealizeIntExpr(_forward(ref_call, args), scale, dtype)


@register_realize_function("clip")
def clip_realize(ref_call, new_args, ctx):
    """The bounds divided by the scale."""
    (value,) = new_args
    if not isinstance(value, QRealizeIntExpr):
        return None
    attrs = ref_call.attrs
    out = _forward(ref_call, [value.data], a_min=attrs.a_min / value.dom_scale, a_max=attrs.a_max / value.dom_scale)
    return QRealizeIntExpr(out, value.dom_scale, value.dtype)


@register_realize_function("concatenate")
def concatenate_realize(ref_call, new_args, ctx):
    """Fields brought to one scale and dtype."""
    fields = list(new_args[0])
    if not fields or not isinstance(fields[0], QRealizeIntExpr):
        return None
    ref_fields = ref_call.args[0].fields if isinstance(ref_call.args[0], Tuple) else [None] * len(fields)
    args, dtype, scale = _unify(ref_fields, fields)
    return QRealizeIntExpr(_forward(ref_call, [Tuple(args)]), scale, dtype)


@register_realize_function("nn.relu", "reshape", "strided_slice", "nn.batch_flatten", "transpose",
                           "annotation.stop_fusion")
def identity_realize(ref_call, new_args, ctx):
    """The operator on the integers; scale and dtype unchanged."""
    (value,) = new_args
    if not isinstance(value, QRealizeIntExpr):
        return None
    return QRealizeIntExpr(_forward(ref_call, [value.data]), value.dom_scale, value.dtype)


@register_realize_function("nn.max_pool2d", "nn.max_pool1d")
def cast_input_realize(ref_call, new_args, ctx):
    """Max pooling on ``dtype_input`` integers."""
    (value,) = new_args
    if not isinstance(value, QRealizeIntExpr):
        return None
    dtype = current_qconfig().dtype_input
    return QRealizeIntExpr(_forward(ref_call, [_op.cast(value.data, dtype)]), value.dom_scale, dtype)


@register_realize_function("nn.avg_pool2d", "nn.global_avg_pool2d")
def avg_pool_realize(ref_call, new_args, ctx):
    """Average pooling on ``dtype_activation`` integers."""
    (value,) = new_args
    if not isinstance(value, QRealizeIntExpr):
        return None
    act = current_qconfig().dtype_activation
    return QRealizeIntExpr(_forward(ref_call, [_cast(value.data, act, value.dtype)]), value.dom_scale, act)


@register_realize_function("annotation.cast_hint")
def cast_hint_realize(ref_call, new_args, ctx):
    """The integers converted to the hinted dtype."""
    (value,) = new_args
    if not isinstance(value, QRealizeIntExpr):
        return None
    dtype = ref_call.attrs.dtype
    return QRealizeIntExpr(_op.cast(value.data, dtype), value.dom_scale, dtype)


@function_pass(opt_level=1, name="QuantizeRealize")
def QuantizeRealize(func, mod, ctx):  # noqa: N802  (TVM's pass name)
    """Rewrite a calibrated function into integer arithmetic (see the module docstring)."""
    return forward_rewrite(func, ATTR)
