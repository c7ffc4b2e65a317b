""":mod:`kiln.relay.op.array_more`'s operators in numpy."""

import math

import numpy as np

from ...topi.testing.sparse import bsr_to_dense
from ...topi.testing.transform import strided_set_python
from ..op.array_more import reverse_reshape_shape
from .common import register


@register("invert_permutation")
def invert_permutation(attrs, data):
    """``out[data[i]] = i``."""
    out = np.zeros_like(data)
    out[data.astype("int64")] = np.arange(data.shape[0]).astype(data.dtype)
    return out


@register("contrib_reverse_reshape")
def contrib_reverse_reshape(attrs, data):
    """``reshape`` matched from the right."""
    return data.reshape(reverse_reshape_shape(data.shape, attrs.newshape))


@register("strided_set")
def strided_set(attrs, data, v, begin, end, strides):
    """``data`` with ``data[begin:end:strides] = v``."""
    return strided_set_python(data, v, [int(b) for b in begin], [int(e) for e in end], [int(s) for s in strides])


@register("sparse_reshape")
def sparse_reshape(attrs, sparse_indices, prev_shape, new_shape):
    """Coordinates flattened in ``prev_shape`` and unflattened in ``new_shape`` (``-1`` resolved); an unchanged
    shape keeps the coordinates as they are (even out of range, as TVM's kernel does)."""
    total = int(np.prod(prev_shape.astype("int64")))
    known = int(np.prod([d for d in new_shape.astype("int64") if d >= 0]))
    shape = np.array([d if d >= 0 else total // known for d in new_shape.astype("int64")], new_shape.dtype)
    if np.array_equal(shape.astype("int64"), prev_shape.astype("int64")):
        return sparse_indices.copy(), shape
    flat = np.ravel_multi_index(tuple(sparse_indices.astype("int64").T), tuple(prev_shape.astype("int64")))
    coords = np.stack(np.unravel_index(flat, tuple(shape.astype("int64"))), axis=1) if len(flat) else \
        np.zeros((0, len(shape)), "int64")
    return coords.astype(sparse_indices.dtype).reshape(sparse_indices.shape[0], len(shape)), shape


@register("fixed_point_multiply")
def fixed_point_multiply(attrs, data):
    """TVM's ``q_multiply_shift`` (see :func:`kiln.topi.array_more.fixed_point_multiply`)."""
    left, right = max(attrs.shift, 0), 31 + max(-attrs.shift, 0)
    wide = (data.astype("int64") << left) * np.int64(attrs.multiplier) + np.int64(1 << (right - 1))
    return (wide >> right).astype(data.dtype)


@register("nn.fifo_buffer")
def fifo_buffer(attrs, data, buffer):
    """The last ``buffer.shape[axis]`` elements of ``buffer`` then ``data``."""
    joined = np.concatenate([buffer, data], axis=attrs.axis)
    return np.ascontiguousarray(np.take(joined, np.arange(data.shape[attrs.axis], joined.shape[attrs.axis]),
                                        axis=attrs.axis))


@register("vision.multibox_prior")
def multibox_prior(attrs, data):
    """SSD prior boxes (TVM's ``multibox_prior``)."""
    _, _, h, w = data.shape
    f = np.float32
    step_h = attrs.steps[0] if attrs.steps[0] > 0 else 1.0 / h
    step_w = attrs.steps[1] if attrs.steps[1] > 0 else 1.0 / w
    boxes = []
    for i in range(h):
        cy = (f(i) + f(attrs.offsets[0])) * f(step_h)
        for j in range(w):
            cx = (f(j) + f(attrs.offsets[1])) * f(step_w)
            for k in range(len(attrs.sizes) + len(attrs.ratios) - 1):
                if k < len(attrs.sizes):
                    hw, hh = attrs.sizes[k] * h / w / 2.0, attrs.sizes[k] / 2.0
                else:
                    r = math.sqrt(attrs.ratios[k - len(attrs.sizes) + 1])
                    hw, hh = attrs.sizes[0] * h / w * r / 2.0, attrs.sizes[0] / r / 2.0
                boxes.append([cx - f(hw), cy - f(hh), cx + f(hw), cy + f(hh)])
    out = np.array(boxes, "float32").reshape(1, -1, 4)
    return np.clip(out, 0, 1) if attrs.clip else out


@register("nn.sparse_dense")
def sparse_dense(attrs, dense, data, indices, indptr):
    """``dense @ W.T`` (or ``W @ dense.T``) of the CSR or BSR matrix ``W``."""
    if data.ndim == 3:
        w = bsr_to_dense(data, indices, indptr, dense.shape[1])
        out = w @ dense.T if attrs.sparse_lhs else dense @ w.T
        return out.astype(dense.dtype)
    rows = indptr.shape[0] - 1
    w = np.zeros((rows, dense.shape[1]), dense.dtype)
    for r in range(rows):
        for k in range(int(indptr[r]), int(indptr[r + 1])):
            w[r, int(indices[k])] += data[k]
    out = w @ dense.T if attrs.sparse_lhs else dense @ w.T
    return out.astype(dense.dtype)


@register("debug")
def debug(attrs, data):
    """``data``, after calling ``attrs.debug_func(data)`` when there is one."""
    if attrs.debug_func is not None:
        attrs.debug_func(data)
    return data


@register("fixed_point_multiply_per_axis")
def fixed_point_multiply_per_axis(attrs, data, multiplier, shift):
    """:func:`fixed_point_multiply` with per-axis multipliers and shifts."""
    shape = [1] * data.ndim
    for k, a in enumerate(attrs.axes):
        shape[a % data.ndim] = multiplier.shape[k]
    m = multiplier.astype("int64").reshape(shape)
    s = shift.astype("int64").reshape(shape)
    left, right = np.maximum(s, 0), np.maximum(-s, 0) + 31
    wide = (data.astype("int64") << left) * m + (np.int64(1) << (right - 1))
    return (wide >> right).astype(data.dtype)


@register("nn.sparse_add")
def sparse_add(attrs, dense, data, indices, indptr):
    """``dense`` plus the CSR matrix."""
    out = np.array(dense)
    for r in range(dense.shape[0]):
        for k in range(int(indptr[r]), int(indptr[r + 1])):
            out[r, int(indices[k])] += data[k]
    return out


@register("sparse_fill_empty_rows")
def sparse_fill_empty_rows(attrs, indices, values, dense_shape, default_value):
    """The entries in row order with one ``(r, 0, ...)`` entry of the default value per empty row ``r``."""
    rows = int(dense_shape[0])
    present = np.zeros(rows, bool)
    present[indices[:, 0].astype("int64")] = True
    empty = np.flatnonzero(~present)
    filler = np.zeros((len(empty), indices.shape[1]), indices.dtype)
    filler[:, 0] = empty
    all_indices = np.concatenate([indices, filler])
    all_values = np.concatenate([values, np.full(len(empty), default_value[0], values.dtype)])
    order = np.argsort(all_indices[:, 0], kind="stable")  # the entries keep their order within a row
    return all_indices[order], all_values[order], ~present
