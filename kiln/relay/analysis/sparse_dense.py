"""Which ``nn.dense`` weights can become BSR matrices (TVM's ``relay.analysis.sparse_dense``), for
``relay.data_dep_optimization.bsr_dense``: a ``(units, in)`` weight is cut into ``(bs_r, bs_c)`` blocks, keeping
those that hold a nonzero value (:func:`.sparse_conv2d.bsr_from_dense`)."""

import numpy as np

from ...ir.op import Op
from ...runtime import ndarray as nd
from ..expr import Call, Var
from ..expr_functor import post_order_visit
from .sparse_conv2d import SparseAnalysisResult, bsr_from_dense

__all__ = ["process_params"]


def _search_dense_op_weight(expr) -> list:
    """The names of the variables used as the weight of an ``nn.dense`` in ``expr``, in the order met."""
    dense, names = Op.get("nn.dense"), []

    def visit(node):
        if isinstance(node, Call) and node.op == dense and isinstance(node.args[1], Var):
            names.append(node.args[1].name_hint)

    post_order_visit(expr, visit)
    return names


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
    for name in _search_dense_op_weight(expr):
        if name in names or name not in params:
            continue
        weight = params[name].numpy() if hasattr(params[name], "numpy") else np.asarray(params[name])
        if weight.ndim != 2 or weight.shape[0] % block_size[0] or weight.shape[1] % block_size[1]:
            continue
        if 1.0 - np.count_nonzero(weight) / weight.size < sparsity_threshold:
            continue
        data, indices, indptr = bsr_from_dense(weight, block_size)
        del params[name]
        names.append(name)
        shapes.append([*data.shape, *indices.shape, *indptr.shape])
        params[name + ".data"] = nd.array(np.ascontiguousarray(data))
        params[name + ".indices"] = nd.array(indices)
        params[name + ".indptr"] = nd.array(indptr)
    return SparseAnalysisResult(weight_name=names, weight_shape=shapes)
