"""Kernels of the ``dyn.*`` operators whose result sizes are known only at run time (TVM keeps them beside the static
computes; here they share one module so the static ones stay as they are).

Every dynamic output dimension is a size variable the caller chooses (Relay gives each ``relay.Any`` one; the kernel
binds it from its output buffer, which the VM allocated with the shape the operator's shape function computed). So
a kernel never recomputes its own result shape: it maps each output index to the element it reads. Where a kernel
needs the values that decided the shape (``strided_slice``'s begin and stride, ``pad``'s widths), it reads them from
the argument tensors with the same helper the shape function uses (:func:`slice_ranges_of`), so the two cannot
disagree.
"""

from ..te.operation import compute
from ..tir import expr as E
from ..tir import intrin as _intrin
from ..tir import op as _op
from . import tag as _tag
from .elemwise import cast_expr
from .utils import get_const_tuple

__all__ = ["broadcast_to", "tile", "slice_ranges_of", "strided_slice", "pad", "element"]


def _i64(value):
    if isinstance(value, int):
        return _op.const(value, "int64")
    return value if value.dtype == "int64" else _op.cast(value, "int64")


def element(tensor, k=0):
    """Entry ``k`` of a 0-d or 1-D tensor (a scalar argument may come either way)."""
    return tensor() if len(tensor.shape) == 0 else tensor[k]


def broadcast_to(data, out_shape):
    """``data`` broadcast to ``out_shape`` (numpy's rule, sizes possibly variables): a size-1 axis of ``data`` reads
    index 0, a run-time size reads 0 when it is 1 (the shape function checked the sizes fit)."""
    shape = get_const_tuple(data.shape)
    offset = len(out_shape) - len(shape)

    def fcompute(*i):
        idx = []
        for k, d in enumerate(shape):
            if isinstance(d, int):
                idx.append(_op.const(0, i[offset + k].dtype) if d == 1 else i[offset + k])
            else:
                idx.append(E.Select(d == 1, _op.const(0, i[offset + k].dtype), i[offset + k]))
        return data(*idx)

    return compute(tuple(out_shape), fcompute, name="T_dyn_broadcast_to", tag=_tag.BROADCAST)


def tile(data, out_shape):
    """``data`` repeated to fill ``out_shape`` (numpy's ``tile``; ``out_shape`` is ``data``'s shape times the
    repetitions, the data padded with leading 1s): output index ``i`` reads ``i mod size`` on each axis."""
    shape = get_const_tuple(data.shape)
    offset = len(out_shape) - len(shape)

    def fcompute(*i):
        return data(*[_op.const(0, i[offset + k].dtype) if isinstance(d, int) and d == 1
                      else _op.floormod(i[offset + k], d) for k, d in enumerate(shape)])

    return compute(tuple(out_shape), fcompute, name="T_dyn_tile", tag=_tag.BROADCAST)


def _clamped(x, dim, positive):
    """Python's clamping of a slice bound ``x`` on an axis of size ``dim`` (all int64)."""
    low, high = (_op.const(0, "int64"), dim) if positive else (_op.const(-1, "int64"), dim - 1)
    return E.Select(x < 0, _op.maximum(x + dim, low), _op.minimum(x, high))


def slice_ranges_of(dims, begin, end, strides, slice_mode="end", axes=None) -> list:
    """``(begin, stride, length)`` per axis as int64 expressions, for an axis sizes ``dims`` and the 1-D tensors
    ``begin``, ``end``, ``strides`` (shorter than the rank: the remaining axes are whole; one stride: every axis),
    clamped as Python slices clamp (as the static ``slice_ranges``). ``slice_mode="size"``: ``end`` holds sizes,
    -1 meaning "to the end", and the stride is 1. ``axes``: entry ``k`` slices axis ``axes[k]`` (the others whole)
    instead of axis ``k``."""
    n_begin, n_end, n_strides = (get_const_tuple(t.shape)[0] for t in (begin, end, strides))
    if axes is None:
        entry_of = {k: k for k in range(min(n_begin, len(dims)))}
    else:
        entry_of = {(a + len(dims) if a < 0 else a): k for k, a in enumerate(axes)}
    ranges = []
    for axis, dim in enumerate(dims):
        dim = _i64(dim)
        if axis not in entry_of:  # as the static slice: only the axes ``begin`` names are sliced
            ranges.append((_op.const(0, "int64"), _op.const(1, "int64"), dim))
            continue
        k = entry_of[axis]
        if k < n_strides or n_strides == 1:
            stride = _i64(strides[k if n_strides > 1 else 0])
        else:
            stride = _op.const(1, "int64")
        if slice_mode == "size":
            stride = _op.const(1, "int64")
        positive = stride > 0
        b = _i64(begin[k])
        if slice_mode == "size":
            size = _i64(end[k]) if k < n_end else _op.const(-1, "int64")
            e = E.Select(size < 0, dim, b + size)
        else:
            e = _i64(end[k]) if k < n_end else E.Select(positive, dim, -dim - 1)
        b = E.Select(positive, _clamped(b, dim, True), _clamped(b, dim, False))
        e = E.Select(positive, _clamped(e, dim, True), _clamped(e, dim, False))
        step = E.Select(positive, stride, -stride)
        span = E.Select(positive, e - b, b - e)
        length = _op.maximum(_op.floordiv(span + step - 1, _op.maximum(step, _op.const(1, "int64"))),
                             _op.const(0, "int64"))
        ranges.append((b, stride, length))
    return ranges


def strided_slice(data, begin, end, strides, out_shape, slice_mode="end", axes=None):
    """``data[begin:end:stride]`` per axis (of ``axes``, when given), with ``begin``/``end``/``strides`` 1-D tensors
    read at run time and the result sizes ``out_shape`` (what :func:`slice_ranges_of` gives, computed by the shape
    function)."""
    ranges = slice_ranges_of(data.shape, begin, end, strides, slice_mode, axes)

    def fcompute(*i):
        return data(*[_op.cast(b + _op.cast(x, "int64") * s, x.dtype)
                      for x, (b, s, _) in zip(i, ranges, strict=True)])

    return compute(tuple(out_shape), fcompute, name="T_dyn_strided_slice", tag=_tag.INJECTIVE)


def _reflect(p, n):
    period = _op.maximum(2 * (n - 1), _op.const(1, n.dtype))
    q = _op.floormod(p, period)
    return E.Select(n == 1, _op.const(0, p.dtype), E.Select(q < n, q, period - q))


def pad(data, pad_width, pad_value, out_shape, pad_mode="constant"):
    """``data`` padded by the ``(before, after)`` rows of the ``(ndim, 2)`` tensor ``pad_width`` (read at run time),
    to ``out_shape``; ``constant`` fills with ``pad_value``, ``edge`` repeats the border, ``reflect`` mirrors it,
    ``wrap`` repeats the axis periodically."""
    shape = get_const_tuple(data.shape)
    fill = pad_value if isinstance(pad_value, E.PrimExpr) else _op.const(pad_value)
    fill = cast_expr(fill, data.dtype)

    def fcompute(*i):
        idx, inside = [], []
        for k, n in enumerate(shape):
            p = i[k] - _op.cast(pad_width[k, 0], i[k].dtype)
            n = _op.cast(n, i[k].dtype)
            if pad_mode == "constant":
                idx.append(p)
                inside += [p >= 0, p < n]
            elif pad_mode == "edge":
                idx.append(_op.minimum(_op.maximum(p, _op.const(0, p.dtype)), n - 1))
            elif pad_mode == "wrap":
                idx.append(_op.floormod(p, _op.maximum(n, _op.const(1, n.dtype))))
            else:
                idx.append(_reflect(p, n))
        value = data(*idx)
        return _intrin.if_then_else(_op.all(*inside), value, fill) if inside else value

    return compute(tuple(out_shape), fcompute, name="T_dyn_pad", tag=f"{_tag.INJECTIVE},pad")

