"""kiln.topi.testing: numpy reference implementations under the names TVM's tests call (``tvm.topi.testing``).

Each function takes and returns numpy arrays with TVM's signature. The functions in this file are a few lines of
numpy of their own (written apart from the reference interpreter, so the two check each other); the image and
vision references (``resize.py``...) are the one implementation of their operators, which the reference
interpreter (:mod:`kiln.relay.reference`) registers too, and are checked against independent formulas in the tests.
"""

import numpy as np

from ..nn.conv2d import _pair
from .array import matrix_set_diag, sequence_mask
from .common import get_pad_tuple
from .grad import conv2d_backward_weight_python, pool_grad_nchw
from .grid import affine_grid_python, grid_sample_python
from .regular_nms import regular_non_max_suppression_python
from .resize import crop_and_resize_python, resize1d_python, resize2d_python, resize3d_python
from .sparse import sparse_conv2d_python, sparse_transpose_python
from .transform import batch_to_space_nd_python, space_to_batch_nd_python, strided_set_python
from .vision import (
    deformable_conv2d_nchw_python,
    deformable_conv2d_nhwc_python,
    reorg_python,
    roi_align_nchw_python,
    roi_align_nhwc_python,
    roi_pool_nchw_python,
)

__all__ = ["softmax_python", "log_softmax_python", "conv2d_nchw_python", "conv2d_nhwc_python", "dilate_python",
           "batch_matmul", "gather_python", "one_hot", "depth_to_space_python", "space_to_depth_python",
           "l2_normalize_python", "lrn_python", "strided_slice_python", "searchsorted_ref",
           "resize1d_python", "resize2d_python", "resize3d_python", "crop_and_resize_python",
           "affine_grid_python", "grid_sample_python", "deformable_conv2d_nchw_python", "deformable_conv2d_nhwc_python",
           "reorg_python", "roi_align_nchw_python", "roi_align_nhwc_python", "roi_pool_nchw_python",
           "space_to_batch_nd_python", "batch_to_space_nd_python", "strided_set_python",
           "pool_grad_nchw", "conv2d_backward_weight_python",
           "sequence_mask", "matrix_set_diag", "sparse_conv2d_python", "sparse_transpose_python",
           "regular_non_max_suppression_python"]


def softmax_python(a_np, axis=1):
    """Softmax along ``axis``."""
    e = np.exp(a_np - a_np.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_python(a_np, axis=1):
    """Log-softmax along ``axis``."""
    shifted = a_np - a_np.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def conv2d_nchw_python(a_np, w_np, stride, padding, groups=1):
    """Convolution of NCHW ``a_np`` with an OIHW ``w_np`` (``groups`` groups), summed in float64 for floats."""
    (sh, sw), (top, left, bottom, right) = _pair(stride), get_pad_tuple(padding, w_np.shape[2:])
    n, c, _, _ = a_np.shape
    o, cg, kh, kw = w_np.shape
    work = "float64" if np.issubdtype(np.result_type(a_np, w_np), np.floating) else "int64"
    x = np.pad(a_np.astype(work), ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh, ow = (x.shape[2] - kh) // sh + 1, (x.shape[3] - kw) // sw + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow), work)
    for g in range(groups):
        xg, wg = x[:, g * cg:(g + 1) * cg], w_np[g * og:(g + 1) * og].astype(work)
        for i in range(kh):
            for j in range(kw):
                tap = xg[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", tap, wg[:, :, i, j])
    return out.astype(np.result_type(a_np, w_np))


def conv2d_nhwc_python(a_np, w_np, stride, padding, groups=1):
    """Convolution of NHWC ``a_np`` with an HWIO ``w_np``."""
    out = conv2d_nchw_python(a_np.transpose(0, 3, 1, 2), w_np.transpose(3, 2, 0, 1), stride, padding, groups)
    return out.transpose(0, 2, 3, 1)


def dilate_python(input_np, strides, dilation_value=0.0, out_dtype=None):
    """``input_np`` with ``strides[i] - 1`` elements of ``dilation_value`` between neighbours along axis ``i``."""
    shape = tuple((n - 1) * s + 1 for n, s in zip(input_np.shape, strides, strict=True))
    out = np.full(shape, dilation_value, dtype=out_dtype or input_np.dtype)
    out[tuple(slice(None, None, s) for s in strides)] = input_np
    return out


def batch_matmul(x, y, out_dtype=None, trans_x=False, trans_y=True):
    """``x @ y`` per batch, each operand transposed as asked (a batch of 1 broadcasts)."""
    x = x.transpose(0, 2, 1) if trans_x else x
    y = y.transpose(0, 2, 1) if trans_y else y
    return np.matmul(x, y).astype(out_dtype or x.dtype)


def gather_python(data, axis, indices):
    """``numpy.take_along_axis`` (ONNX's GatherElements)."""
    return np.take_along_axis(data, indices.astype("int64"), axis)


def one_hot(indices, on_value, off_value, depth, axis, dtype):
    """One-hot encoding of ``indices`` with ``depth`` classes inserted at ``axis``."""
    axis = indices.ndim + 1 + axis if axis < 0 else axis
    hot = np.expand_dims(indices, axis) == np.arange(depth).reshape([-1 if i == axis else 1
                                                                     for i in range(indices.ndim + 1)])
    return np.where(hot, on_value, off_value).astype(dtype)


def depth_to_space_python(data, block_size, mode="DCR"):
    """NCHW depth to space, ``mode`` ``"DCR"`` (depth, column, row) or ``"CRD"``."""
    n, c, h, w = data.shape
    b = block_size
    if mode == "DCR":
        out = data.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        out = data.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return out.reshape(n, c // (b * b), h * b, w * b)


def space_to_depth_python(data, block_size):
    """NCHW space to depth."""
    n, c, h, w = data.shape
    b = block_size
    out = data.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return out.reshape(n, c * b * b, h // b, w // b)


def l2_normalize_python(a_np, eps, axis=None):
    """``a / sqrt(max(sum(a^2 over axis), eps))``; ``axis`` an int, a sequence of ints or None (every axis)."""
    axis = (axis,) if isinstance(axis, int) else tuple(axis) if axis is not None else None
    return a_np / np.sqrt(np.maximum((a_np * a_np).sum(axis=axis, keepdims=True), eps))


def lrn_python(a_np, size, axis, bias, alpha, beta):
    """Local response normalization across ``size`` neighbours along ``axis``."""
    squared = np.moveaxis(a_np * a_np, axis, 0)
    half = size // 2
    padded = np.pad(squared, [(half, half)] + [(0, 0)] * (squared.ndim - 1))
    window = sum(padded[k:k + squared.shape[0]] for k in range(size))
    return a_np / np.power(bias + alpha / size * np.moveaxis(window, 0, axis), beta)


def strided_slice_python(data, begin, end, strides, slice_mode="end", axes=None):
    """``data`` sliced along ``axes`` (all leading axes by default); ``slice_mode="size"`` reads ``end`` as sizes
    (``-1``: to the end) with unit strides."""
    axes = list(axes) if axes is not None else list(range(len(begin)))
    index = [slice(None)] * data.ndim
    for k, axis in enumerate(axes):
        start = begin[k]
        if slice_mode == "size":
            stop = None if end[k] < 0 else start + end[k]
            index[axis] = slice(start, stop, 1)
        else:
            step = strides[k] if strides is not None and k < len(strides) else 1  # a list or a numpy array
            index[axis] = slice(start, end[k], step)
    return data[tuple(index)]


def searchsorted_ref(sorted_sequence, values, right, out_dtype):
    """Where each of ``values`` goes in ``sorted_sequence`` along the last axis (a 1-D sequence serves every row
    of ``values``); ``right`` puts equal values after their matches."""
    side = "right" if right else "left"
    rows = int(np.prod(values.shape[:-1], dtype=np.int64)) if values.ndim > 1 else 1
    sequences = np.broadcast_to(sorted_sequence, (rows, sorted_sequence.shape[-1])) if sorted_sequence.ndim == 1 \
        else sorted_sequence.reshape(-1, sorted_sequence.shape[-1])
    flat = values.reshape(-1, values.shape[-1])
    out = np.stack([np.searchsorted(seq, row, side=side) for seq, row in zip(sequences, flat, strict=True)])
    return out.astype(out_dtype).reshape(values.shape)


# the convolution and pooling references live in their own modules
from .conv import (  # noqa: E402, F401
    conv1d_ncw_python,
    conv1d_transpose_ncw_python,
    conv2d_transpose_nchw_python,
    conv2d_transpose_nhwc_python,
    conv3d_ncdhw_python,
    conv3d_ndhwc_python,
    conv3d_transpose_ncdhw_python,
    group_conv1d_ncw_python,
    group_conv1d_transpose_ncw_python,
)
from .correlation import correlation_nchw_python  # noqa: E402, F401
from .dispatch import (  # noqa: E402, F401
    dispatch,
    get_broadcast_schedule,
    get_conv2d_nchw_implement,
    get_elemwise_schedule,
    get_injective_schedule,
    get_reduce_schedule,
)
from .pool import adaptive_pool, poolnd_python  # noqa: E402, F401
