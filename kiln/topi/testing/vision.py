"""Region and sampling operators in numpy under TVM's names: ``roi_align_nchw_python``, ``roi_align_nhwc_python``,
``roi_pool_nchw_python``, ``reorg_python``, ``deformable_conv2d_nchw_python`` and ``deformable_conv2d_nhwc_python``.
The reference interpreter registers these as ``vision.roi_align``, ``vision.roi_pool``, ``vision.yolo_reorg`` and
``nn.deformable_conv2d``.

Bilinear sampling is TVM's ``bilinear_sample_nchw``: the four pixels around ``(y, x)`` weighted by their distance,
a pixel outside the image contributing nothing. ``roi_align`` clamps each sample into the image first (and gives 0
for a sample more than a pixel outside); ``deformable_conv2d`` gives 0 for a tap outside ``[0, H) x [0, W)``.
"""

import math

import numpy as np

from ...error import OpAttributeInvalid
from .common import get_pad_tuple, round_half_away

__all__ = ["bilinear_python", "roi_align_nchw_python", "roi_align_nhwc_python", "roi_pool_nchw_python",
           "reorg_python", "deformable_conv2d_nchw_python", "deformable_conv2d_nhwc_python"]


def bilinear_python(img, y, x):
    """``img`` ``(C, H, W)`` sampled at the float positions ``y``, ``x`` (arrays of one shape): ``(C, *shape)``,
    neighbours outside the image weighing nothing."""
    h, w = img.shape[1:]
    f = y.dtype.type
    y0f, x0f = np.floor(y), np.floor(x)
    ty, tx = y - y0f, x - x0f
    y0, x0 = y0f.astype("int64"), x0f.astype("int64")
    out = np.zeros(img.shape[:1] + y.shape, img.dtype)
    for dy, wy in ((0, f(1) - ty), (1, ty)):
        for dx, wx in ((0, f(1) - tx), (1, tx)):
            r, c = y0 + dy, x0 + dx
            inside = (r >= 0) & (r < h) & (c >= 0) & (c < w)
            value = img[:, np.clip(r, 0, h - 1), np.clip(c, 0, w - 1)]
            out = out + np.where(inside, wx * wy * value, f(0))
    return out


def _mode(mode):
    if mode in (b"avg", "avg", 0):
        return "avg"
    if mode in (b"max", "max", 1):
        return "max"
    raise OpAttributeInvalid(f"roi_align: mode must be avg or max, got {mode!r}")


def _pair(v):
    return (int(v), int(v)) if isinstance(v, int | np.integer) else tuple(int(s) for s in v)


def roi_align_nchw_python(a_np, rois_np, pooled_size, spatial_scale, sample_ratio, mode=b"avg"):
    """ROI align: each region ``[batch, x1, y1, x2, y2]`` (times ``spatial_scale``, at least 1 x 1) split into
    ``pooled_size`` bins, each the mean (``mode`` ``avg``) or maximum of a grid of bilinear samples:
    ``sample_ratio`` per axis, or ``ceil(region / pooled_size)`` when it is not positive.

    Returns ``(num_roi, C, pooled_h, pooled_w)``.
    """
    ph_n, pw_n = _pair(pooled_size)
    mode = _mode(mode)
    work = np.dtype("float32") if a_np.dtype == np.float16 else a_np.dtype
    f = work.type
    _, channels, h, w = a_np.shape
    out = np.zeros((rois_np.shape[0], channels, ph_n, pw_n), work)
    for i, roi in enumerate(rois_np.astype(work)):
        img = a_np[int(roi[0])].astype(work)
        sw, sh, ew, eh = (v * f(spatial_scale) for v in roi[1:])
        roi_h, roi_w = max(eh - sh, f(1)), max(ew - sw, f(1))
        bin_h, bin_w = roi_h / f(ph_n), roi_w / f(pw_n)
        gh = gw = int(sample_ratio)
        if sample_ratio <= 0:
            gh, gw = int(math.ceil(roi_h / f(ph_n))), int(math.ceil(roi_w / f(pw_n)))
        # sample positions (ph, gh, 1, 1) and (1, 1, pw, gw)
        ys = (sh + np.arange(ph_n, dtype=work)[:, None] * bin_h
              + (np.arange(gh, dtype=work)[None, :] + f(0.5)) * bin_h / f(gh))[:, :, None, None]
        xs = (sw + np.arange(pw_n, dtype=work)[:, None] * bin_w
              + (np.arange(gw, dtype=work)[None, :] + f(0.5)) * bin_w / f(gw))[None, None]
        ys, xs = np.broadcast_arrays(ys, xs)
        outside = (ys < -1) | (ys > h) | (xs < -1) | (xs > w)
        samples = np.where(outside, f(0), bilinear_python(img, np.clip(ys, f(0), f(h - 1)),
                                                          np.clip(xs, f(0), f(w - 1))))
        if mode == "avg":
            out[i] = (samples / f(gh * gw)).sum(axis=(2, 4))
        else:
            out[i] = samples.max(axis=(2, 4))
    return out.astype(a_np.dtype)


def roi_align_nhwc_python(a_np, rois_np, pooled_size, spatial_scale, sample_ratio, mode=b"avg"):
    """:func:`roi_align_nchw_python` of NHWC data: ``(num_roi, pooled_h, pooled_w, C)``."""
    out = roi_align_nchw_python(a_np.transpose(0, 3, 1, 2), rois_np, pooled_size, spatial_scale, sample_ratio, mode)
    return np.ascontiguousarray(out.transpose(0, 2, 3, 1))


def roi_pool_nchw_python(a_np, rois_np, pooled_size, spatial_scale):
    """ROI max pooling: region corners rounded (half away from zero), each of ``pooled_size`` bins the maximum of
    the whole pixels it covers (0 for an empty bin). Returns ``(num_roi, C, pooled_h, pooled_w)``."""
    ph_n, pw_n = _pair(pooled_size)
    f = rois_np.dtype.type
    h, w = a_np.shape[2:]
    out = np.zeros((rois_np.shape[0], a_np.shape[1], ph_n, pw_n), a_np.dtype)
    for i, roi in enumerate(rois_np):
        sw, sh, ew, eh = (int(round_half_away(np.asarray(v * f(spatial_scale)))) for v in roi[1:])
        bin_h = f(max(eh - sh + 1, 1)) / f(ph_n)
        bin_w = f(max(ew - sw + 1, 1)) / f(pw_n)
        for ph in range(ph_n):
            for pw in range(pw_n):
                hs = min(max(int(math.floor(f(ph) * bin_h)) + sh, 0), h)
                he = min(max(int(math.ceil(f(ph + 1) * bin_h)) + sh, 0), h)
                ws = min(max(int(math.floor(f(pw) * bin_w)) + sw, 0), w)
                we = min(max(int(math.ceil(f(pw + 1) * bin_w)) + sw, 0), w)
                if he > hs and we > ws:
                    out[i, :, ph, pw] = a_np[int(roi[0]), :, hs:he, ws:we].max(axis=(1, 2))
    return out


def reorg_python(a_np, stride):
    """Darknet's ``reorg`` (YOLOv2): output element ``(b, k, j, i)`` of the input's shape reads the flat input at
    ``w2 + W * s * (h2 + H * s * (k % C' + C' * b))``, ``C' = C / s**2``, ``w2 = i * s + (k / C') % s``,
    ``h2 = j * s + (k / C') / s``; the result is reshaped to ``(N, C * s * s, H / s, W / s)``."""
    n, c, h, w = a_np.shape
    s = int(stride)
    out_c = c // (s * s)
    b, k, j, i = np.meshgrid(np.arange(n), np.arange(c), np.arange(h), np.arange(w), indexing="ij")
    offset = k // out_c
    w2, h2 = i * s + offset % s, j * s + offset // s
    out = a_np.reshape(-1)[w2 + w * s * (h2 + h * s * (k % out_c + out_c * b))]
    return np.ascontiguousarray(out.reshape(n, c * s * s, h // s, w // s))


def deformable_conv2d_nchw_python(a_np, offset_np, w_np, stride, padding, dilation, deformable_groups, groups=1):
    """Deformable convolution of NCHW ``a_np`` with an OIHW ``w_np`` (``groups`` groups): each tap reads
    ``a_np`` bilinearly at its position moved by the ``(dy, dx)`` pair of ``offset_np``
    ``(N, deformable_groups * KH * KW * 2, OH, OW)`` for its deformable group, tap and output pixel.

    ``padding`` is an int, 2 or 4 values, ``"SAME"`` or ``"VALID"``; returns ``(N, O, OH, OW)``.
    """
    n, c, h, w = a_np.shape
    o, cg, kh, kw = w_np.shape
    oh, ow = offset_np.shape[2:]
    if c % deformable_groups or c % groups or o % groups or cg * groups != c:
        raise OpAttributeInvalid(f"deformable_conv2d: data {a_np.shape}, weight {w_np.shape}, groups {groups} and "
                                 f"deformable_groups {deformable_groups} do not fit")
    (sh, sw), (dh, dw) = _pair(stride), _pair(dilation)
    top, left, _, _ = get_pad_tuple(padding, (kh, kw))
    work = np.dtype("float32") if a_np.dtype == np.float16 else a_np.dtype
    f = work.type
    per_group = c // deformable_groups
    sampled = np.zeros((n, c, kh, kw, oh, ow), work)
    ys, xs = np.arange(oh)[:, None] * sh - top, np.arange(ow)[None, :] * sw - left
    for b in range(n):
        img = a_np[b].astype(work)
        offsets = offset_np[b].astype(work).reshape(deformable_groups, kh, kw, 2, oh, ow)
        for ky in range(kh):
            for kx in range(kw):
                for g in range(deformable_groups):
                    py = (ys + ky * dh).astype(work) + offsets[g, ky, kx, 0]
                    px = (xs + kx * dw).astype(work) + offsets[g, ky, kx, 1]
                    inside = (py >= 0) & (px >= 0) & (py < h) & (px < w)
                    chans = slice(g * per_group, (g + 1) * per_group)
                    sampled[b, chans, ky, kx] = np.where(inside, bilinear_python(img[chans], py, px), f(0))
    og = o // groups
    out = np.concatenate([np.einsum("bckyhw,ocky->bohw", sampled[:, g * cg:(g + 1) * cg],
                                    w_np[g * og:(g + 1) * og].astype(work)) for g in range(groups)], axis=1)
    return out.astype(a_np.dtype)


def deformable_conv2d_nhwc_python(a_np, offset_np, w_np, stride, padding, dilation, deformable_groups, groups=1):
    """:func:`deformable_conv2d_nchw_python` of NHWC data, an HWIO kernel and NHWC offsets: ``(N, OH, OW, O)``."""
    out = deformable_conv2d_nchw_python(a_np.transpose(0, 3, 1, 2), offset_np.transpose(0, 3, 1, 2),
                                        w_np.transpose(3, 2, 0, 1), stride, padding, dilation, deformable_groups,
                                        groups)
    return np.ascontiguousarray(out.transpose(0, 2, 3, 1))
