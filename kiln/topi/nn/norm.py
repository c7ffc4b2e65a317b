"""Normalizations (TVM's ``topi/nn/batch_norm.py``, ``layer_norm.py``, ``local_response_norm.py``):
``batch_norm`` (inference), ``layer_norm`` and ``lrn``.

* ``batch_norm``: ``(x - mean) / sqrt(var + eps) * gamma + beta`` with the per-channel vectors read along ``axis``
  (one broadcast stage), plus copies of ``moving_mean`` and ``moving_var`` as the second and third outputs, as
  Relay's three-output operator returns them.
* ``layer_norm``: a sum stage gives the mean along ``axis``, a second the variance of the centered values (the
  reference's two-pass formula), then one element-wise stage normalizes, scales and shifts.
* ``lrn``: the input padded by ``size // 2`` zeros on both sides of ``axis``, a sum of squares over ``size``
  neighbours starting ``size // 2`` before each position, then ``x / (bias + alpha * sum / size) ** beta`` (the
  power through square roots when ``beta`` is a whole number of quarters).
"""

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import intrin as _intrin
from ...tir import op as _op
from .. import tag as _tag
from ..utils import get_const_tuple, normalize_axis
from .pad import pad

__all__ = ["batch_norm", "layer_norm", "lrn"]


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, center=True, scale=True):
    """Inference batch normalization.

    Returns
    -------
    out, mean, var : te.Tensor
        The normalized data (tagged ``broadcast``) and copies of ``moving_mean`` / ``moving_var``.
    """
    ndim = len(data.shape)
    axis = normalize_axis(axis, ndim, "batch_norm axis")
    eps = _op.const(float(epsilon), data.dtype)

    def fcompute(*i):
        c = i[axis]
        out = (data(*i) - moving_mean[c]) / _intrin.sqrt(moving_var[c] + eps)
        if scale:
            out = out * gamma[c]
        if center:
            out = out + beta[c]
        return out

    out = compute(data.shape, fcompute, name="T_batch_norm", tag=_tag.BROADCAST)
    mean = compute(moving_mean.shape, lambda c: moving_mean[c], name="T_batch_norm_mean", tag=_tag.ELEMWISE)
    var = compute(moving_var.shape, lambda c: moving_var[c], name="T_batch_norm_var", tag=_tag.ELEMWISE)
    return [out, mean, var]


def layer_norm(data, gamma, beta, axis=-1, epsilon=1e-5, center=True, scale=True):
    """Normalize over ``axis`` to zero mean and unit variance, then scale by ``gamma`` and shift by ``beta``.

    Returns
    -------
    out : te.Tensor
        Tagged ``layer_norm_output``.
    """
    shape = get_const_tuple(data.shape)
    if isinstance(axis, list | tuple):  # TVM passes a list of axes; one axis is supported
        if len(axis) != 1:
            raise OpAttributeInvalid(f"topi.nn.layer_norm: normalizes over one axis, got {list(axis)}")
        axis = axis[0]
    axis = normalize_axis(axis, len(shape), "layer_norm axis")
    n = shape[axis]
    acc = "float32" if data.dtype == "float16" else data.dtype

    def full(r, k):
        return r[:axis] + (k,) + r[axis + 1:]

    k1 = reduce_axis((0, n), name="k")
    total = compute(shape[:axis] + (1,) + shape[axis + 1:],
                    lambda *r: _te_sum(_op.cast(data(*full(r, k1)), acc), axis=k1),
                    name="T_layer_norm_sum", tag=_tag.COMM_REDUCE)

    def mean_at(i):
        return _op.cast(total(*full(i, 0)) / _op.const(float(n), acc), data.dtype)

    k2 = reduce_axis((0, n), name="k")

    def square(r):
        centered = _op.cast(data(*full(r, k2)) - mean_at(r), acc)
        return centered * centered

    sq = compute(shape[:axis] + (1,) + shape[axis + 1:], lambda *r: _te_sum(square(r), axis=k2),
                 name="T_layer_norm_sqsum", tag=_tag.COMM_REDUCE)
    eps = _op.const(float(epsilon), data.dtype)

    def fcompute(*i):
        var = _op.cast(sq(*full(i, 0)) / _op.const(float(n), acc), data.dtype)
        out = (data(*i) - mean_at(i)) / _intrin.sqrt(var + eps)
        if scale:
            out = out * gamma[i[axis]]
        if center:
            out = out + beta[i[axis]]
        return out

    return compute(shape, fcompute, name="T_layer_norm", tag="layer_norm_output")


def lrn(data, size, axis=1, alpha=1e-5, beta=0.75, bias=2.0):
    """Local response normalization across ``size`` neighbours along ``axis``.

    Returns
    -------
    out : te.Tensor
        Tagged ``lrn_output``.
    """
    shape = get_const_tuple(data.shape)
    axis = normalize_axis(axis, len(shape), "lrn axis")
    half = size // 2
    before = [0] * len(shape)
    before[axis] = half
    padded = pad(data, before, before, pad_value=0.0, name="lrn_pad") if half else data
    r = reduce_axis((0, size), name="r")

    def sqsum(*i):
        idx = list(i)
        idx[axis] = i[axis] + r
        v = padded(*idx)
        return _te_sum(v * v, axis=r)

    total = compute(shape, sqsum, name="T_lrn_sqsum", tag=_tag.COMM_REDUCE)
    alpha_c, bias_c = (_op.const(float(v), data.dtype) for v in (alpha, bias))
    size_c = _op.const(float(size), data.dtype)
    return compute(shape, lambda *i: data(*i) / _power(bias_c + alpha_c * total(*i) / size_c, float(beta)),
                   name="T_lrn", tag="lrn_output")


def _power(base, exponent):
    """``base ** exponent``; through square roots when ``exponent`` is a whole number of quarters up to 2 (LRN's
    usual 0.75: ``sqrt(x) * sqrt(sqrt(x))``, vector instructions where ``pow`` is a libm call per lane). The two
    agree to a few ulps except at -0 and -inf, which LRN's base (``bias`` plus a non-negative sum times ``alpha``)
    is not unless ``alpha`` is negative."""
    quarters = exponent * 4
    if quarters != int(quarters) or not 1 <= quarters <= 8:
        return _intrin.power(base, _op.const(exponent, base.dtype))
    whole, rest = divmod(int(quarters), 4)
    factors = [base] * whole
    if rest >= 2:
        factors.append(_intrin.sqrt(base))
    if rest % 2:
        factors.append(_intrin.sqrt(_intrin.sqrt(base)))
    result = factors[0]
    for factor in factors[1:]:
        result = result * factor
    return result
