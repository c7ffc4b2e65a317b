"""Quantized element-wise functions (TVM's ``relay.qnn.op``): ``sqrt rsqrt exp erf sigmoid tanh log abs hardswish
leaky_relu``, and ``softmax``, with their relations, canonical forms and values beside the builders.

Each takes a quantized tensor, its scale and zero point, and the output's scale and zero point, and gives
``quantize(f(dequantize(x)))`` in the input's dtype: exactly what the fake-quantized float program computes.
For 8-bit inputs with constant parameters the canonical form is a lookup table of the 256 results (TVM's
``create_integer_lookup_op``), computed when the program is canonicalized from the same numpy values the
interpreter uses, and indexed by the integers: no float arithmetic is left at run time. Otherwise (wider dtypes,
parameters known only at run time) and for ``softmax``, which is not element-wise, the canonical form computes
the definition in float32.
"""

import numpy as np

from ....ir.op import Op, register_op_attr
from ....ir.type import TensorType
from ...expr import Constant, const
from ...op import attrs as A
from ...op import tensor as _t
from ...op.op import OpPattern, make_call, register_relay_op
from ...op.type_relations import tensor_arg
from .legalizations import hardswish_func
from .qnn import _PARAMS, QUANTIZED, DequantizeAttrs, QuantizeAttrs, _check_params, _quantized
from .reference import INT_RANGE

__all__ = ["sqrt", "rsqrt", "exp", "erf", "sigmoid", "tanh", "log", "abs", "hardswish", "leaky_relu", "softmax"]

_FLOAT_OPS = {"sqrt": "sqrt", "rsqrt": "rsqrt", "exp": "exp", "erf": "erf", "sigmoid": "sigmoid", "tanh": "tanh",
              "log": "log", "abs": "abs", "leaky_relu": "nn.leaky_relu", "softmax": "nn.softmax"}
"""The float operator each quantized one applies to the real values (hardswish has none in Relay)."""


def _rel(name):
    def rel(types, attrs):
        data = _quantized(name, tensor_arg(types, 0, "data"), "data")
        _check_params(name, types, [(1, 2), (3, 4)], data)
        return TensorType(data.shape, data.dtype)

    return rel


def _real_function(name, attrs, real):
    """``f(real)`` in float32 by the float operator's own value (as the interpreter computes it)."""
    if name == "hardswish":
        return hardswish_func(real).astype(real.dtype)
    return Op.get(_FLOAT_OPS[name]).get_attr("FEvaluate")(attrs, real)


def _value(name):
    def value(attrs, x, scale, zero_point, out_scale, out_zero_point):
        with np.errstate(divide="ignore", invalid="ignore"):  # log(0), 1/sqrt(0): -inf and inf clip to the range
            return _quantized_function(name, attrs, x, scale, zero_point, out_scale, out_zero_point)

    value.__doc__ = f"``quantize({name}(dequantize(x)))`` in ``x``'s dtype."
    return value


def _quantized_function(name, attrs, x, scale, zero_point, out_scale, out_zero_point):
    """Dequantize, the real function, quantize: each step by its operator's own numpy value."""
    real = Op.get("qnn.dequantize").get_attr("FEvaluate")(DequantizeAttrs(-1, "float32"), x, scale, zero_point)
    out = _real_function(name, attrs, real)
    return Op.get("qnn.quantize").get_attr("FEvaluate")(QuantizeAttrs(x.dtype.name, -1), out, out_scale,
                                                        out_zero_point)


def _float_definition(name, attrs, inputs, dtype):
    """The definition computed in float32 with plain Relay operators."""
    x, scale, zero_point, out_scale, out_zero_point = inputs
    centred = _t.subtract(_t.cast(x, "int32"), _t.cast(zero_point, "int32"))
    real = _t.multiply(_t.cast(centred, "float32"), scale)
    if name == "hardswish":
        out = _t.divide(_t.multiply(real, _t.clip(_t.add(real, const(3.0)), 0.0, 6.0)), const(6.0))
    else:
        out = make_call(_FLOAT_OPS[name], [real], attrs)
    low, high = INT_RANGE[dtype]
    quantized = _t.add(_t.round(_t.divide(out, out_scale)), _t.cast(out_zero_point, "float32"))
    return _t.cast(_t.clip(quantized, low, high), dtype)


def _canonical(name):
    def canonical(attrs, inputs, types):
        dtype = types[0].dtype
        params = inputs[1:]
        if name == "softmax" or dtype not in ("int8", "uint8") or not all(isinstance(p, Constant) for p in params):
            return _float_definition(name, attrs, inputs, dtype)
        low, high = INT_RANGE[dtype]
        table = _value(name)(attrs, np.arange(low, high + 1).astype(dtype), *(p.data.numpy() for p in params))
        index = _t.subtract(_t.cast(inputs[0], "int32"), const(low, "int32"))
        return _t.take(const(table), index, axis=0, mode="clip")

    return canonical


for _name in ("sqrt", "rsqrt", "exp", "erf", "sigmoid", "tanh", "log", "abs", "hardswish", "leaky_relu", "softmax"):
    _attrs_type = {"leaky_relu": A.LeakyReluAttrs, "softmax": A.SoftmaxAttrs}.get(_name)
    _pattern = OpPattern.OPAQUE if _name == "softmax" else OpPattern.ELEMWISE
    register_relay_op(f"qnn.{_name}", 5, _rel(f"qnn.{_name}"), _pattern, _attrs_type,
                      dtypes=(QUANTIZED, *_PARAMS, *_PARAMS))
    register_op_attr(f"qnn.{_name}", "FTVMQnnCanonicalize", _canonical(_name))
    register_op_attr(f"qnn.{_name}", "FEvaluate", _value(_name))


def _unary(name):
    def build(x, scale, zero_point, output_scale, output_zero_point):
        return make_call(f"qnn.{name}", [x, scale, zero_point, output_scale, output_zero_point])

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"Quantized {name}: ``quantize({name}(dequantize(x)))`` in ``x``'s dtype (module docstring)."
    return build


sqrt, rsqrt, exp, erf = _unary("sqrt"), _unary("rsqrt"), _unary("exp"), _unary("erf")
sigmoid, tanh, log, abs, hardswish = (_unary("sigmoid"), _unary("tanh"), _unary("log"), _unary("abs"),  # noqa: A001
                                      _unary("hardswish"))


def leaky_relu(x, alpha, input_scale, input_zero_point, output_scale, output_zero_point):
    """Quantized leaky ReLU with slope ``alpha`` below zero, in the output's quantization (TVM's argument order)."""
    return make_call("qnn.leaky_relu", [x, input_scale, input_zero_point, output_scale, output_zero_point],
                     A.LeakyReluAttrs(float(alpha)))


def softmax(x, scale, zero_point, output_scale, output_zero_point, axis=-1):
    """Quantized softmax along ``axis`` in the output's quantization (computed exactly, in float32, where TVM's
    canonical form approximates it with integer arithmetic)."""
    return make_call("qnn.softmax", [x, scale, zero_point, output_scale, output_zero_point], A.SoftmaxAttrs(int(axis)))
