"""The FakeQuantizationToInteger rules (see :mod:`.fake_quantization`) of the operators whose integer form is one of
the quantized operators of :mod:`.qnn_nn` and :mod:`.qnn_elemwise`: products, pooling, concatenation, subtraction
and the element-wise functions (by lookup table), and the optional rule of softmax."""

import dataclasses

from ....ir.affine_type import TensorAffineType
from ...expr import Call, Tuple, const
from ...op.op import make_call, register_fake_quantization_to_integer, register_optional_fake_quantization_to_integer
from . import qnn_elemwise, qnn_nn
from .fake_quantization import _product_type, register_binary_qnn

__all__ = []

register_binary_qnn("subtract", qnn_nn.subtract)


@register_fake_quantization_to_integer("nn.batch_matmul")
def batch_matmul(expr, type_map):
    """``batch_matmul`` -> ``qnn.batch_matmul`` (int32; scale ``s_x * s_y``, zero point 0)."""
    x, y = expr.args
    x_t, y_t = type_map[x], type_map[y]
    attrs = dataclasses.replace(expr.attrs, out_dtype="int32")
    out = make_call("qnn.batch_matmul", [x, y, x_t.zero_point, y_t.zero_point, x_t.scale, y_t.scale], attrs)
    t = _product_type(x_t, y_t, x_t.axis)
    return [out, TensorAffineType(t.scale, const(0), "int32", x_t.axis)]


@register_fake_quantization_to_integer("nn.conv2d_transpose")
def conv2d_transpose(expr, type_map):
    """``conv2d_transpose`` -> ``qnn.conv2d_transpose`` (int32; scale ``s_x * s_w``)."""
    x, w = expr.args
    x_t, w_t = type_map[x], type_map[w]
    attrs = dataclasses.replace(expr.attrs, out_dtype="int32")
    out = make_call("qnn.conv2d_transpose", [x, w, x_t.zero_point, w_t.zero_point, x_t.scale, w_t.scale], attrs)
    return [out, _product_type(x_t, w_t, (attrs.out_layout or attrs.data_layout).index("C"))]


def _ends_the_region(expr, type_map):
    """Whether an average pooling like ``expr`` is what a quantize of the region reads directly (TVM's test: then
    the pooling produces the quantize's quantization, else it keeps its input's)."""
    for key in type_map:
        if isinstance(key, Call) and getattr(key.op, "name", None) == "qnn.quantize":
            arg = key.args[0]
            if isinstance(arg, Call) and getattr(arg.op, "name", None) == "nn.avg_pool2d" and arg.attrs == expr.attrs:
                return True
    return False


@register_fake_quantization_to_integer("nn.avg_pool2d")
def avg_pool2d(expr, type_map):
    """``avg_pool2d`` -> ``qnn.avg_pool2d`` into the closing quantize's quantization when the quantize reads it,
    else the input's."""
    arg = expr.args[0]
    t = type_map[arg]
    out_t = type_map[expr] if _ends_the_region(expr, type_map) else t
    a = expr.attrs
    out = qnn_nn.avg_pool2d(arg, t.scale, t.zero_point, out_t.scale, out_t.zero_point, a.pool_size, a.strides,
                            a.padding, a.dilation, a.ceil_mode, a.count_include_pad, a.layout, a.out_layout)
    return [out, TensorAffineType(out_t.scale, out_t.zero_point, t.dtype, out_t.axis)]


@register_fake_quantization_to_integer("concatenate")
def concatenate(expr, type_map):
    """``concatenate`` -> ``qnn.concatenate`` into the region's quantization."""
    data = expr.args[0]
    types = type_map[data].types
    out_t = type_map[expr]
    out = qnn_nn.concatenate(data, Tuple([t.scale for t in types]), Tuple([t.zero_point for t in types]),
                             out_t.scale, out_t.zero_point, expr.attrs.axis)
    return [out, out_t]


def _register_unary(op_name, build):
    def rewrite(expr, type_map):
        arg = expr.args[0]
        x_t, out_t = type_map[arg], type_map[expr]
        out = build(arg, x_t.scale, x_t.zero_point, out_t.scale, out_t.zero_point)
        return [out, TensorAffineType(out_t.scale, out_t.zero_point, x_t.dtype, out_t.axis)]

    rewrite.__name__ = rewrite.__qualname__ = f"{op_name}_to_qnn"
    rewrite.__doc__ = f"``{op_name}`` -> its quantized form, into the region's quantization, in the input's dtype."
    return rewrite


for _name in ("sqrt", "rsqrt", "exp", "erf", "sigmoid", "tanh", "abs", "log"):  # (Relay has no float hardswish)
    register_fake_quantization_to_integer(_name, _register_unary(_name, getattr(qnn_elemwise, _name)))


@register_fake_quantization_to_integer("nn.leaky_relu")
def leaky_relu(expr, type_map):
    """``leaky_relu`` -> ``qnn.leaky_relu`` into the region's quantization."""
    alpha = expr.attrs.alpha
    return _register_unary("leaky_relu", lambda x, *p: qnn_elemwise.leaky_relu(x, alpha, *p))(expr, type_map)


@register_optional_fake_quantization_to_integer("nn.softmax")
def softmax(expr, type_map):
    """``softmax`` -> ``qnn.softmax`` into the region's quantization (only when asked: ``optional_qnn_ops``)."""
    axis = expr.attrs.axis
    return _register_unary("softmax", lambda x, *p: qnn_elemwise.softmax(x, *p, axis=axis))(expr, type_map)
