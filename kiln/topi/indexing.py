"""Gathers by index tensors (TVM's ``topi.gather``, ``gather_nd``, ``one_hot``), all injective.

* ``gather``: ``out[i] = data[i with i[axis] replaced by indices[i]]`` (numpy's ``take_along_axis``);
* ``gather_nd``: with ``indices`` of shape ``(M, Y0, ..., Yk)``, ``out[y, x] = data[y[:b], indices[0, y], ...,
  indices[M - 1, y], x]`` (the first ``batch_dims`` = ``b`` axes of data are indexed by the matching output axes);
* ``one_hot``: ``on_value`` where the new ``depth`` axis (at ``axis``) equals the index, ``off_value`` elsewhere.

Indices must lie in range, as TVM requires (the reference interpreter checks it).
"""

from ..te.operation import compute
from ..tir import expr as E
from ..tir import op as _op
from . import tag as _tag
from .elemwise import cast_expr
from .utils import get_const_tuple, normalize_axis

__all__ = ["gather", "gather_nd", "one_hot"]


def _index(v):
    return v if v.dtype in ("int32", "int64") else _op.cast(v, "int32")


def gather(data, axis, indices):
    """Gather ``data`` along ``axis`` at ``indices`` (of the data's rank).

    Returns
    -------
    out : te.Tensor
        Of ``indices``' shape.
    """
    axis = normalize_axis(axis, len(data.shape), "gather axis")
    return compute(indices.shape, lambda *i: data(*(i[:axis] + (_index(indices(*i)),) + i[axis + 1:])),
                   name="T_gather", tag=_tag.INJECTIVE)


def gather_nd(data, indices, batch_dims=0):
    """Gather slices of ``data`` at the index tuples along the first axis of ``indices``.

    Returns
    -------
    out : te.Tensor
        ``indices.shape[1:] + data.shape[M + batch_dims:]``.
    """
    ishape, dshape = get_const_tuple(indices.shape), get_const_tuple(data.shape)
    m, b = ishape[0], int(batch_dims)
    out_shape = ishape[1:] + dshape[m + b:]
    ny = len(ishape) - 1

    def fcompute(*i):
        y, x = i[:ny], i[ny:]
        return data(*(tuple(y[:b]) + tuple(_index(indices(k, *y)) for k in range(m)) + tuple(x)))

    return compute(out_shape, fcompute, name="T_gather_nd", tag=_tag.INJECTIVE)


def one_hot(indices, on_value, off_value, depth, axis, dtype):
    """One-hot encoding of integer ``indices`` with the new ``depth`` axis at ``axis`` (``-1`` appends).

    Parameters
    ----------
    indices : te.Tensor
    on_value, off_value : PrimExpr or number
        Converted to ``dtype``.
    depth : int or PrimExpr
        The size of the new axis (a size variable for ``dyn.one_hot``).
    axis : int
    dtype : str

    Returns
    -------
    out : te.Tensor
    """
    ishape = get_const_tuple(indices.shape)
    axis = axis if axis >= 0 else axis + len(ishape) + 1
    out_shape = ishape[:axis] + (depth if isinstance(depth, E.PrimExpr) else int(depth),) + ishape[axis:]
    on = cast_expr(_op.const(on_value) if isinstance(on_value, int | float) else on_value, dtype)
    off = cast_expr(_op.const(off_value) if isinstance(off_value, int | float) else off_value, dtype)

    def fcompute(*i):
        idx = indices(*(i[:axis] + i[axis + 1:]))
        return _op.select(_op.equal(_op.cast(idx, "int64"), _op.cast(i[axis], "int64")), on, off)

    return compute(out_shape, fcompute, name="T_one_hot", tag=_tag.INJECTIVE)
