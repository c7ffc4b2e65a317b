"""Pooling over any set of spatial axes (TVM's ``pool1d``, ``pool3d`` and ``adaptive_pool``).

:func:`pool` follows :func:`kiln.topi.nn.pooling.pool2d` axis by axis: padding with the dtype's lowest value (max)
or zero (avg), extra cells past the end when ``ceil_mode`` adds an output, and an average divided by the number of
cells inside the data (or the padded data, ``count_include_pad``). :func:`adaptive_pool` splits each axis of
length ``n`` into ``m`` bins ``[floor(i * n / m), ceil((i + 1) * n / m))``; the reduction runs over the largest bin
with the cells past each bin's end masked out.
"""

import math

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import max as _te_max
from ...te.operation import sum as _te_sum
from ...tir import dtype as _dt
from ...tir import op as _op
from ...tir.layout import layout as parse_layout
from .. import tag as _tag
from ..utils import get_const_tuple, known_nonpositive
from .pad import pad
from .pooling import _acc_dtype, _tap_count, ceil_mode_extra, pool_out_size

__all__ = ["pool", "adaptive_pool", "spatial_axes"]


def spatial_axes(layout_name, what):
    """The indices of the spatial axes (``D``, ``H``, ``W``, in that order of appearance) of ``layout_name``."""
    lay = parse_layout(layout_name)
    axes = [k for k, a in enumerate(lay.name) if a in "DHW"]
    if not axes or any(lay.factor_of(lay.name[k]) != 1 for k in axes):
        raise OpAttributeInvalid(f"{what}: Unsupported layout {layout_name} (its spatial axes must not be split)")
    return axes


def _divide(total, count, acc, dtype):
    count = _op.maximum(count, _op.const(1, "int32"))
    if _dt.is_float(acc):
        return _op.cast(_op.div(total, _op.cast(count, acc)), dtype)
    return _op.cast(_op.truncdiv(total, _op.cast(count, acc)), dtype)


def pool(data, kernel, stride, dilation, padding, pool_type, ceil_mode, layout, count_include_pad=False):
    """Max or average pooling over the spatial axes of ``layout``; ``padding`` is before on each spatial axis, then
    after.

    Returns
    -------
    out : te.Tensor
    """
    axes = spatial_axes(layout, "topi.pool")
    nd = len(axes)
    shape = get_const_tuple(data.shape)
    before, after = [0] * len(shape), [0] * len(shape)
    out_shape = list(shape)
    for j, a in enumerate(axes):
        size = shape[a]
        out = pool_out_size(size, kernel[j], stride[j], dilation[j], padding[j], padding[nd + j], ceil_mode)
        if known_nonpositive(out):
            raise OpAttributeInvalid(f"topi.pool: a window of {tuple(kernel)} does not fit the padded input {shape}")
        out_shape[a] = out
        before[a] = padding[j]
        after[a] = padding[nd + j] + ceil_mode_extra(size, out, kernel[j], stride[j], dilation[j], padding[j],
                                                     padding[nd + j])

    def window(i, rk):
        idx = list(i)
        for j, a in enumerate(axes):
            idx[a] = i[a] * stride[j] + rk[j].var * dilation[j]
        return idx

    def reducers():
        return [reduce_axis((0, kernel[j]), name=f"rv{j}") for j in range(nd)]

    if pool_type == "max":
        padded = pad(data, before, after, pad_value=_op.min_value(data.dtype), name="pad_temp") if any(
            before + after) else data

        def fmax(*i):
            rk = reducers()
            return _te_max(padded(*window(i, rk)), axis=rk)

        return compute(out_shape, fmax, name="poolnd_max", tag="poolnd_max")
    acc = _acc_dtype(data.dtype)
    padded = pad(data, before, after, pad_value=0, name="pad_temp") if any(before + after) else data

    def fsum(*i):
        rk = reducers()
        return _te_sum(_op.cast(padded(*window(i, rk)), acc), axis=rk)

    total = compute(out_shape, fsum, name="poolnd_sum", tag="poolnd_sum")

    def average(*i):
        count = _op.const(1, "int32")
        for j, a in enumerate(axes):
            lo, hi = (0, shape[a] + padding[j] + padding[nd + j]) if count_include_pad else (
                padding[j], padding[j] + shape[a])
            count = count * _tap_count(i[a] * stride[j], kernel[j], dilation[j], lo, hi)
        return _divide(total(*i), count, acc, data.dtype)

    return compute(out_shape, average, name="poolnd_avg", tag=_tag.ELEMWISE)


def adaptive_pool(data, output_size, pool_type, layout):
    """Adaptive max or average pooling of the spatial axes of ``layout`` to ``output_size`` (the input size where
    empty)."""
    axes = spatial_axes(layout, "topi.adaptive_pool")
    shape = get_const_tuple(data.shape)
    sizes = [shape[a] for a in axes]
    outs = list(output_size) or sizes
    out_shape = list(shape)
    for j, a in enumerate(axes):
        out_shape[a] = outs[j]
    widths = [max(math.ceil((i + 1) * n / m) - (i * n) // m for i in range(m)) for n, m in zip(sizes, outs,
                                                                                                strict=True)]
    acc = data.dtype if pool_type == "max" else _acc_dtype(data.dtype)

    def bounds(i, j):
        n, m = sizes[j], outs[j]
        start = _op.floordiv(i * n, m)
        end = _op.floordiv((i + 1) * n + m - 1, m)
        return start, end

    def freduce(*i):
        rk = [reduce_axis((0, widths[j]), name=f"rv{j}") for j in range(len(axes))]
        idx, inside = list(i), []
        for j, a in enumerate(axes):
            start, end = bounds(i[a], j)
            idx[a] = _op.minimum(start + rk[j].var, sizes[j] - 1)
            inside.append(_op.less(start + rk[j].var, end))
        value = _op.cast(data(*idx), acc)
        if pool_type == "max":
            return _te_max(_op.select(_op.all(*inside), value, _op.min_value(acc)), axis=rk)
        return _te_sum(_op.select(_op.all(*inside), value, _op.const(0, acc)), axis=rk)

    name = f"adaptive_pool_{pool_type}"
    total = compute(out_shape, freduce, name=name, tag=name)
    if pool_type == "max":
        return total

    def average(*i):
        count = _op.const(1, "int32")
        for j, a in enumerate(axes):
            start, end = bounds(i[a], j)
            count = count * (end - start)
        return _divide(total(*i), count, acc, data.dtype)

    return compute(out_shape, average, name="adaptive_pool_avg_div", tag=_tag.ELEMWISE)
