"""Gradients of the neural-network operators (see ``_tensor_grad.py`` for the conventions).

Matrix products differentiate into matrix products (``d(A @ B) = dA @ B + A @ dB``, the transposes chosen so no
explicit transpose is needed); a 2-D convolution's input gradient is the transposed convolution of ``grad`` with
the same weight, and its weight gradient ``nn.conv2d_backward_weight``; pooling uses the dedicated
``nn.max_pool2d_grad``/``nn.avg_pool2d_grad`` operators.
"""

from ...error import KilnError
from ..expr import const
from . import elemwise as _e
from . import nn as _nn
from . import nn_conv as _conv
from . import nn_extra as _x
from . import reduce as _r
from . import tensor as _t
from .like import collapse_sum_like, zeros_like
from .op import register_gradient
from .type_relations import normalize_axis


def _shape(expr):
    return tuple(expr.checked_type.shape)


@register_gradient("nn.relu")
def relu_grad(orig, grad):
    """``grad`` where ``x >= 0`` (the derivative at 0 taken as 1, as TVM does), zero elsewhere."""
    x = orig.args[0]
    return [_t.where(_e.less(x, zeros_like(x)), zeros_like(grad), grad)]


@register_gradient("nn.leaky_relu")
def leaky_relu_grad(orig, grad):
    """``grad`` where ``x > 0``, ``alpha * grad`` elsewhere."""
    x = orig.args[0]
    alpha = const(orig.attrs.alpha, x.checked_type.dtype)
    return [_t.where(_e.greater(x, zeros_like(x)), grad, grad * alpha)]


@register_gradient("nn.prelu")
def prelu_grad(orig, grad):
    """``grad`` (or ``alpha * grad`` where ``x <= 0``) to ``x``; ``sum(x * grad)`` over ``x <= 0`` to ``alpha``."""
    x, alpha = orig.args
    ndim = len(_shape(x))
    axis = normalize_axis(orig.attrs.axis, ndim)
    per_channel = _t.reshape(alpha, [-1 if i == axis else 1 for i in range(ndim)])
    positive = _e.greater(x, zeros_like(x))
    zeros = zeros_like(grad)
    dx = _t.where(positive, grad, grad * per_channel)
    dalpha = _r.sum(_t.where(positive, zeros, x * grad), axis=[axis], exclude=True)
    return [dx, dalpha]


@register_gradient("nn.softmax")
def softmax_grad(orig, grad):
    """``(grad - sum(grad * y)) * y`` over the softmax axis."""
    return [(grad - _r.sum(grad * orig, orig.attrs.axis, True)) * orig]


@register_gradient("nn.log_softmax")
def log_softmax_grad(orig, grad):
    """``grad - sum(grad) * exp(y)`` over the softmax axis."""
    return [grad - _r.sum(grad, orig.attrs.axis, True) * _t.exp(orig)]


@register_gradient("nn.bias_add")
def bias_add_grad(orig, grad):
    """``grad`` to the data; ``grad`` summed over every axis but ``axis`` to the bias."""
    data = orig.args[0]
    return [collapse_sum_like(grad, data), _r.sum(grad, orig.attrs.axis, keepdims=False, exclude=True)]


@register_gradient("nn.dense")
def dense_grad(orig, grad):
    """``y = x @ W.T``: ``grad @ W`` to ``x``, ``grad.T @ x`` to ``W`` (leading axes of ``x`` folded in)."""
    data, weight = orig.args
    units, k = _shape(weight)
    dx = _nn.dense(grad, _t.transpose(weight), units=k)
    rows_grad, rows_data = _t.reshape(grad, (-1, units)), _t.reshape(data, (-1, k))
    dw = _nn.dense(_t.transpose(rows_grad), _t.transpose(rows_data), units=k)
    return [dx, dw]


def _product_grads(product, a, b, ta, tb, grad, **extra):
    """The adjoints of ``out = op(a) @ op(b)`` (``op`` transposes the last two axes when ``ta``/``tb``), built
    with ``product(x, y, transpose_a, transpose_b)`` so that no transpose is materialized."""
    # d op(a) = grad @ op(b).T and d op(b) = op(a).T @ grad; a transposed operand's adjoint is their transpose
    da = product(b, grad, tb, True, **extra) if ta else product(grad, b, False, not tb, **extra)
    db = product(grad, a, True, ta, **extra) if tb else product(a, grad, not ta, False, **extra)
    return da, db


@register_gradient("nn.matmul")
def matmul_grad(orig, grad):
    """The matrix-product rule for ``nn.matmul`` (with its transposes)."""
    a, b = orig.args
    if len(_shape(a)) != 2:
        raise KilnError("gradient of nn.matmul: only 2-D tensor_a is supported")

    def product(x, y, ta, tb):
        return _nn.matmul(x, y, transpose_a=ta, transpose_b=tb)

    da, db = _product_grads(product, a, b, orig.attrs.transpose_a, orig.attrs.transpose_b, grad)
    return [da, db]


@register_gradient("nn.batch_matmul")
def batch_matmul_grad(orig, grad):
    """The matrix-product rule per batch; an operand broadcast over the batch gets its adjoints summed."""
    a, b = orig.args

    def product(x, y, ta, tb):
        return _nn.batch_matmul(x, y, transpose_a=ta, transpose_b=tb)

    da, db = _product_grads(product, a, b, orig.attrs.transpose_a, orig.attrs.transpose_b, grad)
    return [collapse_sum_like(da, a), collapse_sum_like(db, b)]


@register_gradient("nn.conv2d")
def conv2d_grad(orig, grad):
    """The transposed convolution of ``grad`` to the data; ``nn.conv2d_backward_weight`` to the weight (NCHW/OIHW)."""
    attrs = orig.attrs
    data, weight = orig.args
    if attrs.data_layout != "NCHW" or attrs.kernel_layout != "OIHW" or attrs.out_layout not in ("", "NCHW"):
        raise KilnError(f"gradient of nn.conv2d: only NCHW data and OIHW kernels are supported, got "
                        f"{attrs.data_layout}/{attrs.kernel_layout}")
    (_, _, in_h, in_w), (out_channels, _, kh, kw) = _shape(data), _shape(weight)
    _, _, out_h, out_w = _shape(orig)
    top, left, bottom, right = attrs.padding
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    # the rows a transposed convolution of grad spans, and the ones the forward input had beyond them
    span_h = (out_h - 1) * sh - top - bottom + dh * (kh - 1) + 1
    span_w = (out_w - 1) * sw - left - right + dw * (kw - 1) + 1
    out_dtype = attrs.out_dtype or data.checked_type.dtype
    backward_data = _conv.conv2d_transpose(
        grad, weight, strides=attrs.strides, padding=attrs.padding, dilation=attrs.dilation, groups=attrs.groups,
        output_padding=(in_h - span_h, in_w - span_w), out_dtype=out_dtype)
    backward_weight = _x.conv2d_backward_weight(
        grad, data, strides=attrs.strides, padding=attrs.padding, dilation=attrs.dilation, groups=attrs.groups,
        channels=out_channels, kernel_size=(kh, kw), grad_layout="NCHW", data_layout="NCHW",
        kernel_layout="OIHW", out_dtype=out_dtype)
    return [backward_data, backward_weight]


def _no_pool_dilation(attrs, name):
    if tuple(attrs.dilation) != (1, 1):
        raise KilnError(f"gradient of {name}: dilated pooling is not supported")


@register_gradient("nn.max_pool2d")
def max_pool2d_grad(orig, grad):
    """``nn.max_pool2d_grad``: each window's adjoint to its maximum."""
    attrs = orig.attrs
    _no_pool_dilation(attrs, "nn.max_pool2d")
    return [_x.max_pool2d_grad(grad, orig.args[0], pool_size=attrs.pool_size, strides=attrs.strides,
                               padding=attrs.padding, layout=attrs.layout, ceil_mode=attrs.ceil_mode)]


@register_gradient("nn.avg_pool2d")
def avg_pool2d_grad(orig, grad):
    """``nn.avg_pool2d_grad``: each window's adjoint shared by its elements."""
    attrs = orig.attrs
    _no_pool_dilation(attrs, "nn.avg_pool2d")
    return [_x.avg_pool2d_grad(grad, orig.args[0], pool_size=attrs.pool_size, strides=attrs.strides,
                               padding=attrs.padding, layout=attrs.layout, ceil_mode=attrs.ceil_mode,
                               count_include_pad=attrs.count_include_pad)]


def _global_window(orig):
    layout = orig.attrs.layout
    if layout not in ("NCHW", "NHWC"):
        raise KilnError(f"gradient of {orig.op.name}: only NCHW and NHWC layouts are supported, got {layout}")
    shape = _shape(orig.args[0])
    return (shape[2], shape[3]) if layout == "NCHW" else (shape[1], shape[2])


@register_gradient("nn.global_avg_pool2d")
def global_avg_pool2d_grad(orig, grad):
    """The adjoint shared by every element of its channel."""
    return [_x.avg_pool2d_grad(grad, orig.args[0], pool_size=_global_window(orig), strides=(1, 1), padding=(0, 0),
                               layout=orig.attrs.layout)]


@register_gradient("nn.global_max_pool2d")
def global_max_pool2d_grad(orig, grad):
    """The adjoint to the maximum of its channel."""
    return [_x.max_pool2d_grad(grad, orig.args[0], pool_size=_global_window(orig), strides=(1, 1), padding=(0, 0),
                               layout=orig.attrs.layout)]


def _per_example(orig, grad):
    x = orig.args[0]
    return grad / const(float(_shape(x)[0]), x.checked_type.dtype)


@register_gradient("nn.cross_entropy")
def cross_entropy_grad(orig, grad):
    """``-sum(log(x) * y) / batch``: ``-grad * y / x / batch`` to ``x``, ``-grad * log(x) / batch`` to ``y``."""
    x, y = orig.args
    g = _per_example(orig, grad)
    return [-(g * y / x), -(g * _t.log(x))]


@register_gradient("nn.cross_entropy_with_logits")
def cross_entropy_with_logits_grad(orig, grad):
    """``-sum(x * y) / batch``: ``-grad * y / batch`` to ``x``, ``-grad * x / batch`` to ``y``."""
    x, y = orig.args
    g = _per_example(orig, grad)
    return [-(g * y), -(g * x)]


@register_gradient("nn.pad")
def pad_grad(orig, grad):
    """Constant padding: the adjoint of the interior to the data, that of the border to the fill value."""
    data, fill = orig.args
    if orig.attrs.pad_mode != "constant":
        raise KilnError(f"gradient of nn.pad: only constant padding is supported, got {orig.attrs.pad_mode}")
    shape = _shape(data)
    begin = [int(before) for before, _ in orig.attrs.pad_width]
    end = [b + d for b, d in zip(begin, shape, strict=True)]
    interior = _t.strided_slice(grad, begin, end)
    border = _r.sum(grad) - _r.sum(interior)
    return [interior, _t.cast(border, fill.checked_type.dtype)]
