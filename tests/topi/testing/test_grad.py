"""The numpy gradients of kiln/topi/testing/grad.py against central differences of the forward references."""

import numpy as np
import pytest

from kiln.topi.testing import conv2d_backward_weight_python, conv2d_nchw_python, pool_grad_nchw


def _numeric(f, x, eps=1e-6):
    """d sum(weights * f(x)) / dx by central differences (``weights`` fixed inside ``f``)."""
    out = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        saved = x[i]
        x[i] = saved + eps
        plus = f(x)
        x[i] = saved - eps
        minus = f(x)
        x[i] = saved
        out[i] = (plus - minus) / (2 * eps)
    return out


def _pool(x, kind, pool, stride, pad, ceil_mode=False, count_include_pad=True):
    """A direct forward pooling (NCHW) to differentiate numerically."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (top, left, bottom, right) = pool, stride, pad
    rounding = np.ceil if ceil_mode else np.floor
    oh = int(rounding((h + top + bottom - kh) / sh)) + 1
    ow = int(rounding((w + left + right - kw) / sw)) + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * sh - top, j * sw - left
            rows = [r for r in range(r0, r0 + kh) if 0 <= r < h]
            cols = [q for q in range(c0, c0 + kw) if 0 <= q < w]
            window = x[:, :, rows][:, :, :, cols]
            if kind == "max":
                out[:, :, i, j] = window.max(axis=(2, 3))
            else:
                span_r = min(r0 + kh, h + bottom) - max(r0, -top)
                span_c = min(c0 + kw, w + right) - max(c0, -left)
                count = span_r * span_c if count_include_pad else len(rows) * len(cols)
                out[:, :, i, j] = window.sum(axis=(2, 3)) / count
    return out


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("pool,stride,pad,ceil_mode,count_include_pad", [
    ((2, 2), (2, 2), (0, 0, 0, 0), False, True),
    ((3, 3), (2, 2), (1, 1, 1, 1), False, False),
    ((3, 2), (1, 2), (1, 0, 0, 1), False, True),
    ((3, 3), (2, 2), (0, 0, 0, 0), True, True),
])
def test_pool_grad_nchw(kind, pool, stride, pad, ceil_mode, count_include_pad):
    rng = np.random.default_rng(0)
    x = (rng.permutation(2 * 6 * 5) / 60.0).reshape(1, 2, 6, 5)  # distinct values: one maximum per window
    out_shape = _pool(x, kind, pool, stride, pad, ceil_mode, count_include_pad).shape
    weights = rng.uniform(-1, 1, out_shape)
    got = pool_grad_nchw(x, weights, pool, stride, pad, kind, ceil_mode, count_include_pad)
    want = _numeric(lambda v: np.sum(weights * _pool(v, kind, pool, stride, pad, ceil_mode, count_include_pad)), x)
    np.testing.assert_allclose(got, want, atol=1e-7)


@pytest.mark.parametrize("stride,padding,groups", [((1, 1), (1, 1), 1), ((2, 1), (0, 1), 1), ((1, 1), (1, 1), 2)])
def test_conv2d_backward_weight_python(stride, padding, groups):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (2, 4, 5, 6))
    w = rng.uniform(-1, 1, (6, 4 // groups, 3, 3))
    out = conv2d_nchw_python(x, w, stride, padding, groups=groups)
    dy = rng.uniform(-1, 1, out.shape)
    got = conv2d_backward_weight_python(dy, x, (3, 3), stride, padding, groups=groups, channels=6)
    want = _numeric(lambda v: np.sum(dy * conv2d_nchw_python(x, v, stride, padding, groups=groups)), w)
    np.testing.assert_allclose(got, want, atol=1e-7)
