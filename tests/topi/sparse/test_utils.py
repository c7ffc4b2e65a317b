"""topi.sparse.utils.random_bsr_matrix (kiln/topi/sparse/utils.py): shapes, block structure and density."""

import numpy as np
import pytest

from kiln.error import OpAttributeInvalid
from kiln.topi.sparse.utils import random_bsr_matrix


@pytest.mark.parametrize("m,n,bs_r,bs_c,density", [(16, 12, 4, 3, 0.3), (32, 8, 8, 1, 0.1), (4, 4, 1, 1, 0.5)])
def test_random_bsr_matrix_has_the_requested_blocks(m, n, bs_r, bs_c, density):
    np.random.seed(1)
    mat = random_bsr_matrix(m, n, bs_r, bs_c, density, "float32")
    blocks = int(density * m * n / (bs_r * bs_c)) + 1
    assert mat.shape == (m, n) and mat.blocksize == (bs_r, bs_c) and mat.dtype == np.float32
    assert mat.data.shape == (blocks, bs_r, bs_c) and mat.indptr.shape == (m // bs_r + 1,)
    dense = mat.toarray()
    filled = dense.reshape(m // bs_r, bs_r, n // bs_c, bs_c).any(axis=(1, 3))
    assert filled.sum() == blocks  # every chosen block holds normal samples, so none is all zero


def test_random_bsr_matrix_refuses_shapes_and_densities_it_cannot_make():
    with pytest.raises(OpAttributeInvalid, match="not a multiple of the block"):
        random_bsr_matrix(10, 8, 4, 2, 0.1, "float32")
    with pytest.raises(OpAttributeInvalid, match="needs 5 blocks"):
        random_bsr_matrix(4, 4, 2, 2, 1.0, "float32")
