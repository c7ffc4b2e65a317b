"""``affine_grid``, ``grid_sample`` (TVM's ``topi.image``) and darknet's ``reorg`` (``topi.vision.reorg``).

``grid_sample`` (2-D or 3-D) maps a normalized coordinate ``g`` in ``[-1, 1]`` to the pixel
``(g + 1) * (size - 1) / 2`` (``align_corners``) or ``((g + 1) * size - 1) / 2``; ``border`` clamps it into the
image, ``reflection`` reflects it at the image's edges (at the pixel centres with ``align_corners``, else at the
borders, then clamps); with ``zeros`` each neighbour outside the image reads 0.
"""

import itertools

from ...te.operation import compute
from ...tir import intrin as _intrin
from ...tir import op as _op
from .. import tag as _tag
from ..transform import reshape
from ..utils import get_const_tuple
from .resize import _lets

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


def _cubic_weights(t):
    """Keys' cubic weights for ``a = -0.75`` (PyTorch's) of the taps at offsets -1, 0, 1, 2."""
    dtype = t.dtype

    def c(v):
        return _op.const(v, dtype)

    a = -0.75

    def near(f):  # a tap at distance f <= 1
        return ((c(a + 2) * f - c(a + 3)) * f) * f + c(1.0)

    def far(f):  # a tap at distance 1 < f < 2
        return ((c(a) * f - c(5 * a)) * f + c(8 * a)) * f - c(4 * a)

    return [far(t + c(1.0)), near(t), near(c(1.0) - t), far(c(2.0) - t)]


def grid_sample(data, grid, method="bilinear", padding_mode="zeros", align_corners=True, layout="NCHW"):
    """Sample ``data`` (NCHW or NCDHW) at the normalized positions ``grid`` (``(N, 2, H', W')`` holding x, y or
    ``(N, 3, D', H', W')`` holding x, y, z): ``nearest``, ``bilinear`` (trilinear in 3-D) or, in 2-D, ``bicubic``
    (Keys' weights, ``a = -0.75``; the padding mode applies to its tap indices)."""
    shape = get_const_tuple(data.shape)
    n, c, sizes = shape[0], shape[1], shape[2:]
    k = len(sizes)
    gshape = get_const_tuple(grid.shape)[2:]
    dtype = data.dtype

    def position(b, out):
        pos = []
        for j, size in enumerate(sizes):  # spatial axis j (D or H first) reads grid channel k - 1 - j
            p = _unnormalize(grid(b, k - 1 - j, *out), size, align_corners)
            if method != "bicubic" and padding_mode == "border":
                p = _op.minimum(_op.maximum(p, _op.const(0.0, dtype)), _op.const(float(size - 1), dtype))
            elif method != "bicubic" and padding_mode == "reflection":
                p = _reflect(p, size, align_corners)
            pos.append(p)
        return pos

    def pixel(b, ch, index):
        inside = _op.all(*(_op.logical_and(_op.greater_equal(i, 0), _op.less(i, size))
                           for i, size in zip(index, sizes, strict=True)))
        clamped = [_op.minimum(_op.maximum(i, _op.const(0, "int32")), _op.const(size - 1, "int32"))
                   for i, size in zip(index, sizes, strict=True)]
        return _op.select(inside, data(b, ch, *clamped), _op.const(0.0, dtype))

    def tap(index, size):
        """A bicubic tap index moved into the image by the padding mode."""
        if padding_mode == "border":
            return _op.minimum(_op.maximum(index, _op.const(0, "int32")), _op.const(size - 1, "int32"))
        if padding_mode == "reflection":
            return _op.cast(_reflect(_op.cast(index, dtype), size, align_corners), "int32")
        return index

    def fcompute(b, ch, *out):
        # the positions (and their floors) are let-bound: every tap reads them
        return _lets(position(b, out), "pos", lambda pos: sample(b, ch, pos))

    def sample(b, ch, pos):
        if method == "nearest":  # ties to even (nearbyint), as TVM's compute
            return pixel(b, ch, [_op.cast(_intrin.nearbyint(p), "int32") for p in pos])
        return _lets([_intrin.floor(p) for p in pos], "base", lambda base_f: blend(b, ch, pos, base_f))

    def blend(b, ch, pos, base_f):
        frac = [p - f for p, f in zip(pos, base_f, strict=True)]
        base = [_op.cast(f, "int32") for f in base_f]
        one = _op.const(1.0, dtype)
        if method == "bilinear":
            out_value = None
            for corner in itertools.product((0, 1), repeat=k):
                weight = None
                for cbit, t in zip(corner, frac, strict=True):
                    w = t if cbit else one - t
                    weight = w if weight is None else weight * w
                term = pixel(b, ch, [i + cbit for i, cbit in zip(base, corner, strict=True)]) * weight
                out_value = term if out_value is None else out_value + term
            return out_value
        wy, wx = _cubic_weights(frac[0]), _cubic_weights(frac[1])
        rows = [tap(base[0] + (r - 1), sizes[0]) for r in range(4)]
        cols = [tap(base[1] + (q - 1), sizes[1]) for q in range(4)]
        out_value = None
        for r in range(4):
            line = None
            for q in range(4):
                term = pixel(b, ch, [rows[r], cols[q]]) * wx[q]
                line = term if line is None else line + term
            out_value = line * wy[r] if out_value is None else out_value + line * wy[r]
        return out_value

    del layout  # NCHW or NCDHW, told apart by the rank
    return compute((n, c) + gshape, fcompute, name="T_grid_sample", tag=_tag.INJECTIVE)


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
