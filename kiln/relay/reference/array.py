"""The array, ``*_like`` and ``variance`` operators in numpy (:mod:`kiln.relay.op.array`, :mod:`kiln.relay.op.like`).

Each follows numpy's function of the same name where there is one (``stack``, ``meshgrid``, ``triu``/``tril``,
``unravel_index``, ``searchsorted``, ``einsum``); ``variance`` accumulates float16 in float32 as the sums do.
"""

import numpy as np

from ..op.like import collapse_axes, slice_like_ends
from ..op.type_relations import reduce_axes
from .common import accumulator, as_dtype, np_dtype, register


@register("zeros_like")
def zeros_like(attrs, data):
    """Zeros of ``data``'s shape and dtype."""
    return np.zeros_like(data)


@register("ones_like")
def ones_like(attrs, data):
    """Ones of ``data``'s shape and dtype."""
    return np.ones_like(data)


@register("full_like")
def full_like(attrs, data, fill_value):
    """``fill_value`` (converted to ``data``'s dtype) in ``data``'s shape."""
    return np.full(data.shape, np.asarray(fill_value).astype(data.dtype), data.dtype)


@register("cast_like")
def cast_like(attrs, data, like):
    """``data`` converted to ``like``'s dtype."""
    return data.astype(like.dtype)


@register("reshape_like")
def reshape_like(attrs, data, like):
    """``data`` reshaped to the shape the type relation gives."""
    from ..op.like import reshape_like_shape

    return data.reshape(reshape_like_shape(data.shape, like.shape, attrs))


@register("broadcast_to_like")
def broadcast_to_like(attrs, data, like):
    """``data`` broadcast to ``like``'s shape."""
    return np.ascontiguousarray(np.broadcast_to(data, like.shape))


def _collapse(data, shape):
    axes = collapse_axes(data.shape, shape)
    total = np.sum(data, axis=axes, dtype=accumulator(data.dtype)) if axes else data
    return as_dtype(np.reshape(total, shape), data.dtype)


@register("collapse_sum_like")
def collapse_sum_like(attrs, data, like):
    """``data`` summed down to ``like``'s shape."""
    return _collapse(data, like.shape)


@register("collapse_sum_to")
def collapse_sum_to(attrs, data, shape):
    """``data`` summed down to ``attrs.shape``."""
    return _collapse(data, tuple(attrs.shape))


@register("slice_like")
def slice_like(attrs, data, like):
    """The leading block of ``data`` of ``like``'s size on the sliced axes."""
    ends = slice_like_ends(data.shape, like.shape, attrs.axes)
    return data[tuple(slice(0, e) for e in ends)]


@register("variance")
def variance(attrs, data, mean):
    """The mean squared deviation from ``mean`` over the reduced axes (``n - 1`` divides when unbiased)."""
    axes = tuple(reduce_axes(data.ndim, attrs.axis, attrs.exclude))
    work = accumulator(data.dtype)
    diff = data.astype(work) - mean.astype(work)
    count = int(np.prod([data.shape[a] for a in axes])) - (1 if attrs.unbiased else 0)
    total = np.sum(diff * diff, axis=axes, keepdims=attrs.keepdims, dtype=work)
    return as_dtype(total / work.type(max(count, 0)), data.dtype)


@register("stack")
def stack(attrs, data):
    """numpy's ``stack``."""
    return np.stack(data, axis=attrs.axis)


@register("arange")
def arange(attrs, start, stop, step):
    """``start + step * i`` in the result dtype, for the length the type relation gives."""
    from ..op.array import arange_length

    dtype = np_dtype(attrs.dtype)
    n = arange_length(attrs.start, attrs.stop, attrs.step)
    first, delta = np.asarray(attrs.start).astype(dtype), np.asarray(attrs.step).astype(dtype)
    return as_dtype(first + delta * np.arange(n).astype(dtype), dtype)


@register("meshgrid")
def meshgrid(attrs, data):
    """numpy's ``meshgrid`` (copies, not views)."""
    return tuple(np.ascontiguousarray(g) for g in np.meshgrid(*[np.reshape(d, -1) for d in data],
                                                              indexing=attrs.indexing))


@register("trilu")
def trilu(attrs, data, k):
    """numpy's ``triu`` (``upper``) or ``tril`` from diagonal ``k``."""
    return (np.triu if attrs.upper else np.tril)(data, int(k))


@register("unravel_index")
def unravel_index(attrs, indices, shape):
    """The coordinates of every flat index, stacked on a first axis: numpy's ``unravel_index``, with indices past
    the end wrapping around the first axis as TVM's (floor division and remainder) arithmetic does."""
    out = np.zeros((shape.shape[0],) + indices.shape, indices.dtype)
    rest = indices.astype("int64")
    for a in reversed(range(shape.shape[0])):
        size = np.int64(shape[a])
        out[a] = np.mod(rest, size)
        rest = np.floor_divide(rest, size)
    return out


@register("sequence_mask")
def sequence_mask(attrs, data, valid_length):
    """``mask_value`` at time steps at or past each batch's valid length."""
    steps = np.arange(data.shape[attrs.axis])
    lengths = valid_length if valid_length.dtype.kind == "f" else valid_length.astype("int64")
    keep = steps[:, None] < lengths[None, :]  # (time, batch)
    if attrs.axis == 1:
        keep = keep.T
    keep = keep.reshape(keep.shape + (1,) * (data.ndim - 2))
    return np.where(keep, data, np.asarray(attrs.mask_value).astype(data.dtype)).astype(data.dtype)


@register("reverse_sequence")
def reverse_sequence(attrs, data, seq_lengths):
    """The first ``seq_lengths[b]`` elements along ``seq_axis`` reversed, per batch."""
    out = np.array(data)
    seq, batch = attrs.seq_axis % data.ndim, attrs.batch_axis % data.ndim
    for b, length in enumerate(seq_lengths):
        n = min(int(length), data.shape[seq])
        if n <= 0:
            continue
        src = [slice(None)] * data.ndim
        src[batch], src[seq] = b, slice(0, n)
        out[tuple(src)] = np.flip(data[tuple(src)], axis=seq - (1 if batch < seq else 0))
    return out


@register("ndarray_size")
def ndarray_size(attrs, data):
    """The number of elements."""
    return np.asarray(data.size, attrs.dtype)


@register("searchsorted")
def searchsorted(attrs, sorted_sequence, values):
    """numpy's ``searchsorted`` along the last axis (row by row when the sequence has several), as the count of
    elements before each value (the same on a sorted sequence)."""
    seq = sorted_sequence if sorted_sequence.ndim > 1 else np.broadcast_to(sorted_sequence, values.shape[:-1]
                                                                           + sorted_sequence.shape)
    before = (seq[..., None, :] <= values[..., None]) if attrs.right else (seq[..., None, :] < values[..., None])
    return np.sum(before, axis=-1).astype(attrs.dtype)


@register("sparse_to_dense")
def sparse_to_dense(attrs, sparse_indices, sparse_values, default_value):
    """``default_value`` everywhere, then each sparse value written at its coordinates in order."""
    out = np.full(attrs.output_shape, default_value, sparse_values.dtype)
    indices = sparse_indices.reshape(-1, len(attrs.output_shape)) if sparse_indices.ndim != 2 else sparse_indices
    values = np.broadcast_to(sparse_values, (indices.shape[0],))
    for coord, value in zip(indices, values, strict=True):
        out[tuple(int(c) for c in coord)] = value
    return out


@register("einsum")
def einsum(attrs, data):
    """numpy's ``einsum`` (integers accumulate in their own dtype; float16 in float32)."""
    dtype = data[0].dtype
    work = accumulator(dtype)
    return as_dtype(np.einsum(attrs.equation, *[d.astype(work) for d in data], dtype=work), dtype)


def _angle(f, k, n, dtype):
    return (np.mod(f * k, n)).astype("float64") * (2 * np.pi / n)


@register("stft")
def stft(attrs, data, window):
    """TVM's short-time Fourier transform (angles over ``win_length``)."""
    dtype = data.dtype
    rows = attrs.n_fft // 2 + 1 if attrs.onesided else attrs.n_fft
    frames = (data.shape[-1] - attrs.n_fft) // attrs.hop_length + 1
    k = np.arange(attrs.win_length)
    starts = np.arange(frames)[:, None] * attrs.hop_length + k[None, :]  # (frames, win)
    segments = data[..., starts] * window.astype(dtype)  # (..., frames, win)
    angle = _angle(np.arange(rows)[:, None], k[None, :], attrs.win_length, dtype)  # (rows, win), float64
    scale = dtype.type(1 / np.sqrt(attrs.n_fft) if attrs.normalized else 1.0)
    re = np.einsum("...tk,fk->...ft", segments, np.cos(angle).astype(dtype)) * scale
    im = np.einsum("...tk,fk->...ft", segments, -np.sin(angle).astype(dtype)) * scale
    return as_dtype(np.stack([re, im], axis=-1), dtype)


@register("dft")
def dft(attrs, re_data, im_data):
    """The DFT (or inverse DFT, divided by the length) of the last axis."""
    dtype = re_data.dtype
    n = re_data.shape[-1]
    sign = dtype.type(1.0 if attrs.inverse else -1.0)
    factor = dtype.type(1.0 / n if attrs.inverse else 1.0)
    angle = _angle(np.arange(n)[:, None], np.arange(n)[None, :], n, dtype) * float(sign)  # (out, k), float64
    c, s = np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)
    re = (np.einsum("...k,fk->...f", re_data, c) - np.einsum("...k,fk->...f", im_data, s)) * factor
    im = (np.einsum("...k,fk->...f", re_data, s) + np.einsum("...k,fk->...f", im_data, c)) * factor
    return as_dtype(re, dtype), as_dtype(im, dtype)


@register("sliding_window")
def sliding_window(attrs, data):
    """Every window over the axes from ``axis`` on."""
    axis = attrs.axis % data.ndim
    view = np.lib.stride_tricks.sliding_window_view(data, attrs.window_shape, axis=tuple(range(axis, data.ndim)))
    steps = tuple(slice(None) for _ in range(axis)) + tuple(slice(None, None, s) for s in attrs.strides)
    return np.ascontiguousarray(view[steps])


@register("adv_index")
def adv_index(attrs, inputs):
    """numpy's advanced indexing."""
    data, *indices = inputs
    return np.ascontiguousarray(data[tuple(i.astype("int64") for i in indices)])


@register("matrix_set_diag")
def matrix_set_diag(attrs, data, diagonal):
    """TensorFlow's ``matrix_set_diag`` (see :func:`kiln.topi.array.matrix_set_diag`)."""
    out = np.array(data)
    rows, cols = data.shape[-2:]
    max_len = diagonal.shape[-1]
    for k in range(attrs.k1, attrs.k2 + 1):
        length = min(rows + min(0, k), cols - max(0, k))
        right = attrs.super_diag_right_align if k >= 0 else attrs.sub_diag_right_align
        offset = max_len - length if right else 0
        values = diagonal if attrs.k1 == attrs.k2 else diagonal[..., attrs.k2 - k, :]
        for n in range(length):
            r, c = (n, n + k) if k >= 0 else (n - k, n)
            out[..., r, c] = values[..., n + offset]
    return out
