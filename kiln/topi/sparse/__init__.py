"""kiln.topi.sparse: sparse computes and helpers (TVM's ``topi.sparse`` package): products with a CSR matrix
(``csrmv``, ``csrmm``, ``dense``), ``sparse_fill_empty_rows`` and ``random_bsr_matrix``."""

from . import utils
from .csr import csrmm, csrmv, dense
from .fill_empty_rows import distinct_rows, sparse_fill_empty_rows
from .utils import random_bsr_matrix

__all__ = ["csrmm", "csrmv", "dense", "distinct_rows", "random_bsr_matrix", "sparse_fill_empty_rows", "utils"]
