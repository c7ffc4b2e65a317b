"""``image.affine_grid``, ``image.grid_sample`` and ``vision.yolo_reorg`` in numpy (the formulas of
:mod:`kiln.topi.image.grid`)."""

import numpy as np

from .common import register


@register("image.affine_grid")
def affine_grid(attrs, theta):
    """``theta`` applied to the ``[-1, 1]`` coordinates of the target grid."""
    h, w = attrs.target_shape
    dtype = theta.dtype

    def coords(size):
        return np.full(1, -1.0, dtype) if size == 1 else dtype.type(-1.0) + np.arange(size).astype(dtype) * dtype.type(
            2.0 / (size - 1))

    ys, xs = coords(h)[:, None], coords(w)[None, :]
    return np.stack([theta[:, r, 0, None, None] * xs + theta[:, r, 1, None, None] * ys + theta[:, r, 2, None, None]
                     for r in range(2)], axis=1).astype(dtype)


def _unnormalize(g, size, align_corners):
    f = g.dtype.type
    if align_corners:
        return (g + f(1)) * f((size - 1) / 2.0)
    return ((g + f(1)) * f(size) - f(1)) * f(0.5)


def _reflect(x, size, align_corners):
    f = x.dtype.type
    lo, span = (0.0, 2.0 * (size - 1)) if align_corners else (-0.5, 2.0 * size)
    if span == 0:
        return np.zeros_like(x)
    half = span / 2
    d = np.abs(x - f(lo))
    flips = np.floor(d / f(half))
    extra = d - flips * f(half)
    out = np.where(flips.astype("int64") % 2 == 0, extra + f(lo), f(half + lo) - extra)
    return np.clip(out, f(0), f(size - 1))


@register("image.grid_sample")
def grid_sample(attrs, data, grid):
    """Bilinear or nearest samples of ``data`` at the grid's positions."""
    n, c, h, w = data.shape
    px = _unnormalize(grid[:, 0], w, attrs.align_corners)
    py = _unnormalize(grid[:, 1], h, attrs.align_corners)
    if attrs.padding_mode == "border":
        px, py = np.clip(px, 0, w - 1), np.clip(py, 0, h - 1)
    elif attrs.padding_mode == "reflection":
        px, py = _reflect(px, w, attrs.align_corners), _reflect(py, h, attrs.align_corners)
    batch = np.arange(n)[:, None, None]

    def pixel(yi, xi):
        inside = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
        values = data[batch, :, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]  # (n, gh, gw, c)
        return np.where(inside[..., None], values, data.dtype.type(0)).transpose(0, 3, 1, 2)

    if attrs.method == "nearest":
        return pixel(np.rint(py).astype("int64"), np.rint(px).astype("int64")).astype(data.dtype)
    y0f, x0f = np.floor(py), np.floor(px)
    y0, x0 = y0f.astype("int64"), x0f.astype("int64")
    ty, tx = (py - y0f)[:, None], (px - x0f)[:, None]
    one = data.dtype.type(1)
    out = (pixel(y0, x0) * (one - ty) * (one - tx) + pixel(y0, x0 + 1) * (one - ty) * tx
           + pixel(y0 + 1, x0) * ty * (one - tx) + pixel(y0 + 1, x0 + 1) * ty * tx)
    return out.astype(data.dtype)


@register("vision.yolo_reorg")
def yolo_reorg(attrs, data):
    """Darknet's ``reorg`` (TVM's ``reorg_python``)."""
    n, c, h, w = data.shape
    s = attrs.stride
    out_c = c // (s * s)
    flat = data.reshape(-1)
    b, k, j, i = np.meshgrid(np.arange(n), np.arange(c), np.arange(h), np.arange(w), indexing="ij")
    offset = k // out_c
    w2, h2 = i * s + offset % s, j * s + offset // s
    out = flat[w2 + w * s * (h2 + h * s * (k % out_c + out_c * b))]
    return np.ascontiguousarray(out.reshape(n, c * s * s, h // s, w // s))
