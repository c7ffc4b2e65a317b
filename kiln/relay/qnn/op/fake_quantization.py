"""The integer forms of operators inside fake-quantized regions (``FTVMFakeQuantizationToInteger``), which
``relay.transform.FakeQuantizationToInteger`` applies (:mod:`kiln.relay.transform.fake_quantization_to_integer`).

Each rule receives the call with its arguments already rewritten to integers and ``type_map``, the affine type
(:class:`~kiln.ir.TensorAffineType`) of every rewritten expression; ``type_map[expr]`` is the type the region's
closing quantize asks for. It returns ``[integer expression, its affine type]``. Three kinds of rule:

* operators that only move or select values (reshape, transpose, max_pool2d, max, take...) run on the integers
  as they are and keep their argument's quantization;
* operators with a quantized counterpart become it (``nn.conv2d`` -> ``qnn.conv2d``, ``add`` -> ``qnn.add``);
  products produce int32 with scale ``s_data * s_weight`` and zero point 0;
* the closing ``qnn.quantize`` becomes a ``qnn.requantize`` to the quantization it asks for, or nothing when
  the integers already have it.

The rules of the operators that need further quantized operators are in :mod:`.fake_quantization_ops`.
"""

import dataclasses

import numpy as np

from ....error import ArgumentTypeError, InvalidIRError
from ....ir.affine_type import TensorAffineType, TupleAffineType
from ....ir.structural import structural_equal
from ... import op as _t
from ...expr import Constant, const
from ...op.op import make_call, register_fake_quantization_to_integer
from ...transform.fold_constant import fold_constant
from ...transform.infer_type import InferTypeLocal
from . import qnn

__all__ = ["fold", "approx_equal", "same_quantization", "zeros_like_scale", "channel_param", "binary_types",
           "register_binary_qnn", "register_binary_identity"]


def fold(expr):
    """``expr`` with its constant subexpressions evaluated (quantized operators too)."""
    return fold_constant(expr, fold_qnn=True)


def approx_equal(x, y) -> bool:
    """Whether two quantization parameters agree: close values when both fold to constants, else the same
    expression."""
    x, y = fold(x), fold(y)
    if isinstance(x, Constant) and isinstance(y, Constant):
        a, b = x.data.numpy(), y.data.numpy()
        try:
            return bool(np.allclose(a, b))
        except ValueError:  # shapes that do not broadcast: different parameters
            return False
    return structural_equal(x, y)


def same_quantization(a, b) -> bool:
    """Whether affine types ``a`` and ``b`` read integers alike (scale, zero point, dtype)."""
    return approx_equal(a.scale, b.scale) and approx_equal(a.zero_point, b.zero_point) and a.dtype == b.dtype


def zeros_like_scale(scale):
    """Int32 zero points shaped as ``scale`` (the quantization of a product's int32 result)."""
    return fold(_t.cast(_t.zeros_like(scale), "int32"))


def _shape(expr):
    return tuple(int(d) for d in InferTypeLocal(expr).shape)


def channel_param(param, like, axis):
    """A per-channel ``param`` reshaped to broadcast along ``axis`` of ``like``; a scalar as it is."""
    shape = _shape(param)
    if len(shape) == 0 or shape[0] == 1:
        return param
    target = [1] * len(_shape(like))
    target[axis] = -1
    return _t.reshape(param, target)


def _replace_args(expr, *args, **attrs):
    new_attrs = dataclasses.replace(expr.attrs, **attrs) if attrs else expr.attrs
    return make_call(expr.op.name, list(args), new_attrs)


# -- the region's ends -----------------------------------------------------------------------------------------------

@register_fake_quantization_to_integer("qnn.dequantize")
def dequantize(expr, type_map):
    """``dequantize(q)`` -> ``q``: the region computes on the integers themselves."""
    return [expr.args[0], type_map[expr]]


@register_fake_quantization_to_integer("qnn.quantize")
def quantize(expr, type_map):
    """``quantize(v)`` -> ``requantize(v)`` to the asked quantization, or ``v`` when it already has it."""
    out = expr.args[0]
    t = type_map[out]
    scale, zero_point = fold(t.scale), fold(t.zero_point)
    target = TensorAffineType(expr.args[1], expr.args[2], expr.attrs.out_dtype, expr.attrs.axis)
    if not (approx_equal(scale, target.scale) and approx_equal(zero_point, target.zero_point)
            and t.dtype == target.dtype):
        out = qnn.requantize(out, scale, zero_point, target.scale, target.zero_point, axis=t.axis,
                             out_dtype=target.dtype)
    return [out, target]


# -- operators that move or select values ----------------------------------------------------------------------------

def _identity(expr, type_map):
    """The operator runs on the integers; its result keeps the argument's quantization."""
    return [expr, type_map[expr.args[0]]]


for _name in ("reshape", "squeeze", "strided_slice", "transpose", "expand_dims", "nn.max_pool2d", "nn.batch_flatten",
              "nn.depth_to_space", "max", "min", "image.resize2d", "broadcast_to"):
    register_fake_quantization_to_integer(_name, _identity)


@register_fake_quantization_to_integer("take")
def take(expr, type_map):
    """``take`` selects integers as it selects reals (the indices are not quantized)."""
    return [expr, type_map[expr.args[0]]]


@register_fake_quantization_to_integer("topk")
def topk(expr, type_map):
    """The ``k`` largest integers are the ``k`` largest reals (scales are positive); only the values are kept."""
    if expr.attrs.ret_type != "values":
        raise InvalidIRError(f"topk in a fake-quantized region must return its values, not {expr.attrs.ret_type!r}")
    return [expr, type_map[expr.args[0]]]


@register_fake_quantization_to_integer("split")
def split(expr, type_map):
    """Each part keeps the argument's quantization."""
    sections = expr.attrs.indices_or_sections
    parts = int(sections) if isinstance(sections, int | np.integer) else len(sections) + 1
    return [expr, TupleAffineType([type_map[expr.args[0]]] * parts)]


# -- operators on the integers with quantized bounds -----------------------------------------------------------------

@register_fake_quantization_to_integer("clip")
def clip(expr, type_map):
    """``clip(x, lo, hi)`` -> ``clip(q, lo / s + z, hi / s + z)``; per channel, a maximum and a minimum with the
    bounds quantized channel by channel."""
    arg = expr.args[0]
    t = type_map[arg]
    scale, zero_point = fold(t.scale), fold(t.zero_point)
    a_min, a_max = expr.attrs.a_min, expr.attrs.a_max
    if isinstance(scale, Constant) and scale.data.numpy().size == 1 and isinstance(zero_point, Constant) \
            and zero_point.data.numpy().size == 1:
        s, z = scale.data.numpy().item(), zero_point.data.numpy().item()
        return [_t.clip(arg, int(a_min / s + z), int(a_max / s + z)), t]
    shape = _shape(scale)
    bounds = []
    for bound in (a_min, a_max):
        value = const(float(bound))
        if len(shape) > 0 and shape[0] > 1:
            value = channel_param(_t.broadcast_to(value, shape), arg, t.axis)
        bounds.append(fold(qnn.quantize(value, scale, zero_point, t.axis, t.dtype)))
    return [_t.minimum(_t.maximum(arg, bounds[0]), bounds[1]), t]


@register_fake_quantization_to_integer("nn.relu")
def relu(expr, type_map):
    """``relu(x)`` -> ``maximum(q, z)``: the real zero is the zero point."""
    arg = expr.args[0]
    t = type_map[arg]
    zero_point = channel_param(t.zero_point, arg, t.axis)
    return [_t.maximum(arg, fold(_t.cast(zero_point, t.dtype))), t]


@register_fake_quantization_to_integer("nn.pad")
def pad(expr, type_map):
    """The pad value quantized (or requantized) as the data."""
    arg, pad_value = expr.args
    t = type_map[arg]
    if pad_value in type_map:
        pad_t = type_map[pad_value]
        if not structural_equal(t, pad_t):
            pad_value = qnn.requantize(pad_value, pad_t.scale, pad_t.zero_point, t.scale, t.zero_point,
                                       axis=pad_t.axis, out_dtype=t.dtype)
    else:
        _require_float_constant(pad_value, "nn.pad's pad value")
        pad_value = qnn.quantize(pad_value, t.scale, t.zero_point, out_dtype=t.dtype)
    return [_replace_args(expr, arg, pad_value), t]


def _require_float_constant(expr, what):
    if not isinstance(expr, Constant) or expr.data.dtype not in ("float16", "float32", "float64", "bfloat16"):
        raise ArgumentTypeError(f"{what} in a fake-quantized region must be dequantized or a float constant")


@register_fake_quantization_to_integer("nn.bias_add")
def bias_add(expr, type_map):
    """The bias brought to the data's quantization (requantized, or quantized when a float constant)."""
    x, b = expr.args
    x_t = type_map[x]
    if b in type_map:
        b_t = type_map[b]
        if not same_quantization(x_t, b_t):
            b = qnn.requantize(b, b_t.scale, b_t.zero_point, fold(x_t.scale), fold(x_t.zero_point), axis=0,
                               out_dtype=x_t.dtype)
    else:
        _require_float_constant(b, "nn.bias_add's bias")
        b = qnn.quantize(b, x_t.scale, x_t.zero_point, axis=0, out_dtype=x_t.dtype)
    return [_replace_args(expr, x, b), x_t]


@register_fake_quantization_to_integer("mean")
def mean(expr, type_map):
    """The mean of the integers (in int32) is the integer of the mean."""
    t = type_map[expr.args[0]]
    out = _replace_args(expr, _t.cast(expr.args[0], "int32"))
    return [_t.cast(out, t.dtype), t]


def _to_int32(arg, t, out_t):
    """``arg`` in int32 with ``out_t``'s quantization (a cast when it already has it)."""
    if same_quantization(t, out_t):
        return _t.cast(arg, "int32")
    return qnn.requantize(arg, t.scale, t.zero_point, out_t.scale, out_t.zero_point, axis=t.axis, out_dtype="int32")


def _average_in_int32(expr, type_map):
    """An average of int32 values in the output's quantization: the averaging is linear."""
    t, out_t = type_map[expr.args[0]], type_map[expr]
    out = _replace_args(expr, _to_int32(expr.args[0], t, out_t))
    return [out, TensorAffineType(out_t.scale, out_t.zero_point, "int32", out_t.axis)]


register_fake_quantization_to_integer("nn.adaptive_avg_pool1d", _average_in_int32)
register_fake_quantization_to_integer("nn.global_avg_pool2d", _average_in_int32)


# -- products --------------------------------------------------------------------------------------------------------

def _product_type(x_t, w_t, axis):
    scale = fold(_t.multiply(x_t.scale, w_t.scale))
    return TensorAffineType(scale, zeros_like_scale(scale), "int32", axis)


@register_fake_quantization_to_integer("nn.conv2d")
def conv2d(expr, type_map):
    """``conv2d`` -> ``qnn.conv2d`` (int32; scale ``s_x * s_w``, per output channel when the weight's is)."""
    x, w = expr.args
    x_t, w_t = type_map[x], type_map[w]
    attrs = dataclasses.replace(expr.attrs, out_dtype="int32")
    out = make_call("qnn.conv2d", [x, w, x_t.zero_point, w_t.zero_point, x_t.scale, w_t.scale], attrs)
    layout = attrs.out_layout or attrs.data_layout
    return [out, _product_type(x_t, w_t, layout.index("C"))]


@register_fake_quantization_to_integer("nn.dense")
def dense(expr, type_map):
    """``dense`` -> ``qnn.dense`` (int32; scale ``s_x * s_w``, per unit when the weight's is)."""
    x, w = expr.args
    x_t, w_t = type_map[x], type_map[w]
    attrs = dataclasses.replace(expr.attrs, out_dtype="int32")
    out = make_call("qnn.dense", [x, w, x_t.zero_point, w_t.zero_point, x_t.scale, w_t.scale], attrs)
    return [out, _product_type(x_t, w_t, 1)]


# -- binary operators ------------------------------------------------------------------------------------------------

def binary_types(expr, type_map):
    """The operands of a binary call and their affine types, a float constant operand quantized as the other; the
    output type is the region's, or the lhs's when the dtypes differ (an int32 product's bias addition)."""
    left, right = expr.args
    left_t, right_t = type_map.get(left), type_map.get(right)
    out_t = type_map[expr]
    if left_t is None and right_t is None:
        raise ArgumentTypeError(f"{expr.op.name}: neither operand is quantized")
    if left_t is None:
        _require_float_constant(left, f"{expr.op.name}'s lhs")
        left, left_t = qnn.quantize(left, right_t.scale, right_t.zero_point, out_dtype=right_t.dtype), right_t
    if right_t is None:
        _require_float_constant(right, f"{expr.op.name}'s rhs")
        right, right_t = qnn.quantize(right, left_t.scale, left_t.zero_point, out_dtype=left_t.dtype), left_t
    if left_t.dtype != out_t.dtype:
        out_t = left_t
    return left, right, left_t, right_t, out_t


def _is_scalar_constant(expr):
    return isinstance(expr, Constant) and expr.data.numpy().ndim == 0


def register_binary_qnn(op_name, qnn_op):
    """Register the rewrite of ``op_name`` into the quantized binary operator ``qnn_op``."""

    def rewrite(expr, type_map):
        left, right, left_t, right_t, out_t = binary_types(expr, type_map)
        if (op_name == "add" and left_t.dtype == "int32" and same_quantization(left_t, right_t)
                and same_quantization(left_t, out_t) and np.all(fold(out_t.zero_point).data.numpy() == 0)):
            # a bias added to an int32 product: the integers add as they are (the scale may be per channel,
            # which the quantized binary operators do not take for their output)
            return [_t.add(left, right), left_t]
        scale, zero_point = fold(out_t.scale), fold(out_t.zero_point)
        if not (_is_scalar_constant(scale) and _is_scalar_constant(zero_point)):
            raise InvalidIRError(f"{op_name}: the output scale and zero point must be scalars")
        out = qnn_op(left, right, left_t.scale, left_t.zero_point, right_t.scale, right_t.zero_point, out_t.scale,
                     out_t.zero_point, left_t.axis, right_t.axis)
        return [out, out_t]

    rewrite.__name__ = rewrite.__qualname__ = f"{op_name}_to_qnn"
    rewrite.__doc__ = f"``{op_name}`` -> the quantized ``{qnn_op.__name__}`` into the region's quantization."
    return register_fake_quantization_to_integer(op_name, rewrite)


register_binary_qnn("add", qnn.add)
register_binary_qnn("multiply", qnn.mul)


def _requantized_to(x, x_t, out_t):
    if x_t is out_t:
        return x
    return qnn.requantize(x, x_t.scale, x_t.zero_point, out_t.scale, out_t.zero_point, axis=x_t.axis,
                          out_dtype=out_t.dtype)


def register_binary_identity(op_name, op):
    """Register the rewrite of ``op_name``, which commutes with an increasing affine map (minimum, maximum): both
    operands requantized to the output's quantization."""

    def rewrite(expr, type_map):
        left, right, left_t, right_t, out_t = binary_types(expr, type_map)
        return [op(_requantized_to(left, left_t, out_t), _requantized_to(right, right_t, out_t)), out_t]

    rewrite.__name__ = rewrite.__qualname__ = f"{op_name}_on_integers"
    rewrite.__doc__ = f"``{op_name}`` of both operands in the output's quantization."
    return register_fake_quantization_to_integer(op_name, rewrite)


register_binary_identity("minimum", _t.minimum)
register_binary_identity("maximum", _t.maximum)
