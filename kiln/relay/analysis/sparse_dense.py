"""Which ``nn.dense`` weights can become BSR matrices (TVM's ``relay.analysis.sparse_dense``), for
``relay.data_dep_optimization.bsr_dense``: a ``(units, in)`` weight is cut into ``(bs_r, bs_c)`` blocks, keeping
those that hold a nonzero value (:func:`.sparse_conv2d.bsr_from_dense`)."""

import numpy as np

from .sparse_conv2d import SparseAnalysisResult, bsr_from_dense, replace_by_bsr, weight_params

__all__ = ["process_params"]


def process_params(expr, params, block_size, sparsity_threshold):
    """Replace in ``params`` each ``nn.dense`` weight of ``expr`` of which at least ``sparsity_threshold`` of the
    values are zero by its BSR arrays ``<name>.data`` (``(blocks, bs_r, bs_c)``), ``<name>.indices`` and
    ``<name>.indptr`` (TVM's ``process_params``).

    Returns
    -------
    SparseAnalysisResult
        The names replaced and, for each, the shapes of its data, indices and indptr, concatenated.
    """
    names, shapes = [], []
    for name, weight in list(weight_params(expr, "nn.dense", params)):
        if weight.ndim != 2 or weight.shape[0] % block_size[0] or weight.shape[1] % block_size[1]:
            continue
        if 1.0 - np.count_nonzero(weight) / weight.size < sparsity_threshold:
            continue
        names.append(name)
        shapes.append(replace_by_bsr(params, name, *bsr_from_dense(weight, block_size)))
    return SparseAnalysisResult(weight_name=names, weight_shape=shapes)
