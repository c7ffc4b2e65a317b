"""Sparse products and transposition (TVM's ``topi.nn.sparse_dense``, ``sparse_conv2d``, ``sparse_transpose``).

``sparse_dense`` multiplies dense data with a CSR matrix (1-D ``data``; :func:`kiln.topi.array_more.sparse_dense`)
or a BSR matrix (3-D ``data (blocks, bs_r, bs_c)``): output column ``n`` sums, over the blocks ``e`` of block row
``n // bs_r``, ``data[e, n % bs_r, c] * x[indices[e] * bs_c + c]``.

``sparse_conv2d`` convolves dense data with a weight held as a BSR matrix (``data (blocks, bs_r[, bs_c])``,
``indices (blocks,)``, ``indptr (rows / bs_r + 1,)``) whose ``N`` rows are the output channels. With a 1x1 kernel
the columns are the ``K`` input channels and the convolution is, per pixel, the product of that matrix with the
pixel's channel vector: block row ``r`` of output channels sums, over its blocks ``e`` in ``indptr[r] ..
indptr[r + 1]``, ``data[e] @ x[bs_c * indices[e] : ... + bs_c]``. With a 3x3 kernel (TVM's x86 ``spconv2d_3x3_*``)
the columns are the ``9 K`` entries of the kernel window, padded by 1 so the output keeps the input's size: column
``(kh * 3 + kw) * K + c`` for NHWC (the flattened HWIO kernel), ``c * 9 + kh * 3 + kw`` for NCHW (OIHW). A 2-D
``data`` is ``bs_c = 1``.

``sparse_transpose`` transposes a square CSR matrix by counting sort, sequentially (an ``te.extern`` of an
``ir_builder`` program): count the entries of each column, turn the counts into row starts, then place each entry
at its column's next free slot, scanning rows in order so each transposed row keeps its columns sorted.
"""

from ... import te
from ...error import OpAttributeInvalid
from ...tir import ir_builder
from ...tir import op as _op
from ..array_more import sparse_add
from ..array_more import sparse_dense as _csr_dense
from ..utils import get_const_tuple

__all__ = ["sparse_add", "sparse_conv2d", "sparse_dense", "sparse_transpose"]


def _bsr(weight_data, weight_indptr):
    shape = get_const_tuple(weight_data.shape)
    if len(shape) not in (2, 3):
        raise OpAttributeInvalid(f"topi.nn.sparse_conv2d: the BSR weight data {shape} must be (blocks, bs_r) or "
                                 f"(blocks, bs_r, bs_c)")
    bs_r, bs_c = shape[1], shape[2] if len(shape) == 3 else 1
    return bs_r, bs_c, get_const_tuple(weight_indptr.shape)[0] - 1


def _index(value):
    """An index read from a sparse structure, widened to int32 (int64 kept) so loop extents and offsets have an
    index dtype whatever the structure's integer dtype."""
    return value if value.dtype in ("int32", "int64") else _op.cast(value, "int32")


def _block_value(weight_data, e, j, c):
    return weight_data[e, j, c] if len(weight_data.shape) == 3 else weight_data[e, j]


def sparse_conv2d(dense_data, sparse_data, sparse_indices, sparse_indptr, layout="NHWC", kernel_size=1):
    """Convolution of ``dense_data`` with a BSR weight (see the module docstring).

    Parameters
    ----------
    dense_data : te.Tensor
        ``(M, H, W, K)`` for NHWC, ``(M, K, H, W)`` for NCHW.
    sparse_data : te.Tensor
        ``(blocks, bs_r)`` or ``(blocks, bs_r, bs_c)``.
    sparse_indices, sparse_indptr : te.Tensor
        The block columns and the block-row starts (``(N / bs_r + 1,)``).
    layout : str
        NHWC or NCHW.
    kernel_size : int or pair of int
        1 or 3 (square).

    Returns
    -------
    te.Tensor
        ``(M, H, W, N)`` for NHWC, ``(M, N, H, W)`` for NCHW.
    """
    if not isinstance(kernel_size, int):
        sizes = tuple(int(k) for k in kernel_size)
        if len(set(sizes)) != 1:
            raise OpAttributeInvalid(f"topi.nn.sparse_conv2d: kernel_size {sizes} must be square")
        kernel_size = sizes[0]
    if kernel_size not in (1, 3) or layout not in ("NHWC", "NCHW"):
        raise OpAttributeInvalid(f"topi.nn.sparse_conv2d: kernel_size {kernel_size} and layout {layout} must be 1 "
                                 f"or 3 and NHWC or NCHW")
    bs_r, bs_c, block_rows = _bsr(sparse_data, sparse_indptr)
    if layout == "NHWC":
        m, h, w, k = dense_data.shape
    else:
        m, k, h, w = dense_data.shape

    def column(i, y, x, col):
        """The entry ``col`` of the flattened (window of) channels at pixel ``(y, x)``."""
        if kernel_size == 1:
            return dense_data[i, y, x, col] if layout == "NHWC" else dense_data[i, col, y, x]
        if layout == "NHWC":
            c, window = _op.floormod(col, k), _op.floordiv(col, k)
        else:
            c, window = _op.floordiv(col, 9), _op.floormod(col, 9)
        yy, xx = y + _op.floordiv(window, 3) - 1, x + _op.floormod(window, 3) - 1
        inside = _op.all(yy >= 0, yy < h, xx >= 0, xx < w)
        yc, xc = _op.maximum(_op.minimum(yy, h - 1), 0), _op.maximum(_op.minimum(xx, w - 1), 0)
        value = dense_data[i, yc, xc, c] if layout == "NHWC" else dense_data[i, c, yc, xc]
        return _op.select(inside, value, _op.const(0, dense_data.dtype))

    def block(i, y, x, row, j):
        start, end = _index(sparse_indptr[row]), _index(sparse_indptr[row + 1])
        e = te.reduce_axis((0, end - start), name="elem_idx")
        c = te.reduce_axis((0, bs_c), name="c")
        entry = start + e.var
        col = _index(sparse_indices[entry]) * bs_c + c.var
        return te.sum(_block_value(sparse_data, entry, j, c.var) * column(i, y, x, col), axis=[e, c])

    if layout == "NHWC":
        blocks = te.compute((m, h, w, block_rows, bs_r), block, name="sparse_conv2d_block",
                            tag="sparse_conv2d_sp_bsrmm_block")
        return te.compute((m, h, w, block_rows * bs_r), lambda i, y, x, n: blocks[
            i, y, x, _op.floordiv(n, bs_r), _op.floormod(n, bs_r)], name="sparse_conv2d", tag="sparse_conv2d_sp_bsrmm")
    blocks = te.compute((m, block_rows, bs_r, h, w), lambda i, row, j, y, x: block(i, y, x, row, j),
                        name="sparse_conv2d_block", tag="sparse_conv2d_sp_bsrmm_block")
    return te.compute((m, block_rows * bs_r, h, w), lambda i, n, y, x: blocks[
        i, _op.floordiv(n, bs_r), _op.floormod(n, bs_r), y, x], name="sparse_conv2d", tag="sparse_conv2d_sp_bsrmm")


def sparse_dense(dense_data, sparse_data, sparse_indices, sparse_indptr, sparse_lhs=False):
    """``dense_data @ W.T`` (``W @ dense_data.T`` when ``sparse_lhs``) of the sparse matrix ``W``: CSR when
    ``sparse_data`` is 1-D, BSR when it is ``(blocks, bs_r, bs_c)`` (see the module docstring).

    Returns
    -------
    te.Tensor
        ``(M, N)``, or ``(N, M)`` when ``sparse_lhs``, for ``dense_data (M, K)`` and ``W (N, K)``.
    """
    if len(sparse_data.shape) == 1:
        return _csr_dense(dense_data, sparse_data, sparse_indices, sparse_indptr, sparse_lhs)
    if len(sparse_data.shape) != 3:
        raise OpAttributeInvalid(f"topi.nn.sparse_dense: sparse_data {get_const_tuple(sparse_data.shape)} must be "
                                 f"1-D (CSR) or (blocks, bs_r, bs_c) (BSR)")
    _, bs_r, bs_c = get_const_tuple(sparse_data.shape)
    block_rows = get_const_tuple(sparse_indptr.shape)[0] - 1
    m = dense_data.shape[0]

    def block(i, row, j):
        start, end = _index(sparse_indptr[row]), _index(sparse_indptr[row + 1])
        e = te.reduce_axis((0, end - start), name="elem_idx")
        c = te.reduce_axis((0, bs_c), name="c")
        entry = start + e.var
        return te.sum(sparse_data[entry, j, c.var] * dense_data[i, _index(sparse_indices[entry]) * bs_c + c.var],
                      axis=[e, c])

    blocks = te.compute((m, block_rows, bs_r), block, name="sparse_dense_block", tag="sparse_dense_bsrmm_block")
    if sparse_lhs:
        return te.compute((block_rows * bs_r, m), lambda n, i: blocks[i, _op.floordiv(n, bs_r), _op.floormod(
            n, bs_r)], name="sparse_dense", tag="sparse_dense_bsrmm")
    return te.compute((m, block_rows * bs_r), lambda i, n: blocks[i, _op.floordiv(n, bs_r), _op.floormod(
        n, bs_r)], name="sparse_dense", tag="sparse_dense_bsrmm")


def _csr_transpose_ir(data, indices, indptr, out_data, out_indices, out_indptr):
    """The counting-sort program (module docstring) over the six buffers."""
    ib = ir_builder.create()
    n, nnz, idx, row_dtype = indptr.shape[0] - 1, data.shape[0], out_indptr.dtype, out_indices.dtype
    data, indices, indptr = (ib.buffer_ptr(b) for b in (data, indices, indptr))
    out_data, out_indices, out_indptr = (ib.buffer_ptr(b) for b in (out_data, out_indices, out_indptr))
    with ib.for_range(0, n + 1, name="col") as col:
        out_indptr[col] = _op.const(0, idx)
    with ib.for_range(0, nnz, name="e") as e:  # count each column's entries, one slot ahead
        out_indptr[_index(indices[e]) + 1] = out_indptr[_index(indices[e]) + 1] + _op.const(1, idx)
    with ib.for_range(0, n, name="col") as col:  # the starts: a running sum
        out_indptr[col + 1] = out_indptr[col + 1] + out_indptr[col]
    # place the entries, advancing each column's start; the starts are then the ends, shifted back below
    with ib.for_range(0, n, name="row") as row:
        with ib.for_range(0, _index(indptr[row + 1]) - _index(indptr[row]), name="k") as k:
            e = _index(indptr[row]) + k
            col = _index(indices[e])
            dest = _index(out_indptr[col])
            out_indices[dest] = _op.cast(row, row_dtype)
            out_data[dest] = data[e]
            out_indptr[col] = _op.cast(dest + 1, idx)
    with ib.for_range(0, n, name="col") as col:
        out_indptr[n - col] = out_indptr[n - 1 - col]
    out_indptr[0] = _op.const(0, idx)
    return ib.get()


def sparse_transpose(sparse_data, sparse_indices, sparse_indptr):
    """The transpose of a square CSR matrix, as CSR (see the module docstring).

    Parameters
    ----------
    sparse_data : te.Tensor
        ``(nnz,)``.
    sparse_indices : te.Tensor
        ``(nnz,)`` integer columns.
    sparse_indptr : te.Tensor
        ``(n + 1,)`` integer row starts.

    Returns
    -------
    list of te.Tensor
        ``[data, indices, indptr]`` of the transpose, of the input's shapes and dtypes.
    """
    for t, what in ((sparse_data, "data"), (sparse_indices, "indices"), (sparse_indptr, "indptr")):
        if len(t.shape) != 1:
            raise OpAttributeInvalid(f"topi.nn.sparse_transpose: the CSR {what} {get_const_tuple(t.shape)} must be "
                                     f"1-D")
    shapes = [sparse_data.shape, sparse_indices.shape, sparse_indptr.shape]
    return list(te.extern(shapes, [sparse_data, sparse_indices, sparse_indptr],
                          lambda ins, outs: _csr_transpose_ir(*ins, *outs), name="sparse_transpose",
                          dtype=[sparse_data.dtype, sparse_indices.dtype, sparse_indptr.dtype],
                          tag="sparse_transpose_csr"))
