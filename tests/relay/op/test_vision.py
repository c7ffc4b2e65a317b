"""Operators of kiln/relay/op/vision.py against naive float64 numpy, in the reference interpreter and compiled for
llvm and c."""

import math

import numpy as np
import pytest

from kiln import relay
from kiln.error import OpAttributeInvalid, TypeInferenceError

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
    nhwc = relay.vision.roi_align(relay.var("d", shape=(2, 7, 8, 3)), relay.var("r", shape=rois.shape), (2, 3), scale,
                                  ratio, layout="NHWC", mode=mode)
    check(nhwc, {"d": data.transpose(0, 2, 3, 1), "r": rois}, want.transpose(0, 2, 3, 1), rtol=1e-4)
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


def tvm_bilinear(img, y, x):
    """TVM's ``bilinear_sample_nchw`` behind deformable convolution: 0 for a tap outside the image, and each of
    the four neighbours outside the image contributes nothing (no clamping to the last row)."""
    h, w = img.shape
    if y < 0 or x < 0 or y >= h or x >= w:
        return 0.0
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    ty, tx = y - y0, x - x0
    return sum(img[r, c] * wy * wx for r, wy in ((y0, 1 - ty), (y0 + 1, ty)) for c, wx in ((x0, 1 - tx), (x0 + 1, tx))
               if r < h and c < w)


def naive_bilinear(img, y, x):
    h, w = img.shape
    if y < 0 or x < 0 or y >= h or x >= w:
        return 0.0
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    ty, tx = y - y0, x - x0
    return (img[y0, x0] * (1 - ty) * (1 - tx) + img[y0, x1] * (1 - ty) * tx + img[y1, x0] * ty * (1 - tx)
            + img[y1, x1] * ty * tx)


@pytest.mark.parametrize("method", ["bilinear", "nearest_neighbor"])
def test_crop_and_resize(method):
    data = RNG.standard_normal((2, 5, 6, 3)).astype("float32")
    # no sample lands on a half pixel, where nearest-neighbour rounding would hang on the float32 rounding
    boxes = np.array([[0.1, 0.2, 0.9, 0.72], [-0.2, 0.0, 0.5, 1.3], [0.3, 0.32, 0.3, 0.8]], "float32")
    idx = np.array([1, 0, 1], "int32")
    want = np.zeros((3, 4, 3, 3), "float32")
    for b, (y1, x1, y2, x2) in enumerate(boxes.astype("float64")):
        for i in range(4):
            for j in range(3):
                y = y1 * 4 + i * (y2 - y1) * 4 / 3
                x = x1 * 5 + j * (x2 - x1) * 5 / 2
                for ch in range(3):
                    img = data[idx[b], :, :, ch]
                    if y < 0 or y > 4 or x < 0 or x > 5:
                        want[b, i, j, ch] = -1.0
                    elif method == "bilinear":
                        want[b, i, j, ch] = naive_bilinear(img, y, x)
                    else:
                        # TVM rounds box coordinates to the nearest pixel (te.round: ties away from zero)
                        want[b, i, j, ch] = img[int(math.floor(y + 0.5)), int(math.floor(x + 0.5))]
    expr = relay.image.crop_and_resize(relay.var("d", shape=data.shape), relay.var("b", shape=boxes.shape),
                                       relay.var("i", shape=(3,), dtype="int32"), (4, 3), "NHWC", method, -1.0)
    check(expr, {"d": data, "b": boxes, "i": idx}, want, rtol=1e-4)


def test_dilation2d():
    data, weight = RNG.standard_normal((1, 2, 5, 6)).astype("float32"), RNG.standard_normal((2, 2, 3)).astype("float32")
    xp = np.pad(data, ((0, 0), (0, 0), (1, 0), (1, 1)))
    want = np.full((1, 2, 2, 3), -np.inf, "float32")
    for y in range(2):
        for x in range(3):
            for ry in range(2):
                for rx in range(3):
                    want[:, :, y, x] = np.maximum(want[:, :, y, x], xp[:, :, y * 2 + ry * 2, x * 2 + rx] + weight[:, ry, rx])
    expr = relay.image.dilation2d(relay.var("d", shape=data.shape), relay.var("w", shape=weight.shape), (2, 2),
                                  (1, 1, 0, 1), (2, 1))
    check(expr, {"d": data, "w": weight}, want)
    nhwc = relay.image.dilation2d(relay.var("d", shape=(1, 5, 6, 2)), relay.var("w", shape=(2, 3, 2)), (2, 2),
                                  (1, 1, 0, 1), (2, 1), "NHWC", "HWI")
    check(nhwc, {"d": data.transpose(0, 2, 3, 1), "w": weight.transpose(1, 2, 0)}, want.transpose(0, 2, 3, 1),
          targets=("c",))
    # four strides or dilations, as TVM takes them (its first two) when TensorFlow's reading (the middle two) agrees
    four = relay.image.dilation2d(relay.var("d", shape=data.shape), relay.var("w", shape=weight.shape),
                                  [2, 2, 2, 2], (1, 1, 0, 1), (2, 1))
    assert four.attrs.strides == (2, 2)
    with pytest.raises(OpAttributeInvalid, match="strides"):
        relay.image.dilation2d(relay.var("d", shape=data.shape), relay.var("w", shape=weight.shape), [1, 2, 2, 1])


def test_deformable_conv2d():
    data = RNG.standard_normal((1, 4, 5, 5)).astype("float32")
    weight = RNG.standard_normal((3, 4, 3, 3)).astype("float32")
    offset = (RNG.standard_normal((1, 2 * 2 * 9, 5, 5)) * 1.5).astype("float32")
    want = np.zeros((1, 3, 5, 5))
    for f in range(3):
        for y in range(5):
            for x in range(5):
                for c in range(4):
                    for ky in range(3):
                        for kx in range(3):
                            base = (c // 2) * 18 + (ky * 3 + kx) * 2
                            py = y - 1 + ky + offset[0, base, y, x]
                            px = x - 1 + kx + offset[0, base + 1, y, x]
                            want[0, f, y, x] += tvm_bilinear(data[0, c], py, px) * weight[f, c, ky, kx]
    expr = relay.nn.deformable_conv2d(relay.var("d", shape=data.shape), relay.var("o", shape=offset.shape),
                                      relay.var("w", shape=weight.shape), padding=(1, 1), deformable_groups=2)
    check(expr, {"d": data, "o": offset, "w": weight}, want.astype("float32"), rtol=1e-4)
    with pytest.raises(TypeInferenceError, match="nn.deformable_conv2d: offset"):
        relay.infer_type(relay.nn.deformable_conv2d(relay.var("d", shape=data.shape), relay.var("o", shape=(1, 18, 5, 5)),
                                                    relay.var("w", shape=weight.shape), deformable_groups=2))


@pytest.mark.parametrize("is_multiply,stride2,padding", [(True, 1, 0), (False, 2, 2)])
def test_correlation(is_multiply, stride2, padding):
    a = RNG.standard_normal((1, 3, 7, 8)).astype("float32")
    b = RNG.standard_normal((1, 3, 7, 8)).astype("float32")
    k, md = 3, 2
    pa, pb = (np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding))) for x in (a, b))
    border = md + 1
    radius = md // stride2
    size = 2 * radius + 1
    out_h, out_w = 7 + 2 * padding - 2 * border, 8 + 2 * padding - 2 * border
    want = np.zeros((1, size * size, out_h, out_w))
    for q in range(size * size):
        dy, dx = (q // size - radius) * stride2, (q % size - radius) * stride2
        for i in range(out_h):
            for j in range(out_w):
                y, x = i + md, j + md
                for c in range(3):
                    for ry in range(k):
                        for rx in range(k):
                            u, w = pa[0, c, y + ry, x + rx], pb[0, c, y + dy + ry, x + dx + rx]
                            want[0, q, i, j] += u * w if is_multiply else abs(u - w)
    want /= k * k * 3
    expr = relay.nn.correlation(relay.var("a", shape=a.shape), relay.var("b", shape=b.shape), k, md, 1, stride2,
                                padding, is_multiply, "NCHW")
    check(expr, {"a": a, "b": b}, want.astype("float32"), rtol=1e-4)


def test_get_valid_counts():
    data = RNG.uniform(-0.5, 1, (2, 6, 5)).astype("float32")
    data[0, 2, 0] = -1.0  # a negative class id is invalid
    counts, outs, idxs = [], [], []
    for b in range(2):
        valid = [j for j in range(6) if data[b, j, 1] > 0.3 and data[b, j, 0] >= 0]
        counts.append(len(valid))
        out = np.full((6, 5), -1.0, "float32")
        out[:len(valid)] = data[b, valid]
        outs.append(out)
        idxs.append(valid + [-1] * (6 - len(valid)))
    res = relay.vision.get_valid_counts(relay.var("d", shape=data.shape), 0.3)
    assert "score_threshold=None" in res.astext()  # TVM's unset attribute, shown as TVM shows it
    check(relay.Tuple([res[0], res[1], res[2]]), {"d": data},
          (np.array(counts, "int32"), np.stack(outs), np.array(idxs, "int32")))


def test_multibox_transform_loc():
    # the example of TVM's test: three anchors, two classes
    cls_prob = np.array([[[0.2, 0.5, 0.3], [0.7, 0.45, 0.3]]], "float32").reshape(1, 2, 3)
    cls_prob = np.stack([1 - cls_prob[0, 1], cls_prob[0, 1]])[None].astype("float32")
    loc = np.array([[0.1, -0.2, 0.3, 0.2, 0.2, 0.4, 0.5, -0.3, 0.7, -0.2, -0.4, -0.8]], "float32")
    anchors = np.array([[[-0.1, -0.1, 0.1, 0.1], [-0.2, -0.2, 0.2, 0.2], [1.2, 1.2, 1.5, 1.5]]], "float32")
    want = np.full((1, 3, 6), -1.0, "float32")
    for j in range(3):
        al, at, ar, ab = anchors[0, j].astype("float64")
        px, py, pw, ph = loc[0, j * 4: j * 4 + 4].astype("float64")
        aw, ah = ar - al, ab - at
        ox, oy = px * 0.1 * aw + (al + ar) / 2, py * 0.1 * ah + (at + ab) / 2
        ow, oh = np.exp(pw * 0.2) * aw / 2, np.exp(ph * 0.2) * ah / 2
        want[0, j] = [0, cls_prob[0, 1, j], *np.clip([ox - ow, oy - oh, ox + ow, oy + oh], 0, 1)]
    out = relay.vision.multibox_transform_loc(relay.var("c", shape=cls_prob.shape), relay.var("l", shape=loc.shape),
                                              relay.var("a", shape=anchors.shape))
    check(relay.Tuple([out[0], out[1]]), {"c": cls_prob, "l": loc, "a": anchors}, (want, np.array([3], "int32")),
          rtol=1e-5)
    high = relay.vision.multibox_transform_loc(relay.var("c", shape=cls_prob.shape),
                                               relay.var("l", shape=loc.shape), relay.var("a", shape=anchors.shape),
                                               threshold=0.6)
    kept = [j for j in range(3) if cls_prob[0, 1, j] >= 0.6]
    want_high = np.full((1, 3, 6), -1.0, "float32")
    want_high[0, :len(kept)] = want[0, kept]
    check(relay.Tuple([high[0], high[1]]), {"c": cls_prob, "l": loc, "a": anchors},
          (want_high, np.array([len(kept)], "int32")), targets=("c",))
