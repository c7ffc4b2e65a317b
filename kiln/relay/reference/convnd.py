"""1-D/3-D convolutions, the transposed convolutions and the 1-D/3-D and adaptive poolings in numpy.

Data and kernels are moved to their channel-first primal layouts (``NC<spatial>``, ``OI``/``IO<spatial>``) and
back. A convolution sums, over the kernel offsets, the strided slice of the padded input each offset reads
multiplied (``einsum`` over the group's input channels) by that offset's kernel slice. A transposed convolution
scatters instead: each offset adds the input times its kernel slice into the strided slice of a full-size output,
which is then cropped by the padding. Integers compute in ``out_dtype`` (wrapping as the compiled code does),
float16 in float32. Pooling follows :mod:`.conv`'s 2-D pooling axis by axis.
"""

import itertools
import math

import numpy as np

from ...topi.nn.conv2d import conv_out_size
from ...topi.nn.convnd import conv_transpose_out_size, primal_layout
from ...topi.nn.pooling import ceil_mode_extra, pool_out_size
from .common import as_dtype, is_int, lowest, np_dtype, register, trunc_divide
from .transform import convert_layout


def _work(out_dtype):
    return np.dtype("float32") if out_dtype == np.float16 else out_dtype


def conv_ncx(data, weight, strides, padding, dilation, groups, out_dtype):
    """Convolution of ``(N, C, *S)`` data with an ``(O, C / groups, *K)`` kernel (or TVM's depthwise
    ``(C, multiplier, *K)`` one, ``groups == C``: the first reshaped)."""
    work = _work(out_dtype)
    data, weight = data.astype(work), weight.astype(work)
    if groups == data.shape[1] == weight.shape[0] and weight.shape[1] != 1:
        weight = weight.reshape((-1, 1) + weight.shape[2:])
    nd = data.ndim - 2
    before, after = padding[:nd], padding[nd:]
    space, ksize = data.shape[2:], weight.shape[2:]
    out_space = [conv_out_size(space[a], ksize[a], strides[a], dilation[a], before[a], after[a]) for a in range(nd)]
    xp = np.pad(data, [(0, 0), (0, 0)] + list(zip(before, after, strict=True)))
    n, c = data.shape[:2]
    o, cg = weight.shape[:2]
    xg = xp.reshape((n, groups, cg) + xp.shape[2:])
    wg = weight.reshape((groups, o // groups, cg) + tuple(ksize))
    out = np.zeros((n, groups, o // groups, *out_space), work)
    for offset in itertools.product(*[range(k) for k in ksize]):
        window = tuple(slice(offset[a] * dilation[a], offset[a] * dilation[a] + (out_space[a] - 1) * strides[a] + 1,
                             strides[a]) for a in range(nd))
        piece = xg[(slice(None),) * 3 + window]  # (n, groups, cg, *out_space)
        out += np.einsum("ngc...,goc->ngo...", piece, wg[(Ellipsis, *offset)]).astype(work)
    return as_dtype(out.reshape((n, o, *out_space)), out_dtype)


def conv_transpose_ncx(data, weight, strides, padding, output_padding, dilation, groups, out_dtype):
    """Transposed convolution of ``(N, C, *S)`` data with a ``(C, O / groups, *K)`` kernel."""
    work = _work(out_dtype)
    data, weight = data.astype(work), weight.astype(work)
    nd = data.ndim - 2
    space, ksize = data.shape[2:], weight.shape[2:]
    n, c = data.shape[:2]
    og = weight.shape[1]
    cg = c // groups
    full = [(space[a] - 1) * strides[a] + dilation[a] * (ksize[a] - 1) + 1 + output_padding[a] for a in range(nd)]
    out = np.zeros((n, groups, og, *full), work)
    xg = data.reshape((n, groups, cg) + tuple(space))
    wg = weight.reshape((groups, cg, og) + tuple(ksize))
    for offset in itertools.product(*[range(k) for k in ksize]):
        window = tuple(slice(offset[a] * dilation[a], offset[a] * dilation[a] + (space[a] - 1) * strides[a] + 1,
                             strides[a]) for a in range(nd))
        out[(slice(None),) * 3 + window] += np.einsum("ngc...,gco->ngo...", xg, wg[(Ellipsis, *offset)]).astype(work)
    sizes = [conv_transpose_out_size(space[a], ksize[a], strides[a], dilation[a], padding[a], padding[nd + a],
                                     output_padding[a]) for a in range(nd)]
    crop = tuple(slice(padding[a], padding[a] + sizes[a]) for a in range(nd))
    return as_dtype(out[(slice(None),) * 3 + crop].reshape((n, og * groups, *sizes)), out_dtype)


def _conv(attrs, data, weight, transpose):
    out_dtype = np_dtype(attrs.out_dtype or data.dtype)
    primal = primal_layout(attrs.data_layout)
    x = convert_layout(data, attrs.data_layout, primal)
    k = convert_layout(weight, attrs.kernel_layout, ("IO" if transpose else "OI") + primal[2:])
    if transpose:
        out = conv_transpose_ncx(x, k, attrs.strides, attrs.padding, attrs.output_padding, attrs.dilation,
                                 attrs.groups, out_dtype)
    else:
        out = conv_ncx(x, k, attrs.strides, attrs.padding, attrs.dilation, attrs.groups, out_dtype)
    return convert_layout(out, primal, attrs.out_layout or attrs.data_layout)


@register("nn.conv1d", "nn.conv3d")
def conv(attrs, data, weight):
    """1-D or 3-D convolution in any layouts with the primal axes."""
    return _conv(attrs, data, weight, False)


@register("nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose")
def conv_transpose(attrs, data, weight):
    """Transposed convolution in any layouts with the primal axes."""
    return _conv(attrs, data, weight, True)


def _spatial_last(data, layout):
    primal = primal_layout(layout)
    return convert_layout(data, layout, primal), primal


def _pool(attrs, data, kind):
    x, primal = _spatial_last(data, attrs.layout)
    nd = x.ndim - 2
    space = x.shape[2:]
    k, s, d, p = attrs.pool_size, attrs.strides, attrs.dilation, attrs.padding
    outs = [pool_out_size(space[a], k[a], s[a], d[a], p[a], p[nd + a], attrs.ceil_mode) for a in range(nd)]
    extra = [ceil_mode_extra(space[a], outs[a], k[a], s[a], d[a], p[a], p[nd + a]) for a in range(nd)]
    pads = [(0, 0), (0, 0)] + [(p[a], p[nd + a] + extra[a]) for a in range(nd)]
    slices = [[slice(j * d[a], j * d[a] + (outs[a] - 1) * s[a] + 1, s[a]) for j in range(k[a])] for a in range(nd)]
    if kind == "max":
        xp = np.pad(x, pads, constant_values=lowest(x.dtype))
        out = None
        for window in itertools.product(*slices):
            piece = xp[(Ellipsis, *window)]
            out = piece if out is None else np.maximum(out, piece)
    else:
        acc = "float32" if x.dtype == np.float16 else ("int64" if is_int(x.dtype) else x.dtype)
        xp = np.pad(x.astype(acc), pads)
        inside = np.zeros([space[a] + p[a] + p[nd + a] + extra[a] for a in range(nd)], "int64")
        if attrs.count_include_pad:
            inside[tuple(slice(0, space[a] + p[a] + p[nd + a]) for a in range(nd))] = 1
        else:
            inside[tuple(slice(p[a], p[a] + space[a]) for a in range(nd))] = 1
        total, count = 0, 0
        for window in itertools.product(*slices):
            total = total + xp[(Ellipsis, *window)]
            count = count + inside[window]
        count = np.maximum(count, 1)
        out = trunc_divide(total, count) if is_int(x.dtype) else total / count.astype(total.dtype)
        out = as_dtype(out, x.dtype)
    return convert_layout(out, primal, attrs.out_layout or attrs.layout)


@register("nn.max_pool1d", "nn.max_pool3d")
def max_pool(attrs, data):
    """1-D or 3-D max pooling."""
    return _pool(attrs, data, "max")


@register("nn.avg_pool1d", "nn.avg_pool3d")
def avg_pool(attrs, data):
    """1-D or 3-D average pooling."""
    return _pool(attrs, data, "avg")


def _adaptive(attrs, data, kind):
    x, primal = _spatial_last(data, attrs.layout)
    nd = x.ndim - 2
    space = x.shape[2:]
    outs = list(attrs.output_size) or list(space)
    out = np.zeros(x.shape[:2] + tuple(outs), x.dtype)
    bins = [[(i * space[a] // outs[a], math.ceil((i + 1) * space[a] / outs[a])) for i in range(outs[a])]
            for a in range(nd)]
    for cell in itertools.product(*[range(m) for m in outs]):
        window = x[(Ellipsis, *[slice(*bins[a][cell[a]]) for a in range(nd)])]
        axes = tuple(range(2, 2 + nd))
        if kind == "max":
            value = np.max(window, axis=axes)
        elif is_int(x.dtype):
            value = trunc_divide(np.sum(window, axis=axes, dtype="int64"), np.int64(window[0, 0].size))
        else:
            value = np.mean(window, axis=axes, dtype="float32" if x.dtype == np.float16 else x.dtype)
        out[(Ellipsis, *cell)] = as_dtype(value, x.dtype)
    return convert_layout(out, primal, attrs.out_layout or attrs.layout)


for _n in (1, 2, 3):
    register(f"nn.adaptive_max_pool{_n}d")(lambda attrs, data: _adaptive(attrs, data, "max"))
    register(f"nn.adaptive_avg_pool{_n}d")(lambda attrs, data: _adaptive(attrs, data, "avg"))
