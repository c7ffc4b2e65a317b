"""``affine_grid``, ``grid_sample`` (TVM's ``topi.image``) and darknet's ``reorg`` (``topi.vision.reorg``).

``grid_sample`` maps a normalized coordinate ``g`` in ``[-1, 1]`` to the pixel ``(g + 1) * (size - 1) / 2``
(``align_corners``) or ``((g + 1) * size - 1) / 2``; ``border`` clamps it into the image, ``reflection`` reflects it
at the image's edges (at the pixel centres with ``align_corners``, else at the borders, then clamps); with ``zeros``
each neighbour outside the image reads 0.
"""

from ...te.operation import compute
from ...tir import intrin as _intrin
from ...tir import op as _op
from .. import tag as _tag
from ..transform import reshape
from ..utils import get_const_tuple

__all__ = ["affine_grid", "grid_sample", "reorg"]


def affine_grid(theta, target_shape):
    """The grid ``(N, 2, H, W)`` of ``theta`` ``(N, 2, 3)`` applied to ``[-1, 1]`` coordinates (corners aligned)."""
    n = get_const_tuple(theta.shape)[0]
    h, w = target_shape
    dtype = theta.dtype

    def coord(i, size):
        if size == 1:
            return _op.const(-1.0, dtype)
        return _op.const(-1.0, dtype) + _op.cast(i, dtype) * _op.const(2.0 / (size - 1), dtype)

    def fcompute(b, r, y, x):
        return theta(b, r, 0) * coord(x, w) + theta(b, r, 1) * coord(y, h) + theta(b, r, 2)

    return compute((n, 2, h, w), fcompute, name="T_affine_grid", tag=_tag.INJECTIVE)


def _unnormalize(g, size, align_corners):
    dtype = g.dtype
    one = _op.const(1.0, dtype)
    if align_corners:
        return (g + one) * _op.const((size - 1) / 2.0, dtype)
    return ((g + one) * _op.const(float(size), dtype) - one) * _op.const(0.5, dtype)


def _reflect(x, size, align_corners):
    """Reflect ``x`` into the image (TVM's ``_reflect_coordinates``), then clamp."""
    dtype = x.dtype
    if align_corners:
        lo, span = 0.0, 2.0 * (size - 1)
    else:
        lo, span = -0.5, 2.0 * size
    if span == 0:
        return _op.const(0.0, dtype)
    half = span / 2
    d = _op.abs(x - _op.const(lo, dtype))
    flips = _intrin.floor(d / _op.const(half, dtype))
    extra = d - flips * _op.const(half, dtype)
    even = _op.equal(_op.floormod(_op.cast(flips, "int32"), 2), 0)
    out = _op.select(even, extra + _op.const(lo, dtype), _op.const(half + lo, dtype) - extra)
    return _op.minimum(_op.maximum(out, _op.const(0.0, dtype)), _op.const(float(size - 1), dtype))


def grid_sample(data, grid, method="bilinear", padding_mode="zeros", align_corners=True):
    """Sample NCHW ``data`` at the normalized positions ``grid`` ``(N, 2, H', W')`` (x first)."""
    n, c, h, w = get_const_tuple(data.shape)
    gh, gw = get_const_tuple(grid.shape)[2:]
    dtype = data.dtype

    def position(b, y, x):
        px = _unnormalize(grid(b, 0, y, x), w, align_corners)
        py = _unnormalize(grid(b, 1, y, x), h, align_corners)
        if padding_mode == "border":
            px = _op.minimum(_op.maximum(px, _op.const(0.0, dtype)), _op.const(float(w - 1), dtype))
            py = _op.minimum(_op.maximum(py, _op.const(0.0, dtype)), _op.const(float(h - 1), dtype))
        elif padding_mode == "reflection":
            px, py = _reflect(px, w, align_corners), _reflect(py, h, align_corners)
        return py, px

    def pixel(b, ch, yi, xi):
        inside = _op.all(_op.greater_equal(yi, 0), _op.less(yi, h), _op.greater_equal(xi, 0), _op.less(xi, w))
        yc = _op.minimum(_op.maximum(yi, _op.const(0, "int32")), _op.const(h - 1, "int32"))
        xc = _op.minimum(_op.maximum(xi, _op.const(0, "int32")), _op.const(w - 1, "int32"))
        return _op.select(inside, data(b, ch, yc, xc), _op.const(0.0, dtype))

    def fcompute(b, ch, y, x):
        py, px = position(b, y, x)
        if method == "nearest":  # ties to even (nearbyint), as TVM's round and ONNX do
            return pixel(b, ch, _op.cast(_intrin.nearbyint(py), "int32"), _op.cast(_intrin.nearbyint(px), "int32"))
        y0f, x0f = _intrin.floor(py), _intrin.floor(px)
        y0, x0 = _op.cast(y0f, "int32"), _op.cast(x0f, "int32")
        ty, tx = py - y0f, px - x0f
        one = _op.const(1.0, dtype)
        return (pixel(b, ch, y0, x0) * (one - ty) * (one - tx) + pixel(b, ch, y0, x0 + 1) * (one - ty) * tx
                + pixel(b, ch, y0 + 1, x0) * ty * (one - tx) + pixel(b, ch, y0 + 1, x0 + 1) * ty * tx)

    return compute((n, c, gh, gw), fcompute, name="T_grid_sample", tag=_tag.INJECTIVE)


def reorg(data, stride):
    """Darknet's ``reorg`` (TVM's ``topi.vision.reorg``): output element ``(b, k, j, i)`` of the input's shape
    reads the flat input element ``w2 + W * s * (h2 + H * s * (k % C' + C' * b))`` with ``C' = C / s**2``,
    ``w2 = i * s + (k / C') % s``, ``h2 = j * s + (k / C') / s``; the result is reshaped to
    ``(N, C * s * s, H / s, W / s)``."""
    n, c, h, w = get_const_tuple(data.shape)
    s = stride
    out_c = c // (s * s)
    flat = reshape(data, (n * c * h * w,))

    def fcompute(b, k, j, i):
        offset = k // out_c
        w2 = i * s + offset % s
        h2 = j * s + offset // s
        return flat(w2 + w * s * (h2 + h * s * (k % out_c + out_c * b)))

    out = compute((n, c, h, w), fcompute, name="T_reorg", tag=_tag.INJECTIVE)
    return reshape(out, (n, c * s * s, h // s, w // s))
