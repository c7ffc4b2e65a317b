"""``nn.upsampling(3d)``, ``nn.prelu``, the sub-pixel moves, ``nn.l2_normalize``,
``nn.instance_norm``, ``nn.group_norm``, ``nn.mirror_pad`` and ``nn.fast_softmax`` in numpy.

The upsamplings are :func:`kiln.topi.testing.resize.resize` (the ``image.resize*`` reference) to the rounded
scaled size.
"""

import numpy as np

from ...topi.image.resize_nd import upsampled_size
from ...topi.testing.resize import resize
from ...topi.testing.transform import batch_to_space_nd_python, space_to_batch_nd_python
from .common import as_dtype, register
from .nn import softmax
from .transform import convert_layout


@register("nn.upsampling")
def upsampling(attrs, data):
    """``resize2d`` to the rounded scaled size with the ``align_corners`` or ``asymmetric`` mode."""
    h, w = attrs.layout.index("H"), attrs.layout.index("W")
    size = (upsampled_size(data.shape[h], attrs.scale_h), upsampled_size(data.shape[w], attrs.scale_w))
    method = {"bilinear": "linear", "bicubic": "cubic"}.get(attrs.method, attrs.method)
    mode = "align_corners" if attrs.align_corners else "asymmetric"
    return resize(data, size, attrs.layout, method, mode)


@register("nn.upsampling3d")
def upsampling3d(attrs, data):
    """:func:`resize3d` to the rounded scaled size."""
    size = tuple(upsampled_size(data.shape[attrs.layout.index(a)], s)
                 for a, s in zip("DHW", (attrs.scale_d, attrs.scale_h, attrs.scale_w), strict=True))
    method = "linear" if attrs.method == "trilinear" else attrs.method
    return resize(data, size, attrs.layout, method, attrs.coordinate_transformation_mode)


@register("nn.prelu")
def prelu(attrs, data, alpha):
    """``data`` where positive, ``alpha * data`` (along ``axis``) elsewhere."""
    shape = [1] * data.ndim
    shape[attrs.axis % data.ndim] = -1
    return as_dtype(np.where(data > 0, data, data * alpha.reshape(shape)), data.dtype)


@register("nn.depth_to_space")
def depth_to_space(attrs, data):
    """Channels to ``block_size`` x ``block_size`` spatial blocks (DCR or CRD order)."""
    x = convert_layout(data, attrs.layout, "NCHW")
    n, c, h, w = x.shape
    b = attrs.block_size
    if attrs.mode == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return np.ascontiguousarray(convert_layout(y.reshape(n, c // (b * b), h * b, w * b), "NCHW", attrs.layout))


@register("nn.space_to_depth")
def space_to_depth(attrs, data):
    """``block_size`` x ``block_size`` spatial blocks to channels."""
    x = convert_layout(data, attrs.layout, "NCHW")
    n, c, h, w = x.shape
    b = attrs.block_size
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)
    return np.ascontiguousarray(convert_layout(y, "NCHW", attrs.layout))


def _work(dtype):
    return np.dtype("float32") if dtype == np.float16 else dtype


@register("nn.l2_normalize")
def l2_normalize(attrs, data):
    """``data / sqrt(max(sum(data**2), eps))`` over ``axis``."""
    x = data.astype(_work(data.dtype))
    axes = tuple(attrs.axis) if attrs.axis else None
    norm = np.sqrt(np.maximum(np.sum(x * x, axis=axes, keepdims=True), x.dtype.type(attrs.eps)))
    return as_dtype(x / norm, data.dtype)


def _normalize(x, axes, eps):
    work = _work(x.dtype)
    x = x.astype(work)
    mean = np.sum(x, axis=axes, keepdims=True) / work.type(np.prod([x.shape[a] for a in axes]))
    centered = x - mean
    var = np.sum(centered * centered, axis=axes, keepdims=True) / work.type(np.prod([x.shape[a] for a in axes]))
    return centered / np.sqrt(var + work.type(eps))


def _affine(out, attrs, gamma, beta, axis, dtype):
    shape = [1] * out.ndim
    shape[axis] = -1
    if attrs.scale:
        out = out * gamma.astype(out.dtype).reshape(shape)
    if attrs.center:
        out = out + beta.astype(out.dtype).reshape(shape)
    return as_dtype(out, dtype)


@register("nn.instance_norm")
def instance_norm(attrs, data, gamma, beta):
    """Normalize over every axis but 0 and ``axis``."""
    axis = attrs.axis % data.ndim
    out = _normalize(data, tuple(a for a in range(1, data.ndim) if a != axis), attrs.epsilon)
    return _affine(out, attrs, gamma, beta, axis, data.dtype)


@register("nn.group_norm")
def group_norm(attrs, data, gamma, beta):
    """Normalize over groups of channels and every other axis but 0."""
    axis = attrs.axis % data.ndim
    g = attrs.num_groups
    grouped = data.reshape(data.shape[:axis] + (g, data.shape[axis] // g) + data.shape[axis + 1:])
    axes = tuple(a for a in range(1, grouped.ndim) if a != axis)
    out = _normalize(grouped, axes, attrs.epsilon).reshape(data.shape)
    return _affine(out, attrs, gamma, beta, axis, data.dtype)


@register("nn.mirror_pad")
def mirror_pad(attrs, data):
    """numpy's ``pad`` in ``symmetric`` or ``reflect`` mode."""
    return np.pad(data, attrs.pad_width, mode=attrs.mode.lower())


@register("nn.fast_softmax")
def fast_softmax(attrs, data):
    """Softmax along ``axis``."""
    return softmax(attrs, data)


@register("nn.dilate")
def dilate(attrs, data):
    """``dilation_value`` everywhere, ``data`` at every ``strides``-th position."""
    shape = tuple((d - 1) * s + 1 for d, s in zip(data.shape, attrs.strides, strict=True))
    out = np.full(shape, np.asarray(attrs.dilation_value).astype(data.dtype), data.dtype)
    out[tuple(slice(None, None, s) for s in attrs.strides)] = data
    return out


@register("nn.space_to_batch_nd")
def space_to_batch_nd(attrs, data):
    """TensorFlow's ``space_to_batch_nd``."""
    before, after = zip(*attrs.paddings, strict=True) if attrs.paddings else ((), ())
    return space_to_batch_nd_python(data, attrs.block_shape, before, after, attrs.pad_value)


@register("nn.batch_to_space_nd")
def batch_to_space_nd(attrs, data):
    """TensorFlow's ``batch_to_space_nd``."""
    begin, end = zip(*attrs.crops, strict=True) if attrs.crops else ((), ())
    return batch_to_space_nd_python(data, attrs.block_shape, begin, end)


def _cross_entropy(predictions, targets, logits):
    work = _work(predictions.dtype)
    p = predictions.astype(work)
    total = np.sum((p if logits else np.log(p)) * targets.astype(work))
    return as_dtype(work.type(-1.0 / predictions.shape[0]) * total, predictions.dtype)


@register("nn.cross_entropy")
def cross_entropy(attrs, predictions, targets):
    """``-sum(log(predictions) * targets) / batch``."""
    return _cross_entropy(predictions, targets, False)


@register("nn.cross_entropy_with_logits")
def cross_entropy_with_logits(attrs, predictions, targets):
    """``-sum(predictions * targets) / batch``."""
    return _cross_entropy(predictions, targets, True)


@register("nn.nll_loss")
def nll_loss(attrs, predictions, targets, weights):
    """Per-element ``-predictions[n, t] * weights[t]`` (0 for ``ignore_index``), reduced."""
    work = _work(predictions.dtype)
    t = targets.astype("int64")
    keep = t != attrs.ignore_index
    safe = np.where(keep, t, 0)
    w = np.where(keep, weights.astype(work)[safe], work.type(0))
    picked = np.take_along_axis(predictions.astype(work), safe[:, None], axis=1)[:, 0]
    loss = -picked * w
    if attrs.reduction == "none":
        return as_dtype(loss, predictions.dtype)
    if attrs.reduction == "sum":
        return as_dtype(np.sum(loss), predictions.dtype)
    return as_dtype(np.sum(loss) / np.sum(w), predictions.dtype)


@register("nn.conv2d_backward_weight")
def conv2d_backward_weight(attrs, grad, data):
    """``dW[o, c, ky, kx] = sum grad[n, o, y, x] * data_pad[n, g * cg + c, y * s + ky * d, x * s + kx * d]``."""
    work = _work(data.dtype)
    top, left, bottom, right = attrs.padding
    xp = np.pad(data.astype(work), ((0, 0), (0, 0), (top, bottom), (left, right)))
    kh, kw = attrs.kernel_size
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    _, o, gh, gw = grad.shape
    cg, og = data.shape[1] // attrs.groups, o // attrs.groups
    out = np.zeros((o, cg, kh, kw), work)
    g = grad.astype(work)
    for ky in range(kh):
        for kx in range(kw):
            window = xp[:, :, ky * dh: ky * dh + (gh - 1) * sh + 1: sh, kx * dw: kx * dw + (gw - 1) * sw + 1: sw]
            for f in range(o):
                channels = window[:, (f // og) * cg: (f // og + 1) * cg]  # (n, cg, gh, gw)
                out[f, :, ky, kx] = np.einsum("nhw,nchw->c", g[:, f], channels)
    return as_dtype(out, np.dtype(attrs.out_dtype or data.dtype))


def _pool_grad(attrs, out_grad, data, kind):
    n, c, h, w = data.shape
    (kh, kw), (sh, sw) = attrs.pool_size, attrs.strides
    top, left, _, _ = attrs.padding
    oh, ow = out_grad.shape[2:]
    out = np.zeros(data.shape, out_grad.dtype)
    for oy in range(oh):
        for ox in range(ow):
            y0, x0 = oy * sh - top, ox * sw - left
            ys, ye, xs, xe = max(y0, 0), min(y0 + kh, h), max(x0, 0), min(x0 + kw, w)
            if ye <= ys or xe <= xs:
                continue
            g = out_grad[:, :, oy, ox]
            if kind == "max":
                window = data[:, :, ys:ye, xs:xe].reshape(n, c, -1)
                first = np.argmax(window, axis=2)
                yy, xx = ys + first // (xe - xs), xs + first % (xe - xs)
                for b in range(n):
                    for ch in range(c):
                        out[b, ch, yy[b, ch], xx[b, ch]] += g[b, ch]
            else:
                count = kh * kw if attrs.count_include_pad else (ye - ys) * (xe - xs)
                out[:, :, ys:ye, xs:xe] += (g / out_grad.dtype.type(count))[:, :, None, None]
    return out


@register("nn.max_pool2d_grad")
def max_pool2d_grad(attrs, out_grad, data):
    """Each window's gradient to its first maximum."""
    return _pool_grad(attrs, out_grad, data, "max")


@register("nn.avg_pool2d_grad")
def avg_pool2d_grad(attrs, out_grad, data):
    """Each window's gradient spread evenly over its cells."""
    return _pool_grad(attrs, out_grad, data, "avg")
