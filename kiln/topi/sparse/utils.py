"""Helpers for sparse tests and benchmarks (TVM's ``topi.sparse.utils``): random BSR matrices."""

import numpy as np

from ...error import OpAttributeInvalid

__all__ = ["random_bsr_matrix"]


def random_bsr_matrix(m, n, bs_r, bs_c, density, dtype):
    """A random ``(m, n)`` matrix in BSR form (``scipy.sparse.bsr_matrix`` with blocks ``(bs_r, bs_c)``): about
    ``density * m * n`` values, as ``int(density * m * n / (bs_r * bs_c)) + 1`` distinct blocks chosen at random
    and filled from a standard normal distribution (numpy's global generator, which tests seed).

    Parameters
    ----------
    m, n : int
        The shape; multiples of ``bs_r`` and ``bs_c``.
    bs_r, bs_c : int
        The block shape.
    density : float
        The share of values to fill.
    dtype : str

    Returns
    -------
    scipy.sparse.bsr_matrix
    """
    import scipy.sparse as sp

    if m % bs_r or n % bs_c:
        raise OpAttributeInvalid(f"random_bsr_matrix: the shape ({m}, {n}) is not a multiple of the block "
                                 f"({bs_r}, {bs_c})")
    block_rows, block_cols = m // bs_r, n // bs_c
    count = int(density * m * n / (bs_r * bs_c)) + 1
    if count > block_rows * block_cols:
        raise OpAttributeInvalid(f"random_bsr_matrix: density {density} needs {count} blocks, the matrix has "
                         f"{block_rows * block_cols}")
    chosen = np.random.choice(block_rows * block_cols, size=count, replace=False)
    dense = np.zeros((m, n), dtype)
    for block in chosen:
        r, c = divmod(int(block), block_cols)
        dense[r * bs_r:(r + 1) * bs_r, c * bs_c:(c + 1) * bs_c] = np.random.randn(bs_r, bs_c)
    return sp.bsr_matrix(dense, blocksize=(bs_r, bs_c))
