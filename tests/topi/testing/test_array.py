"""kiln/topi/testing/array.py: sequence_mask and matrix_set_diag against element-by-element definitions."""

import numpy as np
import pytest

from kiln.topi.testing import matrix_set_diag, sequence_mask


@pytest.mark.parametrize("axis", [0, 1])
def test_sequence_mask(axis):
    rng = np.random.default_rng(0)
    shape = (5, 3, 2) if axis == 0 else (3, 5, 2)
    data = rng.uniform(size=shape)
    lengths = np.array([0, 2.0, 5.0])
    out = sequence_mask(data, lengths, -1.0, axis)
    for b in range(3):
        for t in range(5):
            where = (t, b) if axis == 0 else (b, t)
            want = data[where] if t < lengths[b] else np.full(2, -1.0)
            np.testing.assert_array_equal(out[where], want)


@pytest.mark.parametrize("k,align", [(0, "RIGHT_LEFT"), (1, "RIGHT_LEFT"), (-2, "LEFT_RIGHT"),
                                     ((-1, 2), "RIGHT_LEFT"), ((-1, 2), "LEFT_RIGHT"), ((0, 1), "RIGHT_RIGHT")])
def test_matrix_set_diag(k, align):
    rng = np.random.default_rng(1)
    data = rng.integers(-9, 9, (2, 4, 5))
    low, high = (k, k) if isinstance(k, int) else k
    width = max(min(4 + min(0, d), 5 - max(0, d)) for d in range(low, high + 1))
    diag = rng.integers(100, 200, (2, width) if low == high else (2, high - low + 1, width))
    out = matrix_set_diag(data, diag, k, align)
    for b in range(2):
        for i in range(4):
            for j in range(5):
                d = j - i
                if not low <= d <= high:
                    assert out[b, i, j] == data[b, i, j]
                    continue
                count = min(4 + min(0, d), 5 - max(0, d))
                right = align.split("_")[0 if d >= 0 else 1] == "RIGHT"
                n = min(i, j) + (width - count if right else 0)
                row = diag[b] if low == high else diag[b, high - d]
                assert out[b, i, j] == row[n]
