"""numpy references of the sparse operators ``nn.sparse_conv2d`` and ``nn.sparse_transpose``: the BSR weight
expanded to its dense matrix and applied as a padded convolution, and the CSR transpose as a stable sort of the
entries by (column, row). The reference interpreter registers them (:mod:`kiln.relay.reference.sparse`)."""

import numpy as np

__all__ = ["bsr_to_dense", "sparse_conv2d_python", "sparse_transpose_python"]


def bsr_to_dense(data, indices, indptr, columns=None):
    """The dense ``(rows, columns)`` matrix of a BSR matrix (``data (blocks, bs_r[, bs_c])``; ``columns`` defaults
    to just past the last block column)."""
    blocks = data if data.ndim == 3 else data[:, :, None]
    bs_r, bs_c = blocks.shape[1:]
    block_rows = len(indptr) - 1
    if columns is None:
        columns = (int(indices.max()) + 1) * bs_c if len(indices) else 0
    out = np.zeros((block_rows * bs_r, columns), data.dtype)
    for r in range(block_rows):
        for e in range(int(indptr[r]), int(indptr[r + 1])):
            c = int(indices[e]) * bs_c
            out[r * bs_r:(r + 1) * bs_r, c:c + bs_c] += blocks[e]
    return out


def sparse_conv2d_python(data, weight_data, weight_indices, weight_indptr, layout="NHWC", kernel_size=1):
    """Convolution of ``data`` (NHWC or NCHW) with the BSR weight whose rows are the output channels and whose
    columns are the input channels (``kernel_size`` 1) or the 3x3 window of them, padded by 1 (``kernel_size`` 3:
    ``(kh, kw, c)`` flattened for NHWC, ``(c, kh, kw)`` for NCHW); summed in float64 for floats."""
    kernel_size = kernel_size if isinstance(kernel_size, int) else int(kernel_size[0])
    x = np.moveaxis(data, 1, 3) if layout == "NCHW" else data  # NHWC from here on
    m, h, w, k = x.shape
    work = "float64" if np.issubdtype(x.dtype, np.floating) else "int64"
    weight = bsr_to_dense(weight_data, weight_indices, weight_indptr, k * kernel_size * kernel_size).astype(work)
    if kernel_size == 1:
        out = x.astype(work) @ weight.T
    else:
        padded = np.pad(x.astype(work), ((0, 0), (1, 1), (1, 1), (0, 0)))
        kernel = weight.reshape(-1, 3, 3, k) if layout == "NHWC" else weight.reshape(-1, k, 3, 3).transpose(0, 2, 3, 1)
        out = np.zeros((m, h, w, weight.shape[0]), work)
        for kh in range(3):
            for kw in range(3):
                out += padded[:, kh:kh + h, kw:kw + w, :] @ kernel[:, kh, kw, :].T
    out = out.astype(data.dtype)
    return np.moveaxis(out, 3, 1) if layout == "NCHW" else out


def sparse_transpose_python(data, indices, indptr):
    """``(data, indices, indptr)`` of the transpose of the square CSR matrix: its entries sorted by column, then
    row (so each transposed row lists its columns in order). Arrays longer than the ``indptr[-1]`` entries keep
    their length, the rest zero."""
    n, nnz = len(indptr) - 1, int(indptr[-1])
    rows = np.repeat(np.arange(n), np.diff(indptr.astype("int64")))
    columns = indices[:nnz].astype("int64")
    order = np.lexsort((rows, columns))
    out_data, out_indices = np.zeros_like(data), np.zeros_like(indices)
    out_data[:nnz], out_indices[:nnz] = data[:nnz][order], rows[order]
    counts = np.bincount(columns, minlength=n)
    return out_data, out_indices, np.concatenate([[0], np.cumsum(counts)]).astype(indptr.dtype)
