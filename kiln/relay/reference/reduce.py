"""Reductions in numpy: ``sum mean max min prod all any`` and ``argmax argmin``.

The reduced axes come from ``reduce_axes`` (the type relation's helper: ``axis``, ``exclude``). Sums and products
accumulate in the data's dtype (numpy would widen int32 to int64; float16 uses float32; over bool they are numpy's
``any`` and ``all``, kiln's saturating bool arithmetic: :mod:`kiln.tir.dtype_semantics`); integer ``mean``
truncates like TVM's ``sum / count``. ``max``/``min`` start from TVM's ``min_value``/``max_value`` so empty
reductions match.
``argmax``/``argmin`` over several axes return the index into those axes flattened in order, as TVM's
``CommReduceIdx`` does; ties pick the first index unless ``select_last_index``.
"""

import numpy as np

from ..op.type_relations import reduce_axes
from .common import accumulator, as_dtype, highest, is_int, lowest, register, trunc_divide


def _axes(data, attrs):
    return tuple(reduce_axes(data.ndim, attrs.axis, attrs.exclude))


@register("sum")
def reduce_sum(attrs, data):
    """Sum over the reduced axes."""
    total = np.sum(data, axis=_axes(data, attrs), keepdims=attrs.keepdims, dtype=accumulator(data.dtype))
    return as_dtype(total, data.dtype)


@register("prod")
def reduce_prod(attrs, data):
    """Product over the reduced axes."""
    product = np.prod(data, axis=_axes(data, attrs), keepdims=attrs.keepdims, dtype=accumulator(data.dtype))
    return as_dtype(product, data.dtype)


@register("mean")
def reduce_mean(attrs, data):
    """Mean over the reduced axes (truncating division for integers)."""
    axes = _axes(data, attrs)
    count = int(np.prod([data.shape[a] for a in axes], dtype=np.int64))
    if is_int(data.dtype):
        total = np.sum(data, axis=axes, keepdims=attrs.keepdims, dtype=data.dtype)
        return as_dtype(trunc_divide(total, np.asarray(max(count, 1), data.dtype)), data.dtype)
    mean = np.mean(data, axis=axes, keepdims=attrs.keepdims, dtype=accumulator(data.dtype))
    return as_dtype(mean, data.dtype)


@register("all")
def reduce_all(attrs, data):
    """Logical and over the reduced axes (of a bool tensor)."""
    return np.asarray(np.all(data, axis=_axes(data, attrs), keepdims=attrs.keepdims))


@register("any")
def reduce_any(attrs, data):
    """Logical or over the reduced axes (of a bool tensor)."""
    return np.asarray(np.any(data, axis=_axes(data, attrs), keepdims=attrs.keepdims))


@register("max")
def reduce_max(attrs, data):
    """Maximum over the reduced axes."""
    axes = _axes(data, attrs)
    return as_dtype(np.max(data, axis=axes, keepdims=attrs.keepdims, initial=lowest(data.dtype)), data.dtype)


@register("min")
def reduce_min(attrs, data):
    """Minimum over the reduced axes."""
    axes = _axes(data, attrs)
    return as_dtype(np.min(data, axis=axes, keepdims=attrs.keepdims, initial=highest(data.dtype)), data.dtype)


def _arg_reduce(data, attrs, numpy_arg):
    axes = _axes(data, attrs)
    kept = [a for a in range(data.ndim) if a not in axes]
    # move the reduced axes last and flatten them: the index is then the row-major index over those axes
    moved = np.transpose(data, kept + list(axes))
    flat = moved.reshape(moved.shape[: len(kept)] + (-1,)) if axes else moved[..., None]
    if attrs.select_last_index:
        index = flat.shape[-1] - 1 - numpy_arg(flat[..., ::-1], axis=-1)
    else:
        index = numpy_arg(flat, axis=-1)
    index = index.astype("int32")
    if attrs.keepdims:
        index = index.reshape(tuple(1 if a in axes else d for a, d in enumerate(data.shape)))
    return np.asarray(index)


@register("argmax")
def argmax(attrs, data):
    """The int32 index of the maximum over the reduced axes."""
    return _arg_reduce(data, attrs, np.argmax)


@register("argmin")
def argmin(attrs, data):
    """The int32 index of the minimum over the reduced axes."""
    return _arg_reduce(data, attrs, np.argmin)
