"""``nn.sparse_conv2d`` and ``nn.sparse_transpose`` in numpy: the references of :mod:`kiln.topi.testing.sparse`
(the BSR weight expanded to a dense matrix; the CSR transpose as a stable sort of the entries)."""

from ...topi.testing.sparse import sparse_conv2d_python, sparse_transpose_python
from .common import register


@register("nn.sparse_conv2d")
def sparse_conv2d(attrs, data, weight_data, weight_indices, weight_indptr):
    """The convolution with the dense form of the BSR weight."""
    return sparse_conv2d_python(data, weight_data, weight_indices, weight_indptr, attrs.layout, attrs.kernel_size)


@register("nn.sparse_transpose")
def sparse_transpose(attrs, data, indices, indptr):
    """``(data, indices, indptr)`` of the transpose."""
    return sparse_transpose_python(data, indices, indptr)
