"""Dense layers with sparse weights made block-sparse (TVM's ``relay.data_dep_optimization.bsr_dense``): each
``nn.dense`` whose weight has enough zeros becomes ``nn.sparse_dense`` of the weight's BSR form."""

from ..analysis.sparse_dense import process_params
from ..transform.convert_sparse_dense import DenseToSparse
from .utils import _run_opt_pass

__all__ = ["convert"]


def convert(func, params, blocksize, sparsity_threshold):
    """Rewrite the dense layers of ``func`` whose weights (parameters named in ``params``) have at least
    ``sparsity_threshold`` zeros; ``params`` is changed in place (each converted weight replaced by its
    ``.data``, ``.indices`` and ``.indptr`` arrays) and returned with the new function."""
    info = process_params(func, params, blocksize, sparsity_threshold)
    return _run_opt_pass(func, DenseToSparse(info.weight_name, info.weight_shape)), params
