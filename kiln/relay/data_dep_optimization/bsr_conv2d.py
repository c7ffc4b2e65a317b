"""Convolutions with sparse weights made block-sparse (TVM's ``relay.data_dep_optimization.bsr_conv2d``): each
``nn.conv2d`` whose weight has enough zeros becomes ``nn.sparse_conv2d`` of the weight's BSR form."""

from ..analysis.sparse_conv2d import process_params
from ..transform.convert_sparse_conv2d import Conv2dToSparse, Conv2dToSparse2
from .utils import _run_opt_pass

__all__ = ["convert", "convert2"]


def convert(func, params, blocksize, sparsity_threshold, layout="NHWC", kernel_size=1):
    """Rewrite the convolutions of ``func`` whose weights (parameters named in ``params``) are sparse enough.

    Parameters
    ----------
    func : relay.Function
    params : dict of str to NDArray
        The weights by parameter name; each converted one is replaced by its ``.data``, ``.indices`` and
        ``.indptr`` arrays (the dict is changed in place, as TVM's is).
    blocksize : pair of int
        The BSR block shape.
    sparsity_threshold : float
        The least share of zeros a weight needs to be converted.
    layout : str
        NHWC (HWIO weights) or NCHW (OIHW weights).
    kernel_size : int
        1 or 3: the kernels to convert.

    Returns
    -------
    (relay.Function, dict)
        The rewritten function (the BSR arrays its new parameters) and ``params``.
    """
    info = process_params(func, params, blocksize, sparsity_threshold, layout, kernel_size)
    new_func = _run_opt_pass(func, Conv2dToSparse(info.weight_name, info.weight_shape, layout, kernel_size))
    return new_func, params


def convert2(func, params, blocksize, sparsity_threshold, layout, kernel_size):
    """Rewrite the convolutions of ``func`` whose weights are constants (parameters bound) and sparse enough; the
    BSR arrays are constants and ``params`` is returned unchanged."""
    new_func = _run_opt_pass(func, Conv2dToSparse2(layout, kernel_size, blocksize, sparsity_threshold))
    return new_func, params
