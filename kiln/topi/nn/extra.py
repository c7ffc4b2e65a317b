"""More ``relay.nn`` computes (TVM's ``topi.nn``): ``prelu depth_to_space space_to_depth l2_normalize
instance_norm group_norm mirror_pad``.

``instance_norm`` and ``group_norm`` share :func:`normalize`: mean and variance over a set of axes of a (reshaped)
tensor in two reductions (in float32 for float16), then ``(x - mean) / sqrt(var + eps) * gamma + beta`` per
channel. ``mirror_pad`` reflects the index across the edge: ``SYMMETRIC`` repeats the edge element, ``REFLECT``
does not.
"""

import math

from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import intrin as _intrin
from ...tir import op as _op
from .. import tag as _tag
from ..transform import reshape
from ..utils import get_const_tuple, normalize_axis

__all__ = ["prelu", "depth_to_space", "space_to_depth", "l2_normalize", "normalize", "instance_norm", "group_norm",
           "mirror_pad"]


def prelu(x, slope, axis=1):
    """``x`` where positive, ``slope[c] * x`` elsewhere, ``c`` the index along ``axis``."""
    axis = normalize_axis(axis, len(x.shape), "prelu axis")

    def fcompute(*i):
        v = x(*i)
        return _op.select(_op.greater(v, _op.const(0, v.dtype)), v, _op.multiply(v, slope(i[axis])))

    return compute(x.shape, fcompute, name="T_prelu", tag=_tag.BROADCAST)


def _axes(layout):
    return layout.index("C"), layout.index("H"), layout.index("W")


def depth_to_space(data, block_size, layout="NCHW", mode="DCR"):
    """Move ``block_size`` x ``block_size`` blocks of channels into space (``DCR``: depth-column-row order of the
    channel index, ``CRD``: column-row-depth)."""
    c_axis, h_axis, w_axis = _axes(layout)
    shape = list(get_const_tuple(data.shape))
    b = block_size
    in_c = shape[c_axis]
    out_shape = list(shape)
    out_shape[c_axis], out_shape[h_axis], out_shape[w_axis] = in_c // (b * b), shape[h_axis] * b, shape[w_axis] * b
    out_c = in_c // (b * b)

    def fcompute(*i):
        c, y, x = i[c_axis], i[h_axis], i[w_axis]
        by, bx = y % b, x % b
        channel = (by * b + bx) * out_c + c if mode == "DCR" else c * b * b + by * b + bx
        idx = list(i)
        idx[c_axis], idx[h_axis], idx[w_axis] = channel, y // b, x // b
        return data(*idx)

    return compute(out_shape, fcompute, name="T_depth_to_space", tag=_tag.INJECTIVE)


def space_to_depth(data, block_size, layout="NCHW"):
    """Move ``block_size`` x ``block_size`` spatial blocks into channels (the inverse of ``DCR`` depth_to_space)."""
    c_axis, h_axis, w_axis = _axes(layout)
    shape = list(get_const_tuple(data.shape))
    b = block_size
    in_c = shape[c_axis]
    out_shape = list(shape)
    out_shape[c_axis], out_shape[h_axis], out_shape[w_axis] = in_c * b * b, shape[h_axis] // b, shape[w_axis] // b

    def fcompute(*i):
        c, y, x = i[c_axis], i[h_axis], i[w_axis]
        block, channel = c // in_c, c % in_c
        idx = list(i)
        idx[c_axis], idx[h_axis], idx[w_axis] = channel, y * b + block // b, x * b + block % b
        return data(*idx)

    return compute(out_shape, fcompute, name="T_space_to_depth", tag=_tag.INJECTIVE)


def _work(dtype):
    return "float32" if dtype == "float16" else dtype


def _reduce_over(fvalue, shape, axes, name):
    """``sum`` of ``fvalue(index)`` over ``axes``, keeping them as size 1."""
    out_shape = tuple(1 if a in axes else d for a, d in enumerate(shape))

    def fcompute(*i):
        rk = {a: reduce_axis((0, shape[a]), name=f"k{a}") for a in axes}
        idx = [rk[a].var if a in rk else i[a] for a in range(len(shape))]
        return _te_sum(fvalue(idx), axis=list(rk.values()))

    return compute(out_shape, fcompute, name=name, tag=_tag.COMM_REDUCE)


def _at(tensor, idx, axes):
    return tensor(*[0 if a in axes else x for a, x in enumerate(idx)])


def l2_normalize(data, eps, axis=None):
    """``data / sqrt(max(sum(data**2 over axis), eps))`` (all axes when ``axis`` is None)."""
    shape = get_const_tuple(data.shape)
    axes = sorted(normalize_axis(a, len(shape)) for a in axis) if axis else list(range(len(shape)))
    work = _work(data.dtype)
    sq = _reduce_over(lambda idx: _op.cast(data(*idx), work) * _op.cast(data(*idx), work), shape, axes,
                      "T_l2_normalize_sum")

    def fcompute(*i):
        norm = _intrin.sqrt(_op.maximum(_at(sq, i, axes), _op.const(float(eps), work)))
        return _op.cast(_op.div(_op.cast(data(*i), work), norm), data.dtype)

    return compute(data.shape, fcompute, name="T_l2_normalize", tag=_tag.ELEMWISE)


def normalize(data, axes, epsilon, fscale=None, fshift=None):
    """``(data - mean) / sqrt(var + epsilon)`` over ``axes``, then ``* fscale(i) + fshift(i)`` when given."""
    shape = get_const_tuple(data.shape)
    work = _work(data.dtype)
    count = _op.const(float(math.prod(shape[a] for a in axes)), work)
    total = _reduce_over(lambda idx: _op.cast(data(*idx), work), shape, axes, "T_norm_sum")

    def centered(idx):
        return _op.cast(data(*idx), work) - _at(total, idx, axes) / count

    sq = _reduce_over(lambda idx: centered(idx) * centered(idx), shape, axes, "T_norm_sqsum")
    eps = _op.const(float(epsilon), work)

    def fcompute(*i):
        out = centered(i) / _intrin.sqrt(_at(sq, i, axes) / count + eps)
        if fscale is not None:
            out = out * _op.cast(fscale(i), work)
        if fshift is not None:
            out = out + _op.cast(fshift(i), work)
        return _op.cast(out, data.dtype)

    return compute(data.shape, fcompute, name="T_normalize", tag="norm_output")


def instance_norm(data, gamma, beta, axis=1, epsilon=1e-5, center=True, scale=True):
    """Normalize each instance and channel over the remaining axes (all but 0 and ``axis``)."""
    ndim = len(data.shape)
    axis = normalize_axis(axis, ndim, "instance_norm axis")
    axes = [a for a in range(1, ndim) if a != axis]
    return normalize(data, axes, epsilon, (lambda i: gamma(i[axis])) if scale else None,
                     (lambda i: beta(i[axis])) if center else None)


def group_norm(data, gamma, beta, num_groups, axis=1, epsilon=1e-5, center=True, scale=True):
    """Normalize each instance and group of ``C / num_groups`` channels (along ``axis``) over the group and the
    remaining axes."""
    shape = get_const_tuple(data.shape)
    axis = normalize_axis(axis, len(shape), "group_norm axis")
    grouped_shape = shape[:axis] + (num_groups, shape[axis] // num_groups) + shape[axis + 1:]
    grouped = reshape(data, grouped_shape)
    axes = [a for a in range(1, len(grouped_shape)) if a != axis]
    per = shape[axis] // num_groups

    def channel(i):
        return i[axis] * per + i[axis + 1]

    out = normalize(grouped, axes, epsilon, (lambda i: gamma(channel(i))) if scale else None,
                    (lambda i: beta(channel(i))) if center else None)
    return reshape(out, shape)


def mirror_pad(data, pad_before, pad_after, mode="SYMMETRIC"):
    """Pad by mirroring ``data`` at its edges (``SYMMETRIC`` includes the edge element, ``REFLECT`` does not)."""
    shape = get_const_tuple(data.shape)
    out_shape = tuple(d + b + a for d, b, a in zip(shape, pad_before, pad_after, strict=True))
    shift = 1 if mode == "SYMMETRIC" else 0

    def source(i, n, before):
        p = i - before
        low = _op.subtract(_op.const(-shift, "int32"), p)  # mirrored below 0
        edge = 2 * n - 2 + shift  # a PrimExpr when the size is known only at run time
        high = _op.subtract(_op.const(edge, "int32") if isinstance(edge, int) else edge, p)  # mirrored past n - 1
        return _op.select(_op.less(p, 0), low, _op.select(_op.greater_equal(p, n), high, p))

    def fcompute(*i):
        return data(*[source(x, n, b) for x, n, b in zip(i, shape, pad_before, strict=True)])

    return compute(out_shape, fcompute, name="T_mirror_pad", tag=_tag.INJECTIVE)
