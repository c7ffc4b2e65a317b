"""Sorting-based operators in numpy: ``topk`` and ``argsort``.

Ties keep the lower index first in both directions. For the descending order a stable ascending sort of the
reversed axis, read backwards, gives exactly that (a stable sort of ``-x`` would overflow for the lowest integer).
"""

import numpy as np

from ..op.type_relations import normalize_axis
from .common import register


def stable_order(data, axis, ascending):
    """Indices sorting ``data`` along ``axis``; equal elements keep their original order."""
    if ascending:
        return np.argsort(data, axis=axis, kind="stable")
    n = data.shape[axis]
    backwards = np.argsort(np.flip(data, axis), axis=axis, kind="stable")
    return n - 1 - np.flip(backwards, axis)


@register("topk")
def topk(attrs, data):
    """The ``k`` largest (smallest when ``is_ascend``) elements along ``axis`` and their indices."""
    axis = normalize_axis(attrs.axis, data.ndim)
    order = stable_order(data, axis, attrs.is_ascend)
    k = data.shape[axis] if attrs.k < 1 else min(attrs.k, data.shape[axis])
    indices = np.take(order, np.arange(k), axis=axis)
    values = np.take_along_axis(data, indices, axis=axis)
    indices = indices.astype(attrs.dtype)
    if attrs.ret_type == "both":
        return values, indices
    return values if attrs.ret_type == "values" else indices


@register("argsort")
def argsort(attrs, data):
    """The indices sorting ``data`` along ``axis`` (stable in both directions)."""
    order = stable_order(data, normalize_axis(attrs.axis, data.ndim), attrs.is_ascend)
    return order.astype(attrs.dtype)


@register("sort")
def sort(attrs, data):
    """``data`` sorted along ``axis``."""
    order = stable_order(data, normalize_axis(attrs.axis, data.ndim), attrs.is_ascend)
    return np.take_along_axis(data, order, axis=normalize_axis(attrs.axis, data.ndim))


@register("unique")
def unique(attrs, data):
    """The distinct values with numpy's ``unique``, reordered by first occurrence unless sorted; padded with
    zeros to ``data``'s length."""
    values, first, inverse, counts = np.unique(data, return_index=True, return_inverse=True, return_counts=True)
    if not attrs.sorted:
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values, first, counts, inverse = values[order], first[order], counts[order], rank[inverse]
    n = len(data)

    def padded(a, dtype):
        out = np.zeros(n, dtype)
        out[:len(a)] = a
        return out

    out = (padded(values, data.dtype), padded(first, "int32"), inverse.reshape(-1).astype("int32"),
           np.array([len(values)], "int32"))
    return out + (padded(counts, "int32"),) if attrs.return_counts else out
