"""Numeric helpers the numpy references share (and the reference interpreter imports)."""

import numpy as np

from ..nn.utils import get_pad_tuple  # noqa: F401  (the references import it from here)

__all__ = ["round_half_away", "get_pad_tuple"]


def round_half_away(x):
    """Round to nearest with ties away from zero (C ``round``, LLVM ``llvm.round``, which TVM's ``round`` lowers to).

    ``x - trunc(x)`` is exact in floating point, so there is no double rounding (``floor(x + 0.5)`` is wrong for
    the float just below 0.5).
    """
    whole = np.trunc(x)
    frac = x - whole
    return whole + np.where(np.abs(frac) >= 0.5, np.sign(x), 0).astype(x.dtype)
