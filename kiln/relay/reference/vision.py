"""``vision.roi_align`` and ``vision.roi_pool`` in numpy, region by region and bin by bin (TVM's
``roi_align_nchw``/``roi_pool_nchw`` formulas; see :mod:`kiln.topi.vision`)."""

import math

import numpy as np

from .common import as_dtype, register, round_half_away


def _bilinear(img, y, x):
    """Bilinear sample of ``img`` (C, H, W) at ``(y, x)``, 0 more than a pixel outside, clamped inside."""
    h, w = img.shape[1:]
    if y < -1.0 or x < -1.0 or y > h or x > w:
        return np.zeros(img.shape[0], img.dtype)
    y, x = min(max(y, 0.0), h - 1), min(max(x, 0.0), w - 1)
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    y1, x1 = min(int(math.ceil(y)), h - 1), min(int(math.ceil(x)), w - 1)
    ty, tx = img.dtype.type(y - y0), img.dtype.type(x - x0)
    one = img.dtype.type(1)
    return (img[:, y0, x0] * (one - tx) * (one - ty) + img[:, y0, x1] * tx * (one - ty)
            + img[:, y1, x0] * (one - tx) * ty + img[:, y1, x1] * tx * ty)


@register("vision.roi_align")
def roi_align(attrs, data, rois):
    """Average (or maximum) of a grid of bilinear samples per bin."""
    ph_n, pw_n = attrs.pooled_size
    f = data.dtype.type
    scale = f(attrs.spatial_scale)
    out = np.zeros((rois.shape[0], data.shape[1], ph_n, pw_n), data.dtype)
    for i, roi in enumerate(rois):
        img = data[int(roi[0])]
        sw, sh, ew, eh = roi[1] * scale, roi[2] * scale, roi[3] * scale, roi[4] * scale
        roi_h, roi_w = max(eh - sh, f(1)), max(ew - sw, f(1))
        bin_h, bin_w = roi_h / f(ph_n), roi_w / f(pw_n)
        gh = gw = attrs.sample_ratio
        if attrs.sample_ratio <= 0:
            gh, gw = int(math.ceil(roi_h / f(ph_n))), int(math.ceil(roi_w / f(pw_n)))
        for ph in range(ph_n):
            for pw in range(pw_n):
                samples = [_bilinear(img, sh + f(ph) * bin_h + (f(r) + f(0.5)) * bin_h / f(gh),
                                     sw + f(pw) * bin_w + (f(q) + f(0.5)) * bin_w / f(gw))
                           for r in range(gh) for q in range(gw)]
                if attrs.mode == "avg":
                    out[i, :, ph, pw] = sum(s / f(gh * gw) for s in samples) if samples else 0
                else:
                    out[i, :, ph, pw] = np.max(samples, axis=0) if samples else np.finfo(data.dtype).min
    return out


@register("vision.roi_pool")
def roi_pool(attrs, data, rois):
    """Maximum over the whole pixels of each bin of the rounded region (0 for an empty bin)."""
    ph_n, pw_n = attrs.pooled_size
    f = rois.dtype.type
    h, w = data.shape[2:]
    out = np.zeros((rois.shape[0], data.shape[1], ph_n, pw_n), data.dtype)
    for i, roi in enumerate(rois):
        sw, sh, ew, eh = (int(round_half_away(np.asarray(v * f(attrs.spatial_scale)))) for v in roi[1:])
        bin_h = f(max(eh - sh + 1, 1)) / f(ph_n)
        bin_w = f(max(ew - sw + 1, 1)) / f(pw_n)
        for ph in range(ph_n):
            for pw in range(pw_n):
                hs = min(max(int(math.floor(f(ph) * bin_h)) + sh, 0), h)
                he = min(max(int(math.ceil(f(ph + 1) * bin_h)) + sh, 0), h)
                ws = min(max(int(math.floor(f(pw) * bin_w)) + sw, 0), w)
                we = min(max(int(math.ceil(f(pw + 1) * bin_w)) + sw, 0), w)
                if he > hs and we > ws:
                    out[i, :, ph, pw] = data[int(roi[0]), :, hs:he, ws:we].max(axis=(1, 2))
    return as_dtype(out, data.dtype)
