"""Element-wise neural-network operators (TVM's ``topi/nn/elemwise.py``): ``relu``, ``leaky_relu``, ``bias_add``,
``dropout`` (inference: the data and a mask of ones) and ``batch_flatten``."""

from ...te.operation import compute
from ...tir import op as _op
from .. import tag as _tag
from ..elemwise import elemwise, full_like
from ..transform import flatten
from ..utils import normalize_axis

__all__ = ["relu", "leaky_relu", "bias_add", "dropout", "batch_flatten"]


def relu(x):
    """``max(x, 0)``."""
    return elemwise(x, lambda v: _op.maximum(v, _op.const(0, v.dtype)), name="T_relu")


def leaky_relu(x, alpha):
    """``x`` where positive, else ``alpha * x`` (``alpha`` converted to ``x``'s dtype)."""
    def fexpr(v):
        return _op.select(v > _op.const(0, v.dtype), v, v * _op.const(float(alpha), v.dtype))

    return elemwise(x, fexpr, name="T_leaky_relu")


def bias_add(data, bias, axis=1):
    """``data + bias`` with the 1-D ``bias`` along ``axis``.

    Returns
    -------
    out : te.Tensor
        Tagged ``broadcast``.
    """
    axis = normalize_axis(axis, len(data.shape), "bias_add axis")
    return compute(data.shape, lambda *i: data(*i) + bias[i[axis]], name="T_bias_add", tag=_tag.BROADCAST)


def dropout(data, rate=0.5):
    """Inference dropout: ``[data, ones]`` (the data copied, and the mask)."""
    del rate  # dropout is the identity at inference
    return [elemwise(data, lambda v: v, name="T_dropout"), full_like(data, 1)]


def batch_flatten(data):
    """Flatten every axis but the first."""
    return flatten(data)
