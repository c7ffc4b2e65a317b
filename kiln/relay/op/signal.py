"""Signal operators: ``stft dft`` (and ``sliding_window``), as TVM defines them.

``stft`` returns ``(batch, frequencies, frames, 2)`` (real and imaginary parts; no batch axis for 1-D data): frame
``t`` of row ``f`` is ``sum_k window[k] * data[t * hop + k] * exp(-2 pi i f k / win_length)`` over ``k < win_length``
(TVM's formula), divided by ``sqrt(n_fft)`` when ``normalized``. ``dft`` transforms the last axis of a complex
signal given as real and imaginary tensors.
"""


from ...error import TypeInferenceError
from ...ir.type import Any, TensorType, TupleType, is_any
from ..expr import TupleWrapper
from . import attrs_array as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import ALL, FLOAT, NUMERIC, normalize_axis, same_dtype, tensor_arg


def _stft_rel(types, attrs):
    data, window = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "window")
    window_ok = window.ndim == 1 and (is_any(window.shape[0]) or window.shape[0] == attrs.win_length)
    if data.ndim not in (1, 2) or not window_ok or attrs.win_length > attrs.n_fft:
        raise TypeInferenceError(f"stft: data {data} must be 1-D or 2-D and window {window} "
                                 f"({attrs.win_length},), win_length <= n_fft={attrs.n_fft}")
    length = data.shape[-1]
    if is_any(length):  # the number of frames is known at run time
        rows = attrs.n_fft // 2 + 1 if attrs.onesided else attrs.n_fft
        return TensorType(data.shape[:-1] + (rows, Any(), 2), data.dtype)
    if length < attrs.n_fft:
        raise TypeInferenceError(f"stft: n_fft={attrs.n_fft} is longer than the signal {data}")
    # the window may be of any numeric type (TVM's tests pass integer windows): it is cast to the data's
    rows = attrs.n_fft // 2 + 1 if attrs.onesided else attrs.n_fft
    return TensorType(data.shape[:-1] + (rows, (length - attrs.n_fft) // attrs.hop_length + 1, 2), data.dtype)


register_relay_op("stft", 2, _stft_rel, OpPattern.OPAQUE, A.StftAttrs, dtypes=(FLOAT, NUMERIC))


def stft(data, n_fft, hop_length=None, win_length=None, window=None, normalized=False, onesided=True):
    """The short-time Fourier transform of ``data`` (TVM's defaults: ``hop_length = n_fft // 4``, ``win_length =
    n_fft``, a window of ones)."""
    from .tensor import ones

    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if window is None:
        window = ones((win_length,), "float32")
    return make_call("stft", [data, window], A.StftAttrs(int(n_fft), int(hop_length), int(win_length),
                                                         bool(normalized), bool(onesided)))


def _dft_rel(types, attrs):
    re, im = tensor_arg(types, 0, "re_data"), tensor_arg(types, 1, "im_data")
    if re.shape != im.shape or re.ndim < 1:
        raise TypeInferenceError(f"dft: re_data {re} and im_data {im} must share a shape")
    same_dtype([re, im], "dft re_data and im_data")
    return TupleType([re, im])


register_relay_op("dft", 2, _dft_rel, OpPattern.OPAQUE, A.DFTAttrs, dtypes=FLOAT)


def dft(re_data, im_data, inverse=False):
    """The discrete Fourier transform (or its inverse, divided by the length) of the last axis of the complex
    signal ``re_data + i im_data``; index the result for the real ``[0]`` and imaginary ``[1]`` parts."""
    return TupleWrapper(make_call("dft", [re_data, im_data], A.DFTAttrs(bool(inverse))), 2)


def _sliding_window_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    axis = normalize_axis(attrs.axis, data.ndim, "sliding_window axis")
    if len(attrs.window_shape) != data.ndim - axis:
        raise TypeInferenceError(f"sliding_window: window_shape {attrs.window_shape} must cover the axes {axis}.. "
                                 f"of {data}")
    counts = []
    for d, w, s in zip(data.shape[axis:], attrs.window_shape, attrs.strides, strict=True):
        if w > d or s < 1:
            raise TypeInferenceError(f"sliding_window: window {attrs.window_shape} does not fit {data}")
        counts.append((d - w) // s + 1)
    return TensorType(data.shape[:axis] + tuple(counts) + tuple(attrs.window_shape), data.dtype)


register_relay_op("sliding_window", 1, _sliding_window_rel, OpPattern.INJECTIVE, A.SlidingWindowAttrs, dtypes=ALL)


def sliding_window(data, axis, window_shape, strides):
    """Every window of ``window_shape`` (over the axes from ``axis`` on) at ``strides``: the window indices, then
    the window's elements."""
    return make_call("sliding_window", [data], A.SlidingWindowAttrs(int(axis), tuple(window_shape), tuple(strides)))


