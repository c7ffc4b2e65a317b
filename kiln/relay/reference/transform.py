"""Shape and data-movement operators in numpy: ``reshape transpose squeeze expand_dims concatenate split take
strided_slice layout_transform shape_of broadcast_to tile repeat reverse gather gather_nd one_hot cumsum cumprod
scatter_elements scatter_nd``.

Shapes come from the helpers the type relations use (``reshape_shape``, ``strided_slice_ranges``,
``split_indices`` ...), so the interpreter and type inference cannot disagree.

``layout_transform`` works for any pair of layouts with the same primal axes: it first brings the tensor to the
primal (logical) form of the source layout -- each primal axis followed by its sub-axis, merged -- then permutes
the primal axes into the destination order, splits the axes the destination layout splits and permutes the pieces
into place.
"""

import itertools

import numpy as np

from ...error import KilnError
from ...tir.layout import layout as parse_layout
from ..op.tensor import reshape_shape, split_indices, squeeze_axes, strided_slice_ranges, transpose_axes
from ..op.type_relations import normalize_axis
from .common import register


@register("reshape")
def reshape(attrs, data):
    """Reshape to ``attrs.newshape`` (TVM's special values resolved by ``reshape_shape``)."""
    return data.reshape(reshape_shape(data.shape, attrs.newshape, attrs.allowzero))


@register("shape_of")
def shape_of(attrs, data):
    """The shape of ``data`` as a 1-D tensor of ``attrs.dtype``."""
    return np.asarray(data.shape, dtype=attrs.dtype)


@register("transpose")
def transpose(attrs, data):
    """Permute axes (reverse them when ``attrs.axes`` is None)."""
    return np.transpose(data, transpose_axes(data.ndim, attrs.axes))


@register("squeeze")
def squeeze(attrs, data):
    """Drop the size-1 axes ``attrs.axis`` (all of them when None)."""
    return np.squeeze(data, axis=tuple(squeeze_axes(data.shape, attrs.axis)))


@register("expand_dims")
def expand_dims(attrs, data):
    """Insert ``num_newaxis`` size-1 axes at ``axis``."""
    axis = attrs.axis if attrs.axis >= 0 else attrs.axis + data.ndim + 1
    return data.reshape(data.shape[:axis] + (1,) * attrs.num_newaxis + data.shape[axis:])


@register("concatenate")
def concatenate(attrs, fields):
    """Join the tuple ``fields`` along ``axis``."""
    return np.concatenate(fields, axis=normalize_axis(attrs.axis, fields[0].ndim))


@register("split")
def split(attrs, data):
    """A tuple of the pieces of ``data`` cut along ``axis`` at ``indices_or_sections``."""
    axis = normalize_axis(attrs.axis, data.ndim)
    points = [0, *split_indices(data.shape[axis], attrs.indices_or_sections), data.shape[axis]]
    pieces = []
    for begin, end in itertools.pairwise(points):
        index = [slice(None)] * data.ndim
        index[axis] = slice(begin, max(begin, end))
        pieces.append(data[tuple(index)])
    return tuple(pieces)


def _take_indices(indices, size, mode):
    """Bring ``indices`` into ``[0, size)`` as TVM's ``take`` does: ``clip`` clamps (negative -> 0), ``wrap`` takes
    the index modulo ``size``, ``fast`` assumes they are in range (checked here, since numpy would wrap negatives)."""
    if mode in ("clip", "wrap") and indices.dtype == np.uint64:  # beyond int64: bring into range first
        indices = np.minimum(indices, max(size - 1, 0)) if mode == "clip" else indices % np.uint64(max(size, 1))
    indices = indices.astype("int64")
    if mode == "clip":
        return np.clip(indices, 0, max(size - 1, 0))
    if mode == "wrap":
        return np.mod(indices, size) if size else indices
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        raise KilnError(f"take(mode='fast'): index out of range [0, {size}): min {indices.min()}, max {indices.max()}")
    return indices


@register("take")
def take(attrs, data, indices):
    """Gather ``data`` along ``axis`` (the flattened data when None) at ``indices``; the first ``batch_dims`` axes
    of ``data`` and ``indices`` are matched one to one."""
    if attrs.axis is None:
        flat = data.reshape(-1)
        return flat[_take_indices(indices, flat.size, attrs.mode)]
    axis = normalize_axis(attrs.axis, data.ndim)
    idx = _take_indices(indices, data.shape[axis], attrs.mode)
    batch_dims = attrs.batch_dims % indices.ndim if indices.ndim and attrs.batch_dims < 0 else attrs.batch_dims
    if batch_dims == 0:
        return np.take(data, idx, axis=axis)
    batch_shape = data.shape[:batch_dims]
    out_shape = data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis + 1 :]
    out = np.empty(out_shape, data.dtype)
    for b in np.ndindex(*batch_shape):
        out[b] = np.take(data[b], idx[b], axis=axis - batch_dims)
    return out


@register("strided_slice")
def strided_slice(attrs, data):
    """``data[begin:end:stride]`` per axis, with the ranges ``strided_slice_ranges`` computes."""
    index = []
    for begin, end, stride in strided_slice_ranges(data.shape, attrs):
        # slice.indices() reports "before the first element" as -1, which numpy would read as the last element
        index.append(slice(begin, end if end >= 0 else None, stride))
    return data[tuple(index)]


def _to_primal(data, lay):
    """``data`` in layout ``lay`` -> an array with one axis per primal axis, in the order of ``lay.primal``: each
    primal axis followed by its sub-axes (outermost first), merged."""
    order, sizes = [], []
    for axis in lay.primal:
        parts = [lay.index_of(axis), *lay.sub_axes(axis)]
        order += parts
        sizes.append(int(np.prod([data.shape[i] for i in parts])))
    return np.transpose(data, order).reshape(sizes)


def _from_primal(primal, lay):
    """The inverse of :func:`_to_primal`: ``primal`` (axes in ``lay.primal`` order) -> layout ``lay``."""
    split_shape, position = [], {}
    for axis, size in zip(lay.primal, primal.shape, strict=True):
        factor = lay.factor_of(axis)
        if size % factor:
            raise KilnError(f"layout {lay.name}: axis {axis} of size {size} is not divisible by {factor}")
        position[lay.index_of(axis)] = len(split_shape)
        split_shape.append(size // factor)
        for sub in lay.sub_axes(axis):
            position[sub] = len(split_shape)
            split_shape.append(lay.axes[sub][1])
    return np.transpose(primal.reshape(split_shape), [position[i] for i in range(lay.ndim)])


def convert_layout(data, src_layout, dst_layout):
    """Move ``data`` from ``src_layout`` to ``dst_layout`` (layout names such as ``"NCHW16c"``); shared by
    ``layout_transform``, convolution and pooling."""
    if src_layout == dst_layout:
        return data
    src, dst = parse_layout(src_layout), parse_layout(dst_layout)
    if sorted(src.primal) != sorted(dst.primal):
        raise KilnError(f"cannot convert layout {src_layout} to {dst_layout}: different primal axes")
    primal = _to_primal(data, src)
    primal = np.transpose(primal, [src.primal.index(axis) for axis in dst.primal])
    return _from_primal(primal, dst)


@register("layout_transform")
def layout_transform(attrs, data):
    """Move ``data`` from ``src_layout`` to ``dst_layout``."""
    return convert_layout(data, attrs.src_layout, attrs.dst_layout)


@register("broadcast_to")
def broadcast_to(attrs, data):
    """``data`` broadcast to ``attrs.shape`` (a read-only view)."""
    return np.broadcast_to(data, attrs.shape)


@register("tile")
def tile(attrs, data):
    """numpy's ``tile`` with ``attrs.reps``."""
    return np.tile(data, attrs.reps)


@register("repeat")
def repeat(attrs, data):
    """Each element repeated ``attrs.repeats`` times along ``attrs.axis``."""
    return np.repeat(data, attrs.repeats, axis=normalize_axis(attrs.axis, data.ndim))


@register("reverse")
def reverse(attrs, data):
    """``data`` reversed along ``attrs.axis``."""
    return np.flip(data, axis=normalize_axis(attrs.axis, data.ndim))


def _checked(indices, size, what):
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        raise KilnError(f"{what}: index out of range [0, {size}): min {indices.min()}, max {indices.max()}")
    return indices.astype("int64")


@register("gather")
def gather(attrs, data, indices):
    """``take_along_axis`` over ``attrs.axis`` (indices must lie in range, as in TVM)."""
    axis = normalize_axis(attrs.axis, data.ndim)
    idx = _checked(indices, data.shape[axis], "gather")
    # indices may be smaller than data off the axis: index the matching leading block of data
    block = data[tuple(slice(0, n) if k != axis else slice(None) for k, n in enumerate(indices.shape))]
    return np.take_along_axis(block, idx, axis=axis)


@register("gather_nd")
def gather_nd(attrs, data, indices):
    """Slices of ``data`` at the index tuples along the first axis of ``indices`` (after ``batch_dims`` batch
    axes shared by both)."""
    m, b = indices.shape[0], attrs.batch_dims
    idx = tuple(_checked(indices[k], data.shape[b + k], "gather_nd") for k in range(m))
    # the batch axes index themselves: position j along batch axis j of indices[1:]
    batch = tuple(np.indices(indices.shape[1:], sparse=True)[:b])
    return data[batch + idx]


@register("one_hot")
def one_hot(attrs, indices, on_value, off_value):
    """``on_value`` where the new ``depth`` axis equals the index, ``off_value`` elsewhere (out-of-range indices
    select nothing)."""
    axis = attrs.axis if attrs.axis >= 0 else attrs.axis + indices.ndim + 1
    hot = np.expand_dims(indices, axis) == np.arange(attrs.depth).reshape((-1,) + (1,) * (indices.ndim - axis))
    dtype = np.dtype(attrs.dtype)
    return np.where(hot, on_value.astype(dtype), off_value.astype(dtype))


def _scan(attrs, data, ufunc):
    dtype = np.dtype(attrs.dtype or data.dtype)
    if attrs.axis is None:
        data, axis = data.reshape(-1), 0
    else:
        axis = normalize_axis(attrs.axis, data.ndim)
    out = ufunc.accumulate(data.astype(dtype), axis=axis, dtype=dtype)
    if attrs.exclusive:
        # shift by one along the axis, starting from the identity (0 for sums, 1 for products)
        first = np.full_like(np.take(out, [0], axis=axis), ufunc.identity)
        out = np.concatenate([first, np.take(out, np.arange(out.shape[axis] - 1), axis=axis)], axis=axis)
    return out


@register("cumsum")
def cumsum(attrs, data):
    """Cumulative sum (see :func:`kiln.relay.cumsum`)."""
    return _scan(attrs, data, np.add)


@register("cumprod")
def cumprod(attrs, data):
    """Cumulative product (see :func:`kiln.relay.cumprod`)."""
    return _scan(attrs, data, np.multiply)


_SCATTER_UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


@register("scatter_elements")
def scatter_elements(attrs, data, indices, updates):
    """``data`` with ``updates`` written (or reduced) at ``indices`` along ``axis``; for ``update`` a later
    duplicate index wins, ``mean`` averages the existing value with every update."""
    axis = normalize_axis(attrs.axis, data.ndim)
    idx = _checked(indices, data.shape[axis], "scatter_elements")
    grid = list(np.indices(indices.shape, sparse=True))
    grid[axis] = idx
    where = tuple(grid)
    out = data.copy()
    if attrs.reduction == "update":
        out[where] = updates
    elif attrs.reduction == "mean":
        total = data.astype("float64")
        count = np.ones(data.shape)
        np.add.at(total, where, updates)
        np.add.at(count, where, 1)
        out = (total / count).astype(data.dtype)
    else:
        _SCATTER_UFUNCS[attrs.reduction].at(out, where, updates)
    return out


@register("scatter_nd")
def scatter_nd(attrs, data, indices, updates):
    """``data`` with the slices at the index tuples (first axis of ``indices``) replaced by ``updates`` or
    combined with them by ``mode``."""
    m = indices.shape[0]
    where = tuple(_checked(indices[k], data.shape[k], "scatter_nd") for k in range(m))
    out = data.copy()
    if attrs.mode == "update":
        out[where] = updates
    else:
        _SCATTER_UFUNCS[attrs.mode].at(out, where, updates)
    return out


@register("argwhere")
def argwhere(attrs, condition):
    """The indices of the non-zero elements, one row each, in row-major order."""
    return np.argwhere(condition).astype(attrs.dtype)
