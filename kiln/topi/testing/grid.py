"""``affine_grid_python`` and ``grid_sample_python`` under TVM's names: the numpy implementation of
``image.affine_grid`` and ``image.grid_sample`` that the reference interpreter registers too.

``grid_sample`` reads ``data`` (``NCHW`` or ``NCDHW``) at the normalized positions of ``grid`` (``(N, 2, H', W')``
holding ``x, y``, or ``(N, 3, D', H', W')`` holding ``x, y, z``). A coordinate ``g`` in ``[-1, 1]`` maps to the pixel
``(g + 1) * (size - 1) / 2`` with ``align_corners``, else ``((g + 1) * size - 1) / 2``. ``padding_mode`` ``border``
clamps it into the image, ``reflection`` reflects it at the edges (the outer pixel centres with ``align_corners``,
the image borders without) and then clamps; with ``zeros`` every tap outside the image reads 0. ``nearest`` rounds
half to even (``nearbyint``, as TVM's compute), ``bilinear`` blends the two neighbours per axis (4 pixels in 2-D,
8 in 3-D), ``bicubic`` (2-D only) blends 4 x 4 taps with Keys' weights for ``a = -0.75`` (PyTorch's); for it the
padding mode applies to the tap indices, not to the position (as TVM and PyTorch do).
"""

import itertools

import numpy as np

from ...error import OpAttributeInvalid
from .resize import cubic_weights

__all__ = ["affine_grid_python", "grid_sample_python"]


def affine_grid_python(data, target_shape):
    """The sampling grid ``(N, 2, H, W)`` of the affine matrices ``data`` ``(N, 2, 3)`` applied to the ``[-1, 1]``
    coordinates of an ``H x W`` image (corners aligned; ``-1`` for a single row or column)."""
    dtype = data.dtype

    def coords(size):
        if size == 1:
            return np.full(1, -1.0, dtype)
        return dtype.type(-1.0) + np.arange(size).astype(dtype) * dtype.type(2.0 / (size - 1))

    ys, xs = coords(target_shape[0])[:, None], coords(target_shape[1])[None, :]
    return np.stack([data[:, r, 0, None, None] * xs + data[:, r, 1, None, None] * ys + data[:, r, 2, None, None]
                     for r in range(2)], axis=1).astype(dtype)


def _unnormalize(g, size, align_corners):
    f = g.dtype.type
    if align_corners:
        return (g + f(1)) * f((size - 1) / 2.0)
    return ((g + f(1)) * f(size) - f(1)) * f(0.5)


def _reflect(x, size, align_corners):
    """``x`` reflected into ``[0, size - 1]`` (about the pixel centres with ``align_corners``, else about the image
    borders ``-0.5`` and ``size - 0.5``) and clamped."""
    f = x.dtype.type
    lo, half = (0.0, float(size - 1)) if align_corners else (-0.5, float(size))
    if half == 0:
        return np.zeros_like(x)
    d = np.abs(x - f(lo))
    flips = np.floor(d / f(half))
    extra = d - flips * f(half)
    out = np.where(flips.astype("int64") % 2 == 0, extra + f(lo), f(half + lo) - extra)
    return np.clip(out, f(0), f(size - 1))


def _pad_index(index, size, padding_mode, align_corners, work):
    """Integer tap indices moved into the image by the padding mode (``zeros``: unchanged)."""
    if padding_mode == "border":
        return np.clip(index, 0, size - 1)
    if padding_mode == "reflection":
        return np.trunc(_reflect(index.astype(work), size, align_corners)).astype("int64")
    return index


def grid_sample_python(data, grid, method="bilinear", layout="NCHW", padding_mode="zeros", align_corners=True):
    """Sample ``data`` at the positions of ``grid`` (see the module docstring).

    Parameters
    ----------
    data : numpy.ndarray
        ``NCHW`` or ``NCDHW``.
    grid : numpy.ndarray
        ``(N, 2, H', W')`` or ``(N, 3, D', H', W')``, normalized ``x, y[, z]``.
    method : str
        ``nearest``, ``bilinear`` or (2-D) ``bicubic``.
    layout : str
        ``NCHW`` or ``NCDHW``.
    padding_mode : str
        ``zeros``, ``border`` or ``reflection``.
    align_corners : bool

    Returns
    -------
    numpy.ndarray
        ``(N, C, H', W')`` or ``(N, C, D', H', W')`` of ``data``'s dtype.
    """
    k = data.ndim - 2
    if layout not in ("NCHW", "NCDHW") or len(layout) != data.ndim or grid.ndim != data.ndim or grid.shape[1] != k:
        raise OpAttributeInvalid(f"grid_sample: data {data.shape} ({layout}) and grid {grid.shape} do not fit")
    if method not in ("nearest", "bilinear", "bicubic") or (method == "bicubic" and k != 2):
        raise OpAttributeInvalid(f"grid_sample: method {method!r} is not supported for {k}-D data")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise OpAttributeInvalid(f"grid_sample: padding_mode must be zeros, border or reflection, got {padding_mode!r}")
    work = np.dtype("float32") if data.dtype == np.float16 else data.dtype
    sizes = data.shape[2:]
    # spatial axis j (D or H first) reads grid channel k - 1 - j (the grid holds x first)
    pos = [_unnormalize(grid[:, k - 1 - j].astype(work), sizes[j], align_corners) for j in range(k)]
    if method != "bicubic" and padding_mode == "border":
        pos = [np.clip(p, 0, s - 1) for p, s in zip(pos, sizes, strict=True)]
    elif method != "bicubic" and padding_mode == "reflection":
        pos = [_reflect(p, s, align_corners) for p, s in zip(pos, sizes, strict=True)]
    batch = np.arange(data.shape[0]).reshape((-1,) + (1,) * k)
    x = data.astype(work)

    def pixel(index):
        """``x`` at the integer positions ``index`` (one array per spatial axis), 0 outside: (N, C, ...)."""
        inside = np.all([(i >= 0) & (i < s) for i, s in zip(index, sizes, strict=True)], axis=0)
        clamped = tuple(np.clip(i, 0, s - 1) for i, s in zip(index, sizes, strict=True))
        values = x[(batch, slice(None)) + clamped]  # advanced indices first: (N, ..., C)
        return np.moveaxis(np.where(inside[..., None], values, work.type(0)), -1, 1)

    if method == "nearest":
        out = pixel([np.rint(p).astype("int64") for p in pos])
    elif method == "bilinear":
        base = [np.floor(p) for p in pos]
        frac = [(p - b)[:, None] for p, b in zip(pos, base, strict=True)]
        base = [b.astype("int64") for b in base]
        one = work.type(1)
        out = 0
        for corner in itertools.product((0, 1), repeat=k):
            weight = np.prod([f if c else one - f for c, f in zip(corner, frac, strict=True)], axis=0)
            out = out + pixel([b + c for b, c in zip(base, corner, strict=True)]) * weight
    else:
        base = [np.floor(p) for p in pos]
        weights = [[w[:, None] for w in cubic_weights(p - b, -0.75)] for p, b in zip(pos, base, strict=True)]
        taps = [[_pad_index(b.astype("int64") - 1 + t, s, padding_mode, align_corners, work) for t in range(4)]
                for b, s in zip(base, sizes, strict=True)]
        out = 0
        for r in range(4):
            row = sum(pixel([taps[0][r], taps[1][q]]) * weights[1][q] for q in range(4))
            out = out + row * weights[0][r]
    return np.asarray(out).astype(data.dtype)
