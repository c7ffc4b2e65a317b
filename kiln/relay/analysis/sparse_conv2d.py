"""Which ``nn.conv2d`` weights can become BSR matrices (TVM's ``relay.analysis.sparse_conv2d``), for
``relay.data_dep_optimization.bsr_conv2d``.

A convolution's weight becomes the matrix whose rows are the output channels and whose columns are the input
channels (1x1 kernels) or the flattened 3x3 window of them (``(kh, kw, c)`` for HWIO weights of NHWC data,
``(c, kh, kw)`` for OIHW weights of NCHW data), the order :func:`kiln.relay.nn.sparse_conv2d` reads. The matrix is
cut into ``(bs_r, bs_c)`` blocks and the blocks holding a nonzero value kept (as ``scipy.sparse.bsr_matrix``
keeps them).
"""

from collections import namedtuple

import numpy as np

from ...error import OpAttributeInvalid
from ...ir.op import Op
from ...runtime import ndarray as nd
from ..expr import Call, Var
from ..expr_functor import post_order_visit

__all__ = ["SparseAnalysisResult", "bsr_from_dense", "conv2d_weight_matrix", "process_params", "weight_params",
           "replace_by_bsr"]

SparseAnalysisResult = namedtuple("SparseAnalysisResult", ["weight_name", "weight_shape"])


def weight_params(expr, op_name, params):
    """``(name, numpy array)`` of each distinct variable of ``params`` used as the weight (argument 1) of an
    ``op_name`` call in ``expr``, in the order met."""
    op, names = Op.get(op_name), []

    def visit(node):
        if isinstance(node, Call) and node.op == op and isinstance(node.args[1], Var):
            names.append(node.args[1].name_hint)

    post_order_visit(expr, visit)
    for name in dict.fromkeys(names):
        if name in params:
            value = params[name]
            yield name, value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def replace_by_bsr(params, name, data, indices, indptr) -> list:
    """Replace ``params[name]`` by its BSR arrays ``<name>.data``, ``<name>.indices`` and ``<name>.indptr``; returns
    their shapes, concatenated."""
    del params[name]
    params[name + ".data"] = nd.array(np.ascontiguousarray(data))
    params[name + ".indices"] = nd.array(indices)
    params[name + ".indptr"] = nd.array(indptr)
    return [*data.shape, *indices.shape, *indptr.shape]


def conv2d_weight_matrix(weight, layout):
    """The ``(out_channels, columns)`` matrix of a 4-D convolution weight: HWIO for ``NHWC`` data (columns
    ``(kh, kw, c)``), OIHW for ``NCHW`` (columns ``(c, kh, kw)``)."""
    if layout == "NHWC":
        return weight.reshape(-1, weight.shape[-1]).T
    if layout == "NCHW":
        return weight.reshape(weight.shape[0], -1)
    raise OpAttributeInvalid(f"sparse_conv2d: layout {layout!r} must be NHWC or NCHW")


def bsr_from_dense(matrix, block_size):
    """``(data (blocks, bs_r, bs_c), indices, indptr)`` (int32 indices) of ``matrix`` cut into ``block_size`` blocks,
    keeping the blocks that hold a nonzero value, row by row."""
    bs_r, bs_c = (int(b) for b in block_size)
    rows, cols = matrix.shape
    if rows % bs_r or cols % bs_c:
        raise OpAttributeInvalid(f"sparse_conv2d: a {matrix.shape} weight matrix does not divide into {bs_r}x{bs_c} "
                                 f"blocks")
    blocks = matrix.reshape(rows // bs_r, bs_r, cols // bs_c, bs_c).transpose(0, 2, 1, 3)
    keep = np.any(blocks != 0, axis=(2, 3))
    indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))]).astype("int32")
    return blocks[keep], np.nonzero(keep)[1].astype("int32"), indptr


def process_params(expr, params, block_size, sparsity_threshold, layout, kernel_size, reg_task_input=True):
    """Replace in ``params`` each ``nn.conv2d`` weight of ``expr`` with a square ``kernel_size`` kernel and enough
    zeros by its BSR arrays ``<name>.data``, ``<name>.indices``, ``<name>.indptr`` (TVM's ``process_params``).

    A 1x1 weight qualifies when at least ``sparsity_threshold`` of its values are zero (its block data then 2-D
    when ``bs_c`` is 1), a 3x3 one when at least that share of the matrix lies outside the kept blocks.
    ``reg_task_input`` is accepted for TVM's signature: kiln has no auto-scheduler whose tasks would read the
    arrays.

    Returns
    -------
    SparseAnalysisResult
        ``weight_name``: the names replaced; ``weight_shape``: for each, the shapes of its data, indices and
        indptr, concatenated.
    """
    names, shapes = [], []
    for name, weight in list(weight_params(expr, "nn.conv2d", params)):
        kernel = weight.shape[:2] if layout == "NHWC" else weight.shape[2:]
        if kernel[0] != kernel[1] or kernel[0] != kernel_size or kernel_size not in (1, 3):
            continue
        matrix = conv2d_weight_matrix(weight, layout)
        if matrix.shape[0] % block_size[0] or matrix.shape[1] % block_size[1]:
            continue
        data, indices, indptr = bsr_from_dense(matrix, block_size)
        if kernel_size == 1:
            sparsity = 1.0 - np.count_nonzero(matrix) / matrix.size
            if block_size[1] == 1:
                data = data.reshape(data.shape[0], block_size[0])
        else:
            sparsity = 1.0 - data.size / matrix.size
        if sparsity < sparsity_threshold:
            continue
        names.append(name)
        shapes.append(replace_by_bsr(params, name, data, indices, indptr))
    return SparseAnalysisResult(weight_name=names, weight_shape=shapes)
