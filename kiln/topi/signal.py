"""Signal computes (TVM's ``topi/signal.py``): ``stft`` and ``dft`` as reductions over the transformed axis (the
twiddle factor ``exp(-2 pi i f k / n)`` computed per term in float64 and rounded to the data's type, so exact zeros
such as ``sin(pi)`` stay zero), and ``sliding_window``."""

import math

from ..te.operation import compute, reduce_axis
from ..te.operation import sum as _te_sum
from ..tir import intrin as _intrin
from ..tir import op as _op
from . import tag as _tag
from .utils import get_const_tuple

__all__ = ["stft", "dft", "sliding_window"]


def _angle(f, k, n, dtype):
    """``2 pi (f * k mod n) / n`` (reducing the product first keeps the angle small and exact)."""
    return _op.cast(_op.floormod(f * k, n), dtype) * _op.const(2 * math.pi / n, dtype)


def _trig(fn, angle, dtype):
    """``fn(angle)`` computed in float64 and rounded to ``dtype`` once (``sin(pi)`` is 0 to float32 precision)."""
    return _op.cast(fn(angle), dtype)


def stft(data, n_fft, hop_length, win_length, window, normalized, onesided):
    """The short-time Fourier transform (see :mod:`kiln.relay.op.signal` for the formula)."""
    shape = get_const_tuple(data.shape)
    rows = n_fft // 2 + 1 if onesided else n_fft
    frames = (shape[-1] - n_fft) // hop_length + 1
    dtype = data.dtype
    scale = _op.const(1.0 / math.sqrt(n_fft) if normalized else 1.0, dtype)

    def fcompute(*i):
        lead, f, t, part = i[:-3], i[-3], i[-2], i[-1]
        k = reduce_axis((0, win_length), name="k")
        angle = _angle(f, k.var, win_length, "float64")
        value = _op.cast(window(k.var), dtype) * data(*lead, t * hop_length + k.var)
        trig = _op.select(_op.equal(part, 0), _trig(_intrin.cos, angle, dtype),
                          _op.const(0.0, dtype) - _trig(_intrin.sin, angle, dtype))
        return _te_sum(value * trig * scale, axis=[k])

    return compute(shape[:-1] + (rows, frames, 2), fcompute, name="T_stft", tag="stft")


def dft(re_data, im_data, inverse=False):
    """The discrete Fourier transform of the last axis of ``re_data + i im_data`` (or its inverse, divided by the
    length): ``[re, im]``."""
    shape = get_const_tuple(re_data.shape)
    n = shape[-1]
    dtype = re_data.dtype
    sign = 1.0 if inverse else -1.0
    factor = _op.const(1.0 / n if inverse else 1.0, dtype)

    def part(real):
        def fcompute(*i):
            k = reduce_axis((0, n), name="k")
            angle = _angle(i[-1], k.var, n, "float64") * _op.const(sign, "float64")
            re, im = re_data(*i[:-1], k.var), im_data(*i[:-1], k.var)
            c, s = _trig(_intrin.cos, angle, dtype), _trig(_intrin.sin, angle, dtype)
            value = re * c - im * s if real else re * s + im * c
            return _te_sum(value * factor, axis=[k])

        return compute(shape, fcompute, name="T_dft_re" if real else "T_dft_im", tag="dft")

    return [part(True), part(False)]


def sliding_window(data, axis, window_shape, strides):
    """Every window of ``window_shape`` over the axes from ``axis`` on, at ``strides``."""
    shape = get_const_tuple(data.shape)
    m = len(window_shape)
    counts = tuple((d - w) // s + 1 for d, w, s in zip(shape[axis:], window_shape, strides, strict=True))

    def fcompute(*i):
        lead, win, inner = i[:axis], i[axis:axis + m], i[axis + m:]
        return data(*lead, *[w * s + x for w, s, x in zip(win, strides, inner, strict=True)])

    return compute(shape[:axis] + counts + tuple(window_shape), fcompute, name="T_sliding_window", tag=_tag.INJECTIVE)
