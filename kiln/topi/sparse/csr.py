"""Products with a CSR matrix (TVM's ``topi.sparse.csrmv``, ``csrmm`` and ``dense``), as reductions over each
row's stored entries: entry ``k`` of row ``r`` (``indptr[r] <= k < indptr[r + 1]``) holds ``data[k]`` in column
``indices[k]``. The matrix is a :class:`kiln.contrib.sparse.CSRPlaceholderOp` (its ``data``, ``indices`` and
``indptr`` placeholders), whose row count may be a size variable the kernel takes as an argument."""

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import op as _op

__all__ = ["csrmm", "csrmv", "dense"]


def _is_csr(x) -> bool:
    return getattr(x, "stype", None) == "csr"


def _row_sum(a, r, term):
    """``sum over the stored entries k of row r of term(k, column)``."""
    start = _op.cast(a.indptr[r], "int32")
    k = reduce_axis((0, _op.cast(a.indptr[r + 1], "int32") - start), name="k")
    pos = start + k.var
    return _te_sum(term(pos, _op.cast(a.indices[pos], "int32")), axis=[k])


def csrmm(a, b, c=None):
    """``a @ b (+ c[:, None])`` of the CSR matrix ``a (m, k)``, a dense ``b (k, n)`` and an optional ``c (m,)``.

    Returns
    -------
    te.Tensor
        ``(m, n)`` of ``a``'s dtype.
    """
    if not _is_csr(a) or len(b.shape) != 2:
        raise OpAttributeInvalid("topi.sparse.csrmm: a must be a CSR placeholder and b 2-D")
    m, n = a.shape[0], b.shape[1]
    product = compute((m, n), lambda r, j: _row_sum(a, r, lambda pos, col: a.data[pos] * b[col, j]),
                      name="csrmm", tag="csrmm")
    if c is None:
        return product
    return compute((m, n), lambda r, j: product[r, j] + c[r], name="csrmm_bias", tag="injective")


def csrmv(a, x, y=None):
    """``a @ x (+ y[:, None])`` of the CSR matrix ``a (m, k)``, a column ``x (k, 1)`` and an optional ``y (m,)``.

    Returns
    -------
    te.Tensor
        ``(m, 1)``.
    """
    if len(x.shape) != 2 or (isinstance(x.shape[1], int) and x.shape[1] != 1):
        raise OpAttributeInvalid("topi.sparse.csrmv: x must be a (k, 1) column")
    return csrmm(a, x, y)


def dense(data, weight, bias=None):
    """A dense layer ``data @ weight.T (+ bias)`` where ``data (m, k)`` or ``weight (n, k)`` is a CSR matrix.

    Returns
    -------
    te.Tensor
        ``(m, n)``.
    """
    if _is_csr(data) == _is_csr(weight):
        raise OpAttributeInvalid("topi.sparse.dense: exactly one of data and weight must be a CSR placeholder")
    m, n = data.shape[0], weight.shape[0]
    if _is_csr(data):  # each output row sums data's row against the matching weight row
        product = compute((m, n), lambda i, j: _row_sum(data, i, lambda pos, col: data.data[pos] * weight[j, col]),
                          name="dense_si", tag="dense_si")
    else:  # each output column sums weight's row against the data row
        product = compute((m, n), lambda i, j: _row_sum(weight, j, lambda pos, col: data[i, col] *
                                                        weight.data[pos]), name="dense_sw", tag="dense_sw")
    if bias is None:
        return product
    return compute((m, n), lambda i, j: product[i, j] + bias[j], name="dense_bias", tag="injective")
