"""Neural-network operators in numpy other than convolution and pooling: ``nn.bias_add relu leaky_relu dense
matmul batch_matmul batch_norm layer_norm softmax log_softmax batch_flatten dropout pad lrn``.

Formulas follow TVM's topi: ``batch_norm`` is ``(x - mean) / sqrt(var + eps) * gamma + beta`` and returns
``(out, moving_mean, moving_var)`` (inference mode); ``softmax`` subtracts the maximum first; ``lrn`` is
``x / (bias + alpha * sum / size) ** beta`` where the sum of squares runs over ``size`` channels starting
``size // 2`` before the current one (topi pads ``size // 2`` on both sides). Matrix products of integers widen to
``out_dtype`` before multiplying; float16 multiplies in float32.
"""

import numpy as np

from ...error import KilnError
from ..op.type_relations import normalize_axis
from .common import accumulator, as_dtype, np_dtype, register


def _along(vector, ndim, axis):
    """``vector`` reshaped to broadcast along ``axis`` of a rank-``ndim`` tensor."""
    shape = [1] * ndim
    shape[axis] = -1
    return vector.reshape(shape)


@register("nn.bias_add")
def bias_add(attrs, data, bias):
    """``data + bias`` with the 1-D ``bias`` along ``axis``."""
    return as_dtype(data + _along(bias, data.ndim, normalize_axis(attrs.axis, data.ndim)), data.dtype)


@register("nn.relu")
def relu(attrs, data):
    """``max(data, 0)``."""
    return np.maximum(data, np.zeros((), data.dtype))


@register("nn.leaky_relu")
def leaky_relu(attrs, data):
    """``data`` where positive, else ``alpha * data`` (alpha converted to the data's dtype)."""
    return as_dtype(np.where(data > 0, data, data * np.asarray(attrs.alpha, data.dtype)), data.dtype)


def _matmul_operands(out_dtype, *operands):
    work = np.dtype("float32") if out_dtype == np.float16 else out_dtype
    return [op.astype(work, copy=False) for op in operands]


@register("nn.dense")
def dense(attrs, data, weight):
    """``data @ weight.T``."""
    out_dtype = np_dtype(attrs.out_dtype or data.dtype)
    x, w = _matmul_operands(out_dtype, data, weight)
    return as_dtype(np.matmul(x, w.T), out_dtype)


@register("nn.contrib_dense_pack")
def contrib_dense_pack(attrs, data, weight):
    """``data @ unpack(weight).T``, the weight ``(ceil(N / b), K, b)`` unpacked to ``(N, K)``."""
    blocks, k, block = weight.shape
    unpacked = weight.transpose(0, 2, 1).reshape(blocks * block, k)
    return dense(attrs, data, unpacked[: attrs.units or blocks * block])


@register("nn.matmul")
def matmul(attrs, tensor_a, tensor_b):
    """``tensor_a @ tensor_b``, either operand transposed (its last two axes) first."""
    out_dtype = np_dtype(attrs.out_dtype or tensor_a.dtype)
    a, b = _matmul_operands(out_dtype, tensor_a, tensor_b)
    if attrs.transpose_a:
        if a.ndim < 2:
            raise KilnError(f"nn.matmul: transpose_a needs tensor_a of rank >= 2, got shape {a.shape}")
        a = np.swapaxes(a, -1, -2)
    if attrs.transpose_b:
        b = b.T
    return as_dtype(np.matmul(a, b), out_dtype)


@register("nn.batch_matmul")
def batch_matmul(attrs, x, y):
    """Batched ``x @ y`` with optional transposes; a batch of 1 broadcasts."""
    out_dtype = np_dtype(attrs.out_dtype or x.dtype)
    a, b = _matmul_operands(out_dtype, x, y)
    if attrs.transpose_a:
        a = np.swapaxes(a, 1, 2)
    if attrs.transpose_b:
        b = np.swapaxes(b, 1, 2)
    return as_dtype(np.matmul(a, b), out_dtype)


@register("nn.batch_norm")
def batch_norm(attrs, data, gamma, beta, moving_mean, moving_var):
    """Inference batch normalization: ``(normalized, moving_mean, moving_var)``."""
    axis = normalize_axis(attrs.axis, data.ndim)
    dtype = data.dtype
    eps = np.asarray(attrs.epsilon, dtype)
    out = (data - _along(moving_mean, data.ndim, axis)) / np.sqrt(_along(moving_var, data.ndim, axis) + eps)
    if attrs.scale:
        out = out * _along(gamma, data.ndim, axis)
    if attrs.center:
        out = out + _along(beta, data.ndim, axis)
    return as_dtype(out, dtype), moving_mean, moving_var


@register("nn.layer_norm")
def layer_norm(attrs, data, gamma, beta):
    """Normalize over ``axis`` to zero mean and unit variance, then scale by ``gamma`` and shift by ``beta``."""
    axis = normalize_axis(attrs.axis, data.ndim)
    dtype = data.dtype
    mean = np.mean(data, axis=axis, keepdims=True, dtype=accumulator(dtype)).astype(dtype)
    centered = data - mean
    var = np.mean(centered * centered, axis=axis, keepdims=True, dtype=accumulator(dtype)).astype(dtype)
    out = centered / np.sqrt(var + np.asarray(attrs.epsilon, dtype))
    if attrs.scale:
        out = out * _along(gamma, data.ndim, axis)
    if attrs.center:
        out = out + _along(beta, data.ndim, axis)
    return as_dtype(out, dtype)


@register("nn.softmax")
def softmax(attrs, data):
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``."""
    axis = normalize_axis(attrs.axis, data.ndim)
    e = np.exp(data - np.max(data, axis=axis, keepdims=True))
    return as_dtype(e / np.sum(e, axis=axis, keepdims=True), data.dtype)


@register("nn.log_softmax")
def log_softmax(attrs, data):
    """``x - max - log(sum(exp(x - max)))`` along ``axis``."""
    axis = normalize_axis(attrs.axis, data.ndim)
    shifted = data - np.max(data, axis=axis, keepdims=True)
    return as_dtype(shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True)), data.dtype)


@register("nn.batch_flatten")
def batch_flatten(attrs, data):
    """Flatten every axis but the first."""
    return data.reshape(data.shape[0], int(np.prod(data.shape[1:], dtype=np.int64)))


@register("nn.dropout")
def dropout(attrs, data):
    """Inference dropout: ``(data, mask of ones)``."""
    return data, np.ones_like(data)


@register("nn.pad")
def pad(attrs, data, pad_value):
    """Pad each axis by ``(before, after)``: with ``pad_value`` (constant), the edge value (edge) or the mirror
    image without repeating the edge (reflect); a negative width crops that side first."""
    data = data[tuple(slice(max(-b, 0), n - max(-a, 0)) for n, (b, a) in zip(data.shape, attrs.pad_width,
                                                                               strict=True))]
    widths = [(max(b, 0), max(a, 0)) for b, a in attrs.pad_width]
    if attrs.pad_mode == "constant":
        return np.pad(data, widths, constant_values=as_dtype(pad_value, data.dtype))
    return np.pad(data, widths, mode=attrs.pad_mode)


@register("nn.lrn")
def lrn(attrs, data):
    """Local response normalization across ``size`` neighbours along ``axis`` (see the module docstring)."""
    axis = normalize_axis(attrs.axis, data.ndim)
    dtype = data.dtype
    half = attrs.size // 2
    widths = [(0, 0)] * data.ndim
    widths[axis] = (half, half)
    squares = np.pad(data * data, widths)
    n = data.shape[axis]
    total = sum(np.take(squares, np.arange(r, r + n), axis=axis) for r in range(attrs.size))
    alpha, bias, beta = (np.asarray(v, dtype) for v in (attrs.alpha, attrs.bias, attrs.beta))
    return as_dtype(data / np.power(bias + alpha * total / np.asarray(attrs.size, dtype), beta), dtype)
