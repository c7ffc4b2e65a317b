"""Array references for tests (TVM's ``tvm.topi.testing.sequence_mask`` and ``matrix_set_diag``), in numpy."""

import numpy as np


def sequence_mask(data, valid_length, mask_value, axis):
    """``data`` with every position at or past its batch's valid length (along ``axis``, 0 or 1; the batch is
    the other of the two leading axes) replaced by ``mask_value``."""
    length_axis, batch_axis = (0, 1) if axis == 0 else (1, 0)
    positions = np.arange(data.shape[length_axis])
    keep = positions[:, None] < np.asarray(valid_length)[None, :]  # (length, batch)
    if length_axis == 1:
        keep = keep.T
    keep = keep.reshape(keep.shape + (1,) * (data.ndim - 2))
    return np.where(keep, data, np.asarray(mask_value, data.dtype))


def matrix_set_diag(input_np, diagonal, k=0, align="RIGHT_LEFT"):
    """``input_np`` with its diagonals ``k`` (an int, or ``(low, high)`` for a band) replaced by ``diagonal``.

    A band's ``diagonal`` holds the diagonals from ``high`` down to ``low`` along its second-to-last axis, each
    padded to the longest; ``align`` says which side a shorter super- (first word) and sub-diagonal (second word)
    is aligned to, as TensorFlow's ``matrix_set_diag_v3``."""
    low, high = (k, k) if isinstance(k, int) else (int(k[0]), int(k[1]))
    super_align, sub_align = align.split("_")
    out = np.array(input_np)
    rows, cols = out.shape[-2:]
    width = diagonal.shape[-1]
    for d in range(low, high + 1):
        count = min(rows + min(0, d), cols - max(0, d))
        start = width - count if (super_align if d >= 0 else sub_align) == "RIGHT" else 0
        values = diagonal if low == high else diagonal[..., high - d, :]
        r = np.arange(count) + max(0, -d)
        out[..., r, r + d] = values[..., start:start + count]
    return out
