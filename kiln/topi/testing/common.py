"""Numeric helpers the numpy references share (and the reference interpreter imports)."""

import numpy as np

from ...error import OpAttributeInvalid

__all__ = ["round_half_away", "get_pad_tuple"]


def round_half_away(x):
    """Round to nearest with ties away from zero (C ``round``, LLVM ``llvm.round``, which TVM's ``round`` lowers to).

    ``x - trunc(x)`` is exact in floating point, so there is no double rounding (``floor(x + 0.5)`` is wrong for
    the float just below 0.5).
    """
    whole = np.trunc(x)
    frac = x - whole
    return whole + np.where(np.abs(frac) >= 0.5, np.sign(x), 0).astype(x.dtype)


def get_pad_tuple(padding, kernel):
    """``(top, left, bottom, right)`` padding (TVM's ``topi.nn.get_pad_tuple``) from an int, 2 values
    ``(h, w)``, 4 values, ``"VALID"`` or ``"SAME"`` (``kernel - 1`` in all, the larger half at the top/left)."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return (0, 0, 0, 0)
        if padding.upper() != "SAME":
            raise OpAttributeInvalid(f"padding must be SAME, VALID or sizes, got {padding!r}")
        pad_h, pad_w = kernel[0] - 1, kernel[1] - 1
    elif isinstance(padding, int | np.integer):
        pad_h = pad_w = 2 * int(padding)
    elif len(padding) == 4:
        return tuple(int(p) for p in padding)
    elif len(padding) == 2:
        pad_h, pad_w = 2 * int(padding[0]), 2 * int(padding[1])
    else:
        raise OpAttributeInvalid(f"padding {padding!r} must have 2 or 4 values")
    top, left = (pad_h + 1) // 2, (pad_w + 1) // 2
    return (top, left, pad_h - top, pad_w - left)
