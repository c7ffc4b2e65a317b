"""Data movement in numpy under TVM's names: ``space_to_batch_nd_python``, ``batch_to_space_nd_python`` (TensorFlow's
operators, over the axes ``1..M`` for an ``M``-value ``block_shape``) and ``strided_set_python``. The reference
interpreter registers these as ``nn.space_to_batch_nd``, ``nn.batch_to_space_nd`` and ``strided_set``.
"""

import numpy as np

from ...error import OpAttributeInvalid

__all__ = ["space_to_batch_nd_python", "batch_to_space_nd_python", "strided_set_python"]


def space_to_batch_nd_python(data, block_shape, pad_before, pad_after, pad_value=0):
    """Pad the axes ``1..M`` of ``data`` and move each ``block_shape`` block's positions into the batch:
    ``(N * prod(block_shape), padded_1 / block_shape[0], ..., padded_M / block_shape[M-1], rest...)``, the block
    position the outer part of the new batch index."""
    m = len(block_shape)
    rest = data.shape[1 + m:]
    x = np.pad(data, [(0, 0), *zip(pad_before, pad_after, strict=True)] + [(0, 0)] * len(rest),
               constant_values=np.asarray(pad_value).astype(data.dtype))
    sizes = x.shape[1:1 + m]
    if any(s % b for s, b in zip(sizes, block_shape, strict=True)):
        raise OpAttributeInvalid(f"space_to_batch_nd: padded sizes {sizes} are not multiples of block_shape "
                                 f"{tuple(block_shape)}")
    split = (x.shape[0],) + tuple(v for s, b in zip(sizes, block_shape, strict=True) for v in (s // b, b)) + rest
    # (N, s1, b1, ..., sM, bM, rest) -> (b1, ..., bM, N, s1, ..., sM, rest)
    perm = [2 + 2 * k for k in range(m)] + [0] + [1 + 2 * k for k in range(m)] + list(range(1 + 2 * m, 1 + 2 * m
                                                                                          + len(rest)))
    out = x.reshape(split).transpose(perm)
    return np.ascontiguousarray(out.reshape((-1,) + tuple(s // b for s, b in zip(sizes, block_shape, strict=True))
                                            + rest))


def batch_to_space_nd_python(data, block_shape, crop_begin_list, crop_end_list):
    """The inverse of :func:`space_to_batch_nd_python`: the batch split into ``block_shape`` blocks interleaved
    back into the axes ``1..M``, then ``crop_begin_list``/``crop_end_list`` elements cut from each end."""
    m = len(block_shape)
    rest = data.shape[1 + m:]
    blocks = int(np.prod(block_shape))
    if data.shape[0] % blocks:
        raise OpAttributeInvalid(f"batch_to_space_nd: batch {data.shape[0]} is not a multiple of prod(block_shape) "
                                 f"{blocks}")
    batch = data.shape[0] // blocks
    x = data.reshape(tuple(block_shape) + (batch,) + data.shape[1:])
    # (b1, ..., bM, N, s1, ..., sM, rest) -> (N, s1, b1, ..., sM, bM, rest)
    perm = [m] + [v for k in range(m) for v in (m + 1 + k, k)] + [2 * m + 1 + r for r in range(len(rest))]
    x = x.transpose(perm).reshape((batch,) + tuple(data.shape[1 + k] * block_shape[k] for k in range(m)) + rest)
    crop = tuple(slice(int(lo), x.shape[1 + k] - int(hi))
                 for k, (lo, hi) in enumerate(zip(crop_begin_list, crop_end_list, strict=True)))
    return np.ascontiguousarray(x[(slice(None), *crop)])


def strided_set_python(data, v, begin, end, strides):
    """A copy of ``data`` with ``data[begin:end:strides] = v`` (per leading axis; missing values: the whole axis,
    stride 1)."""
    strides = [] if strides is None else list(strides)
    index = tuple(slice(int(begin[i]) if i < len(begin) else None, int(end[i]) if i < len(end) else None,
                        int(strides[i]) if i < len(strides) else None) for i in range(data.ndim))
    out = np.array(data, copy=True)
    out[index] = v
    return out
