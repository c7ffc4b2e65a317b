"""Matrix products (TVM's ``topi/nn/dense.py`` and ``batch_matmul.py``): ``dense``, ``matmul``, ``batch_matmul``.

Each is one reduction over ``K`` with both operands cast to the accumulation dtype first (integers widen to
``out_dtype``; float16 accumulates in float32 and is cast back in an element-wise stage). These are the plain
computes; the x86 strategy (:mod:`kiln.topi.x86.dense`) replaces ``dense`` by packed or split-K forms.
"""

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import op as _op
from ..broadcast import broadcast_checks, broadcast_index, broadcast_shape
from ..utils import SHAPE_CHECKS, get_const_tuple, size_checks
from .conv2d import _acc_dtype, _finish

__all__ = ["dense", "dense_pack", "crop_columns", "matmul", "batch_matmul"]


def dense(data, weight, bias=None, out_dtype=None):
    """``data @ weight.T (+ bias)`` with ``data`` ``(..., K)`` and ``weight`` ``(units, K)``.

    Returns
    -------
    out : te.Tensor
        ``(..., units)``, tagged ``dense``.
    """
    out_dtype = out_dtype or data.dtype
    dshape, wshape = get_const_tuple(data.shape), get_const_tuple(weight.shape)
    if len(wshape) != 2 or not dshape:
        raise OpAttributeInvalid(f"topi.dense: data {dshape} and weight {wshape} must be (..., K) and (units, K)")
    checks = size_checks([(dshape[-1], wshape[1])], f"topi.dense: the reduction of data {dshape} and weight {wshape}")
    acc = _acc_dtype(out_dtype)
    k = reduce_axis((0, wshape[1]), name="k")
    out = compute(dshape[:-1] + (wshape[0],),
                  lambda *i: _te_sum(_op.cast(data(*i[:-1], k), acc) * _op.cast(weight[i[-1], k], acc), axis=k),
                  name="T_dense", tag="dense", attrs={SHAPE_CHECKS: tuple(checks)} if checks else None)
    if bias is not None:
        out = compute(out.shape, lambda *i: out(*i) + _op.cast(bias[i[-1]], acc), name="T_bias_add",
                      tag="broadcast")
    return _finish(out, out_dtype, "T_dense")


def dense_pack(data, packed_weight, units=None, out_dtype=None):
    """``data @ weight.T`` with ``data`` ``(..., K)`` and the weight packed in column blocks, ``packed_weight[j // b,
    k, j % b] = weight[j, k]`` (shape ``(ceil(units / b), K, b)``), so a block of ``b`` outputs reads ``b``
    consecutive weights at each ``k`` (TVM's ``contrib_dense_pack``). ``units`` (default: every packed column) may
    leave the last block's padding columns out.

    Returns
    -------
    out : te.Tensor
        ``(..., units)``, tagged ``dense_pack``, its ``panel`` attribute the block width ``b``.
    """
    out_dtype = out_dtype or data.dtype
    dshape, wshape = get_const_tuple(data.shape), get_const_tuple(packed_weight.shape)
    if len(wshape) != 3 or not dshape or dshape[-1] != wshape[1]:
        raise OpAttributeInvalid(f"topi.dense_pack: data {dshape} and packed weight {wshape} must be (..., K) and "
                                 "(units / b, K, b)")
    block = wshape[2]
    units = wshape[0] * block if units is None else units
    if not (wshape[0] - 1) * block < units <= wshape[0] * block:
        raise OpAttributeInvalid(f"topi.dense_pack: {units} units do not fill the last of the {wshape[0]} blocks "
                                 f"of {block} columns")
    acc = _acc_dtype(out_dtype)
    k = reduce_axis((0, wshape[1]), name="k")
    out = compute(dshape[:-1] + (wshape[0] * block,),
                  lambda *i: _te_sum(_op.cast(data(*i[:-1], k), acc)
                                     * _op.cast(packed_weight[i[-1] // block, k, i[-1] % block], acc), axis=k),
                  name="T_dense_pack", tag="dense_pack", attrs={"panel": block})
    return _finish(crop_columns(out, units), out_dtype, "T_dense")


def crop_columns(out, columns):
    """``out[..., :columns]``: a product computed over whole panels, its padding columns left out (``out`` itself
    when there are none). The product keeps whole panels so that its tiles, computed in registers, need no bounds
    check; only the write-out of the last panel is guarded."""
    shape = get_const_tuple(out.shape)
    if shape[-1] == columns:
        return out
    return compute(shape[:-1] + (columns,), lambda *i: out(*i), name=f"{out.op.name}_crop", tag="injective,crop")


def matmul(tensor_a, tensor_b, bias=None, out_dtype=None, transpose_a=False, transpose_b=False):
    """``tensor_a @ tensor_b (+ bias)`` with optional transposes (of ``tensor_a``'s last two axes; ``tensor_b`` is
    2-D); TVM's signature.

    Returns
    -------
    out : te.Tensor
        Tagged ``matmul``.
    """
    out_dtype = out_dtype or tensor_a.dtype
    ashape, bshape = get_const_tuple(tensor_a.shape), get_const_tuple(tensor_b.shape)
    if len(bshape) != 2 or not ashape or (transpose_a and len(ashape) < 2):
        raise OpAttributeInvalid(f"topi.matmul: shapes {ashape} and {bshape} (transpose_a={transpose_a}) do not fit")
    k_a = ashape[-2] if transpose_a else ashape[-1]
    k_b, n = (bshape[1], bshape[0]) if transpose_b else bshape
    if k_a != k_b and isinstance(k_a, int) and isinstance(k_b, int):
        raise OpAttributeInvalid(f"topi.matmul: reduction sizes {k_a} and {k_b} of {ashape} and {bshape} differ")
    # one size known only at run time: the relation has checked it against the other (the static one is the extent)
    rows = ashape[:-2] + (ashape[-1],) if transpose_a else ashape[:-1]
    acc = _acc_dtype(out_dtype)
    k = reduce_axis((0, k_a if isinstance(k_a, int) or not isinstance(k_b, int) else k_b), name="k")

    def fcompute(*i):
        lead, j = i[:-1], i[-1]
        a = tensor_a(*lead[:-1], k, lead[-1]) if transpose_a else tensor_a(*lead, k)
        b = tensor_b[j, k] if transpose_b else tensor_b[k, j]
        return _te_sum(_op.cast(a, acc) * _op.cast(b, acc), axis=k)

    out = compute(rows + (n,), fcompute, name="T_matmul", tag="matmul")
    if bias is not None:
        out = compute(out.shape, lambda *i: out(*i) + _op.cast(bias[i[-1]], acc), name="T_bias_add",
                      tag="broadcast")
    return _finish(out, out_dtype, "T_matmul")


def batch_matmul(x, y, oshape=None, out_dtype=None, transpose_a=False, transpose_b=True):
    """Batched ``x @ y``: ``(B, M, K) x (B, K, N)``, either operand transposed, a batch of 1 broadcast (TVM's
    signature; ``oshape`` is accepted and checked against the computed shape).

    Returns
    -------
    out : te.Tensor
        ``(B, M, N)``, tagged ``batch_matmul``.
    """
    out_dtype = out_dtype or x.dtype
    xs, ys = get_const_tuple(x.shape), get_const_tuple(y.shape)
    if len(xs) != 3 or len(ys) != 3:
        raise OpAttributeInvalid(f"topi.batch_matmul: operands must have rank 3, got {xs} and {ys}")
    bx, m, kx = (xs[0], xs[2], xs[1]) if transpose_a else xs
    by, n, ky = ys if transpose_b else (ys[0], ys[2], ys[1])
    static = all(isinstance(d, int) for d in (bx, by, kx, ky))
    if static and (kx != ky or (bx != by and 1 not in (bx, by))):
        raise OpAttributeInvalid(f"topi.batch_matmul: shapes {xs} and {ys} do not fit")
    (batch,) = broadcast_shape((bx,), (by,), what="topi.batch_matmul")
    checks = size_checks([(kx, ky)], "topi.batch_matmul: the reduction")
    checks += broadcast_checks([(bx,), (by,)], (batch,))
    acc = _acc_dtype(out_dtype)
    k = reduce_axis((0, kx), name="k")

    def fcompute(b, i, j):
        bxi, byi = broadcast_index(bx, batch, b), broadcast_index(by, batch, b)
        a = x[bxi, k, i] if transpose_a else x[bxi, i, k]
        c = y[byi, j, k] if transpose_b else y[byi, k, j]
        return _te_sum(_op.cast(a, acc) * _op.cast(c, acc), axis=k)

    if oshape is not None and static and tuple(int(d) for d in oshape) != (batch, m, n):
        raise OpAttributeInvalid(f"topi.batch_matmul: oshape {tuple(oshape)} is not {(batch, m, n)}")
    out = compute((batch, m, n), fcompute, name="T_batch_matmul", tag="batch_matmul",
                  attrs={SHAPE_CHECKS: tuple(checks)} if checks else None)
    return _finish(out, out_dtype, "T_batch_matmul")
