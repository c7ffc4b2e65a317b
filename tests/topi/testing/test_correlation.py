"""kiln/topi/testing/correlation.py: FlowNet's correlation against its definition, one output element at a time."""

import itertools

import numpy as np
import pytest

from kiln.error import OpAttributeInvalid
from kiln.topi import testing as ref

RNG = np.random.default_rng(9)


def loops(d1, d2, k, md, s1, s2, pad, multiply):
    n, c, h, w = d1.shape
    a = np.pad(d1, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    b = np.pad(d2, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    border, radius = md + (k - 1) // 2, md // s2
    oh, ow = -(-(h + 2 * pad - 2 * border) // s1), -(-(w + 2 * pad - 2 * border) // s1)
    grid = 2 * radius + 1
    out = np.zeros((n, grid * grid, oh, ow))
    for bn, q, i, j in itertools.product(range(n), range(grid * grid), range(oh), range(ow)):
        y1, x1 = i * s1 + md, j * s1 + md
        y2, x2 = y1 + (q // grid - radius) * s2, x1 + (q % grid - radius) * s2
        for ch, ky, kx in itertools.product(range(c), range(k), range(k)):
            p, r = a[bn, ch, y1 + ky, x1 + kx], b[bn, ch, y2 + ky, x2 + kx]
            out[bn, q, i, j] += p * r if multiply else abs(p - r)
    return out / (k * k * c)


@pytest.mark.parametrize("shape,k,md,s1,s2,pad,multiply", [
    ((1, 3, 6, 6), 1, 2, 1, 1, 2, True),
    ((2, 2, 5, 7), 3, 1, 2, 1, 2, False),
    ((1, 1, 9, 8), 3, 2, 2, 2, 2, True),  # (9 + 4 - 6) / 2 rounds up, as the operator's size does
])
def test_correlation_matches_loops(shape, k, md, s1, s2, pad, multiply):
    d1, d2 = RNG.standard_normal(shape).astype("float32"), RNG.standard_normal(shape).astype("float32")
    got = ref.correlation_nchw_python(d1, d2, k, md, s1, s2, pad, multiply)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, loops(d1, d2, k, md, s1, s2, pad, multiply), rtol=1e-5, atol=1e-6)


def test_correlation_rejects_mismatched_inputs():
    with pytest.raises(OpAttributeInvalid, match="odd kernel"):
        ref.correlation_nchw_python(np.zeros((1, 1, 4, 4)), np.zeros((1, 1, 4, 5)), 1, 1, 1, 1, 0, True)
