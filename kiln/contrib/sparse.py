"""Sparse arrays and placeholders in CSR form (TVM's ``tvm.contrib.sparse``), the arguments of the
:mod:`kiln.topi.sparse` computes.

A :class:`CSRNDArray` holds three NDArrays: ``data`` (the stored values, row by row), ``indices`` (their columns)
and ``indptr`` (where each row starts, one more entry than rows). A :class:`CSRPlaceholderOp` holds the three
matching TE placeholders, ``nonzeros`` long (a size variable for a count known only at run time).
"""

import numpy as np

from .. import te
from ..error import ArgumentTypeError, OpAttributeInvalid
from ..runtime import ndarray as nd
from ..tir.expr import PrimExpr

__all__ = ["CSRNDArray", "CSRPlaceholderOp", "SparsePlaceholderOp", "array", "placeholder"]

itype = "int32"


class CSRNDArray:
    """A matrix in CSR form.

    Parameters
    ----------
    arg1 : numpy.ndarray or tuple
        A dense 2-D array (its nonzero entries are stored, int32 indices), or ``(data, indices, indptr)`` NDArrays.
    device : Device, optional
    shape : tuple of int, optional
        The matrix shape (needed with a tuple).
    """

    def __init__(self, arg1, device=None, shape=None):
        if isinstance(arg1, tuple):
            if len(arg1) != 3:
                raise OpAttributeInvalid(f"CSRNDArray: a tuple must be (data, indices, indptr), got {len(arg1)} items")
            self.data, self.indices, self.indptr = arg1
            self.shape = tuple(shape) if shape is not None else None
        elif isinstance(arg1, np.ndarray):
            if arg1.ndim != 2:
                raise OpAttributeInvalid(f"CSRNDArray: the dense array must be 2-D, got shape {arg1.shape}")
            rows, cols = np.nonzero(arg1)
            self.data = nd.array(arg1[rows, cols], device)
            self.indices = nd.array(cols.astype(itype), device)
            counts = np.count_nonzero(arg1, axis=1)
            self.indptr = nd.array(np.concatenate([[0], np.cumsum(counts)]).astype(itype), device)
            self.shape = arg1.shape
        else:
            raise ArgumentTypeError(f"CSRNDArray: expected a numpy array or a (data, indices, indptr) tuple, got "
                                    f"{type(arg1).__name__}")
        if self.shape is None:
            raise OpAttributeInvalid("CSRNDArray: the shape of a matrix given as a tuple is required")
        for what in ("indices", "indptr"):
            if str(getattr(self, what).dtype) not in ("int32", "int64"):
                raise OpAttributeInvalid(f"CSRNDArray: {what} must be int32 or int64, got "
                                         f"{getattr(self, what).dtype}")
        self.stype = "csr"
        self.dtype = self.data.dtype

    def numpy(self):
        """The dense matrix."""
        full = np.zeros(self.shape, self.dtype)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr.numpy().astype("int64")))
        full[rows, self.indices.numpy().astype("int64")] = self.data.numpy()
        return full

    def asnumpy(self):
        """The dense matrix (TVM's older name of :meth:`numpy`)."""
        return self.numpy()


def array(source_array, device=None, shape=None, stype="csr"):
    """A sparse array of ``source_array`` (a dense numpy array or a ``(data, indices, indptr)`` tuple); only
    ``stype="csr"`` exists."""
    if stype != "csr":
        raise OpAttributeInvalid(f"contrib.sparse.array: stype={stype!r} is not supported; only csr is")
    return CSRNDArray(source_array, device=device, shape=shape)


class SparsePlaceholderOp:
    """The shape, dtype and name of a sparse placeholder, whatever its storage type."""

    def __init__(self, shape, nonzeros, dtype, name):
        self.shape = shape
        self.dtype = dtype
        self.name = name
        self.stype = "unknown"


class CSRPlaceholderOp(SparsePlaceholderOp):
    """The placeholders of a CSR matrix: ``data`` (``nonzeros`` values of ``dtype``), ``indices`` (int32, as long)
    and ``indptr`` (int32, rows + 1)."""

    def __init__(self, shape, nonzeros, dtype, name):
        super().__init__(shape, nonzeros, dtype, name)
        self.stype = "csr"
        self.data = te.placeholder((nonzeros,), dtype=dtype, name=name + "_data")
        self.indices = te.placeholder((nonzeros,), dtype=itype, name=name + "_indices")
        self.indptr = te.placeholder((self.shape[0] + 1,), dtype=itype, name=name + "_indptr")


def placeholder(shape, nonzeros=None, dtype=None, name="placeholder", stype=None):
    """An empty sparse matrix of ``shape`` with ``nonzeros`` stored values (TVM's ``contrib.sparse.placeholder``).

    Parameters
    ----------
    shape : tuple of int or PrimExpr
    nonzeros : int or PrimExpr, optional
        The number of stored values (0 by default).
    dtype : str, optional
        float32 by default.
    name : str
    stype : str, optional
        Only ``csr``.

    Returns
    -------
    CSRPlaceholderOp
    """
    shape = (shape,) if isinstance(shape, PrimExpr) else tuple(shape)
    if (stype or "csr") != "csr":
        raise OpAttributeInvalid(f"contrib.sparse.placeholder: stype={stype!r} is not supported; only csr is")
    return CSRPlaceholderOp(shape, 0 if nonzeros is None else nonzeros, dtype or "float32", name)
