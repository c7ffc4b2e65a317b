"""Operators of kiln/relay/op/vision.py against naive float64 numpy, in the reference interpreter and compiled for
llvm and c."""

import math

import numpy as np
import pytest

from kiln import relay
from kiln.error import TypeInferenceError

from .checks import check

RNG = np.random.default_rng(23)


def sample(img, y, x):
    c, h, w = img.shape
    if y < -1 or x < -1 or y > h or x > w:
        return np.zeros(c)
    y, x = min(max(y, 0), h - 1), min(max(x, 0), w - 1)
    y0, x0, y1, x1 = int(y), int(x), min(int(math.ceil(y)), h - 1), min(int(math.ceil(x)), w - 1)
    ty, tx = y - y0, x - x0
    return (img[:, y0, x0] * (1 - ty) * (1 - tx) + img[:, y0, x1] * (1 - ty) * tx + img[:, y1, x0] * ty * (1 - tx)
            + img[:, y1, x1] * ty * tx)


def naive_roi_align(data, rois, pooled, scale, ratio, mode):
    out = np.zeros((len(rois), data.shape[1]) + pooled)
    for i, (b, x1, y1, x2, y2) in enumerate(rois.astype("float64")):
        x1, y1, x2, y2 = x1 * scale, y1 * scale, x2 * scale, y2 * scale
        rh, rw = max(y2 - y1, 1.0), max(x2 - x1, 1.0)
        bh, bw = rh / pooled[0], rw / pooled[1]
        gh, gw = (ratio, ratio) if ratio > 0 else (math.ceil(rh / pooled[0]), math.ceil(rw / pooled[1]))
        for ph in range(pooled[0]):
            for pw in range(pooled[1]):
                vals = [sample(data[int(b)], y1 + ph * bh + (r + 0.5) * bh / gh, x1 + pw * bw + (q + 0.5) * bw / gw)
                        for r in range(gh) for q in range(gw)]
                out[i, :, ph, pw] = np.mean(vals, axis=0) if mode == "avg" else np.max(vals, axis=0)
    return out.astype("float32")


@pytest.mark.parametrize("ratio,mode,scale", [(2, "avg", 1.0), (-1, "avg", 0.5), (0, "max", 1.0)])
def test_roi_align(ratio, mode, scale):
    data = RNG.standard_normal((2, 3, 7, 8)).astype("float32")
    rois = np.array([[0, 1.0, 1.5, 6.0, 5.0], [1, 0.0, 0.0, 14.0, 13.0], [1, 2.5, 3.0, 3.2, 3.1]], "float32")
    want = naive_roi_align(data, rois, (2, 3), scale, ratio, mode)
    expr = relay.vision.roi_align(relay.var("d", shape=data.shape), relay.var("r", shape=rois.shape), (2, 3), scale,
                                  ratio, mode=mode)
    check(expr, {"d": data, "r": rois}, want, rtol=1e-4)
    with pytest.raises(TypeInferenceError, match="vision.roi_align"):
        relay.infer_type(relay.vision.roi_align(relay.var("d", shape=(3, 7, 8)), relay.var("r", shape=(3, 5)), 2, 1.0))


def test_roi_pool():
    data = RNG.standard_normal((1, 2, 6, 7)).astype("float32")
    rois = np.array([[0, 0.0, 0.0, 6.0, 5.0], [0, 2.2, 1.4, 3.6, 4.4], [0, 9.0, 9.0, 12.0, 12.0]], "float32")
    want = np.zeros((3, 2, 2, 2), "float32")
    for i, (b, x1, y1, x2, y2) in enumerate(rois):
        sw, sh, ew, eh = (int(np.floor(v + 0.5)) for v in (x1, y1, x2, y2))
        bh, bw = max(eh - sh + 1, 1) / 2, max(ew - sw + 1, 1) / 2
        for ph in range(2):
            for pw in range(2):
                hs, he = min(max(int(np.floor(ph * bh)) + sh, 0), 6), min(max(int(np.ceil((ph + 1) * bh)) + sh, 0), 6)
                ws, we = min(max(int(np.floor(pw * bw)) + sw, 0), 7), min(max(int(np.ceil((pw + 1) * bw)) + sw, 0), 7)
                if he > hs and we > ws:
                    want[i, :, ph, pw] = data[int(b), :, hs:he, ws:we].max(axis=(1, 2))
    expr = relay.vision.roi_pool(relay.var("d", shape=data.shape), relay.var("r", shape=rois.shape), 2, 1.0)
    check(expr, {"d": data, "r": rois}, want)
