"""Numpy references of the Winograd and GEMM convolutions (:mod:`kiln.topi.nn.conv_winograd`,
:mod:`kiln.topi.nn.conv_gemm`): the same algorithms written with numpy's ``tensordot`` and sliding windows, so the
compiled computes are checked against an independent statement of them, and both against the direct convolution.
"""

import itertools

import numpy as np

from ..nn.conv_gemm import gemm_transformed_shape, interleaved_8bit
from ..nn.winograd import winograd_matrices

__all__ = ["winograd_weight_transform_python", "winograd_conv_python", "conv2d_winograd_weight_transform_python",
           "conv3d_winograd_weight_transform_python", "conv2d_winograd_nchw_python",
           "conv2d_gemm_weight_transform_python", "conv2d_gemm_nhwc_python"]


def _work(dtype):
    return np.float32 if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def winograd_weight_transform_python(kernel, tile_size, transformed):
    """``U[alpha_t..., k_direct..., co, ci]`` of a ``(CO, CI, *K)`` kernel: ``G`` applied along each transformed
    axis (float16 computes in float32 and rounds once)."""
    work = _work(kernel.dtype)
    k = kernel.astype(work)
    nd = k.ndim - 2
    t_axes = [j for j in range(nd) if transformed[j]]
    d_axes = [j for j in range(nd) if not transformed[j]]
    _, _, g_mat = winograd_matrices(tile_size, kernel.shape[2 + t_axes[0]])
    g_mat = g_mat.astype(work)
    # the alpha axes go in front, last transformed axis first so they end up in spatial order
    for done, j in enumerate(reversed(t_axes)):
        k = np.tensordot(g_mat, k, axes=([1], [done + 2 + j]))
    nt = len(t_axes)  # k is now (alpha..., co, ci, k_direct...)
    order = list(range(nt)) + [nt + 2 + i for i in range(len(d_axes))] + [nt, nt + 1]
    return np.transpose(k, order).astype(kernel.dtype)


def conv2d_winograd_weight_transform_python(kernel, tile_size):
    """The ``(alpha, alpha, CO, CI)`` Winograd transform of an OIHW ``kernel``."""
    return winograd_weight_transform_python(kernel, tile_size, (True, True))


def conv3d_winograd_weight_transform_python(kernel, tile_size):
    """The Winograd transform of an OIDHW ``kernel``: depth too when it has 3..7 taps."""
    return winograd_weight_transform_python(kernel, tile_size, (2 < kernel.shape[2] < 8, True, True))


def winograd_conv_python(data, packed, tile_size, ksize, transformed, padding, out_dtype=None):
    """Winograd convolution of ``(N, CI, *S)`` data with a transformed weight (strides and dilations 1).

    Parameters
    ----------
    data : numpy.ndarray
    packed : numpy.ndarray
        ``(alpha,) * t + (k_direct...) + (CO, CI)``.
    tile_size : int
    ksize : sequence of int
        The original kernel's spatial sizes.
    transformed : sequence of bool
    padding : sequence of int
        Before on each spatial axis, then after.
    out_dtype : str, optional

    Returns
    -------
    out : numpy.ndarray
        ``(N, CO, *O)``.
    """
    out_dtype = np.dtype(out_dtype or data.dtype)
    work = _work(out_dtype)
    nd, m = data.ndim - 2, tile_size
    t_axes = [j for j in range(nd) if transformed[j]]
    r = ksize[t_axes[0]]
    alpha = m + r - 1
    a_mat, b_mat, _ = (x.astype(work) for x in winograd_matrices(m, r))
    space = data.shape[2:]
    out = [space[j] + padding[j] + padding[nd + j] - ksize[j] + 1 for j in range(nd)]
    tiles = {j: -(-out[j] // m) for j in t_axes}
    pads = [(0, 0), (0, 0)]
    for j in range(nd):
        extra = max(0, (tiles[j] - 1) * m + alpha - (space[j] + padding[j] + padding[nd + j])) if j in tiles else 0
        pads.append((padding[j], padding[nd + j] + extra))
    v = np.pad(data.astype(work), pads)
    for count, j in enumerate(t_axes):  # each transform puts its eps axis in front
        axis = count + 2 + j
        windows = np.lib.stride_tricks.sliding_window_view(v, alpha, axis=axis)
        windows = np.take(windows, np.arange(tiles[j]) * m, axis=axis)
        v = np.moveaxis(np.tensordot(windows, b_mat, axes=([-1], [0])), -1, count)
    nt = len(t_axes)
    eps_shape = (alpha,) * nt
    v = v.reshape((-1,) + v.shape[nt:])  # (E, n, ci, *spatial)
    u = packed.astype(work).reshape((-1,) + packed.shape[nt:])  # (E, *k_direct, co, ci)
    d_axes = [j for j in range(nd) if j not in tiles]
    sp_out = [tiles[j] if j in tiles else out[j] for j in range(nd)]
    gemm = np.zeros((v.shape[0], data.shape[0], u.shape[-2], *sp_out), work)
    for offsets in itertools.product(*[range(ksize[j]) for j in d_axes]):
        window = [slice(None)] * 3 + [slice(None)] * nd
        for j, off in zip(d_axes, offsets, strict=True):
            window[3 + j] = slice(off, off + out[j])
        gemm += np.einsum("enc...,eoc->eno...", v[tuple(window)], u[(slice(None), *offsets)])
    y = gemm.reshape(eps_shape + gemm.shape[1:])
    for _ in t_axes:  # inverse transforms: each consumes the leading eps axis and appends its v axis
        y = np.tensordot(y, a_mat, axes=([0], [0]))
    # y: (n, co, *sp_out, v_t...): each tile axis merges with its v axis (the next v axis is then at 2 + nd)
    for j in t_axes:
        y = np.moveaxis(y, 2 + nd, 3 + j)
        y = y.reshape(y.shape[:2 + j] + (tiles[j] * m,) + y.shape[4 + j:])
    crop = (slice(None), slice(None)) + tuple(slice(0, out[j]) for j in range(nd))
    return y[crop].astype(out_dtype)


def conv2d_winograd_nchw_python(data, packed, tile_size, padding, kernel_size=None, out_dtype=None):
    """2-D Winograd convolution of NCHW ``data`` with a ``(alpha, alpha, CO, CI)`` weight; ``padding`` is
    ``(top, left, bottom, right)`` or ``(h, w)``."""
    padding = tuple(padding) * (2 if len(padding) == 2 else 1)
    k = kernel_size or (packed.shape[0] - tile_size + 1,) * 2
    return winograd_conv_python(data, packed, tile_size, k, (True, True), padding, out_dtype)


def conv2d_gemm_weight_transform_python(kernel, tile_n, tile_k):
    """The tiled weight of an HWIO ``kernel`` (:mod:`kiln.topi.nn.conv_gemm`)."""
    kh, kw, ic, oc = kernel.shape
    flat = kernel.reshape(kh * kw * ic, oc)
    shape = gemm_transformed_shape(kernel.shape, tile_n, tile_k, kernel.dtype)
    rows, cols = shape[1] * tile_k, shape[0] * tile_n
    padded = np.zeros((rows, cols), kernel.dtype)
    padded[:flat.shape[0], :oc] = flat
    tiles = padded.reshape(shape[1], tile_k, shape[0], tile_n)  # (y, z, x, w): row y * tile_k + z, col x * tile_n + w
    order = (2, 0, 3, 1) if interleaved_8bit(kernel.dtype) else (2, 0, 1, 3)
    return np.ascontiguousarray(tiles.transpose(order))


def conv2d_gemm_nhwc_python(data, transformed, kernel_size, channels, strides=1, padding=0, dilation=1,
                            out_dtype=None):
    """Convolution of NHWC ``data`` with a tiled weight, computed as im2col times the untiled ``K x N`` matrix."""
    out_dtype = np.dtype(out_dtype or data.dtype)
    work = _work(out_dtype)
    n, h, w, ic = data.shape
    kh, kw = kernel_size
    sh, sw = (strides,) * 2 if isinstance(strides, int) else strides
    dh, dw = (dilation,) * 2 if isinstance(dilation, int) else dilation
    pad = (padding,) * 4 if isinstance(padding, int) else tuple(padding) * (2 if len(padding) == 2 else 1)
    top, left, bottom, right = pad
    if interleaved_8bit(transformed.dtype):
        nt, kt, tile_n, tile_k = transformed.shape
        matrix = transformed.transpose(1, 3, 0, 2).reshape(kt * tile_k, nt * tile_n)
    else:
        nt, kt, tile_k, tile_n = transformed.shape
        matrix = transformed.transpose(1, 2, 0, 3).reshape(kt * tile_k, nt * tile_n)
    matrix = matrix[:kh * kw * ic, :channels].astype(work)
    x = np.pad(data.astype(work), [(0, 0), (top, bottom), (left, right), (0, 0)])
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (w + left + right - dw * (kw - 1) - 1) // sw + 1
    cols = np.empty((n, oh, ow, kh, kw, ic), work)
    for y, xx in itertools.product(range(kh), range(kw)):
        cols[:, :, :, y, xx] = x[:, y * dh:y * dh + (oh - 1) * sh + 1:sh, xx * dw:xx * dw + (ow - 1) * sw + 1:sw]
    out = cols.reshape(n, oh, ow, -1) @ matrix
    return out.astype(out_dtype)
