"""``dilate``, ``space_to_batch_nd``, ``batch_to_space_nd`` and the losses ``cross_entropy``,
``cross_entropy_with_logits``, ``nll_loss`` (TVM's ``topi.nn``).

The batch/space moves are TensorFlow's: pad, split each spatial axis into ``(size / block, block)``, move the block
axes in front of the batch and merge them into it (and the reverse, then crop).
"""

import math

from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import intrin as _intrin
from ...tir import op as _op
from .. import tag as _tag
from ..transform import reshape, strided_slice, transpose
from ..utils import SHAPE_CHECKS, get_const_tuple, size_checks
from .pad import pad

__all__ = ["dilate", "space_to_batch_nd", "batch_to_space_nd", "cross_entropy", "nll_loss"]


def dilate(data, strides, dilation_value=0.0):
    """Insert ``strides[i] - 1`` elements of ``dilation_value`` between neighbours along each axis ``i``."""
    shape = get_const_tuple(data.shape)
    out_shape = tuple((d - 1) * s + 1 for d, s in zip(shape, strides, strict=True))
    fill = _op.const(dilation_value, data.dtype)

    def fcompute(*i):
        on = [_op.equal(_op.floormod(x, s), 0) for x, s in zip(i, strides, strict=True) if s > 1]
        value = data(*[x // s if s > 1 else x for x, s in zip(i, strides, strict=True)])
        return _op.select(_op.all(*on), value, fill) if on else value

    return compute(out_shape, fcompute, name="T_dilate", tag=_tag.INJECTIVE)


def space_to_batch_nd(data, block_shape, paddings, pad_value=0.0):
    """TensorFlow's ``space_to_batch_nd`` over the axes ``1..M`` (``M = len(block_shape)``)."""
    shape = get_const_tuple(data.shape)
    m, rest = len(block_shape), shape[1 + len(block_shape):]
    before = [0] + [p[0] for p in paddings] + [0] * len(rest)
    after = [0] + [p[1] for p in paddings] + [0] * len(rest)
    padded = pad(data, before, after, pad_value) if any(before + after) else data
    sizes = [shape[1 + k] + paddings[k][0] + paddings[k][1] for k in range(m)]
    split = [shape[0]] + [v for k in range(m) for v in (sizes[k] // block_shape[k], block_shape[k])] + list(rest)
    x = reshape(padded, split)
    perm = [2 + 2 * k for k in range(m)] + [0] + [1 + 2 * k for k in range(m)] + [1 + 2 * m + r
                                                                                  for r in range(len(rest))]
    x = transpose(x, perm)
    return reshape(x, [shape[0] * math.prod(block_shape)] + [sizes[k] // block_shape[k] for k in range(m)]
                   + list(rest))


def batch_to_space_nd(data, block_shape, crops):
    """TensorFlow's ``batch_to_space_nd`` over the axes ``1..M``."""
    shape = get_const_tuple(data.shape)
    m = len(block_shape)
    rest = shape[1 + m:]
    batch = shape[0] // math.prod(block_shape)
    x = reshape(data, list(block_shape) + [batch] + list(shape[1:]))
    perm = [m] + [v for k in range(m) for v in (m + 1 + k, k)] + [2 * m + 1 + r for r in range(len(rest))]
    x = reshape(transpose(x, perm), [batch] + [shape[1 + k] * block_shape[k] for k in range(m)] + list(rest))
    # the crops slice the spatial axes only, so a batch known only at run time is never a slice bound
    begin = [c[0] for c in crops]
    end = [shape[1 + k] * block_shape[k] - crops[k][1] for k in range(m)]
    return strided_slice(x, begin, end, axes=list(range(1, m + 1)))


def cross_entropy(predictions, targets, with_logits=False):
    """``-sum(log(predictions) * targets) / batch`` (``predictions * targets`` when ``with_logits``)."""
    shape = get_const_tuple(predictions.shape)
    work = "float32" if predictions.dtype == "float16" else predictions.dtype

    def term(idx):
        p = _op.cast(predictions(*idx), work)
        return (p if with_logits else _intrin.log(p)) * _op.cast(targets(*idx), work)

    def ftotal():
        rk = [reduce_axis((0, d), name=f"k{a}") for a, d in enumerate(shape)]
        return _te_sum(term([r.var for r in rk]), axis=rk)

    total = compute((), ftotal, name="T_cross_entropy_sum", tag=_tag.COMM_REDUCE)
    return compute((), lambda: _op.cast(_op.const(-1.0 / shape[0], work) * total(), predictions.dtype),
                   name="T_cross_entropy", tag=_tag.ELEMWISE)


def nll_loss(predictions, targets, weights, reduction="mean", ignore_index=-100):
    """Negative log likelihood loss (TVM's ``topi.nn.nll_loss``)."""
    tshape = get_const_tuple(targets.shape)
    pshape = get_const_tuple(predictions.shape)
    work = "float32" if predictions.dtype == "float16" else predictions.dtype
    checks = size_checks(list(zip(pshape[:1] + pshape[2:], tshape, strict=True)),
                         "nn.nll_loss: the batch (and spatial) sizes of predictions and targets")
    checks += size_checks([(w, pshape[1]) for w in get_const_tuple(weights.shape)],
                          "nn.nll_loss: the number of weights and of classes")
    attrs = {SHAPE_CHECKS: tuple(checks)} if checks else None

    def pieces(idx):
        t = _op.cast(targets(*idx), "int32")
        keep = _op.not_equal(t, _op.const(ignore_index, "int32"))
        safe = _op.select(keep, t, _op.const(0, "int32"))
        w = _op.select(keep, _op.cast(weights(safe), work), _op.const(0.0, work))
        return -_op.cast(predictions(idx[0], safe, *idx[1:]), work) * w, w

    if reduction == "none":
        return compute(tshape, lambda *i: _op.cast(pieces(i)[0], predictions.dtype), name="T_nll_loss",
                       tag=_tag.INJECTIVE, attrs=attrs)

    def fsum(k):
        def f():
            rk = [reduce_axis((0, d), name=f"k{a}") for a, d in enumerate(tshape)]
            return _te_sum(pieces([r.var for r in rk])[k], axis=rk)

        return f

    loss = compute((), fsum(0), name="T_nll_loss_sum", tag=_tag.COMM_REDUCE, attrs=attrs)
    if reduction == "sum":
        return compute((), lambda: _op.cast(loss(), predictions.dtype), name="T_nll_loss", tag=_tag.ELEMWISE)
    weight = compute((), fsum(1), name="T_nll_loss_weight", tag=_tag.COMM_REDUCE)
    return compute((), lambda: _op.cast(loss() / weight(), predictions.dtype), name="T_nll_loss", tag=_tag.ELEMWISE)
