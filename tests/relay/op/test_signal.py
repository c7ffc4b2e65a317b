"""``stft``, ``dft`` and ``sliding_window`` (kiln/relay/op/signal.py) against numpy's FFT and strided views, in the
reference interpreter and compiled for llvm and c."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import TypeInferenceError

from .checks import check

RNG = np.random.default_rng(31)


@pytest.mark.parametrize("onesided,normalized", [(True, False), (False, True)])
def test_stft_against_the_fft(onesided, normalized):
    data = RNG.standard_normal((2, 20)).astype("float32")
    window = np.hanning(8).astype("float32")
    frames = [data[:, t * 4: t * 4 + 8] * window for t in range(4)]
    spectrum = np.stack([np.fft.fft(f, axis=-1) for f in frames], axis=-1)  # (2, 8, frames)
    if onesided:
        spectrum = spectrum[:, :5]
    if normalized:
        spectrum = spectrum / np.sqrt(8)
    want = np.stack([spectrum.real, spectrum.imag], axis=-1).astype("float32")
    expr = relay.stft(relay.var("x", shape=data.shape), 8, 4, 8, relay.var("w", shape=(8,)), normalized, onesided)
    check(expr, {"x": data, "w": window}, want, rtol=1e-4)
    with pytest.raises(TypeInferenceError, match="stft"):
        relay.infer_type(relay.stft(relay.var("x", shape=(4,)), 8))


def test_stft_integer_window_and_run_time_length():
    """An integer window is cast to the data's type; a signal whose length is known only at run time gives a
    number of frames known only then (the VM sizes the result)."""
    data = RNG.standard_normal((2, 9)).astype("float32")
    window = np.array([1, 3, 2], "int32")
    # TVM's definition: frame t's bin f sums window[k] x[2t + k] exp(-2 pi i f k / win_length), f < n_fft // 2 + 1
    k, f = np.arange(3), np.arange(3)[:, None]
    spectrum = np.stack([(data[:, 2 * t: 2 * t + 3] * window) @ np.exp(-2j * np.pi * f * k / 3).T
                         for t in range(3)], axis=-1)
    want = np.stack([spectrum.real, spectrum.imag], axis=-1).astype("float32")
    x, w = relay.var("x", shape=data.shape), relay.var("w", shape=(3,), dtype="int32")
    check(relay.stft(x, 4, 2, 3, w, False, True), {"x": data, "w": window}, want, rtol=1e-4)
    x_dyn = relay.var("x", shape=(relay.Any(), relay.Any()))
    func = relay.Function([x_dyn, w], relay.stft(x_dyn, 4, 2, 3, w, False, True))
    out = relay.create_executor("vm", mod=kiln.IRModule.from_expr(func), target="llvm").evaluate()(data, window)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("inverse", [False, True])
def test_dft_against_the_fft(inverse):
    re, im = RNG.standard_normal((3, 6)).astype("float32"), RNG.standard_normal((3, 6)).astype("float32")
    z = (np.fft.ifft if inverse else np.fft.fft)(re + 1j * im, axis=-1)
    out = relay.dft(relay.var("re", shape=re.shape), relay.var("im", shape=im.shape), inverse)
    check(relay.Tuple([out[0], out[1]]), {"re": re, "im": im}, (z.real.astype("float32"), z.imag.astype("float32")),
          rtol=1e-4)


def test_sliding_window():
    data = RNG.standard_normal((2, 6, 5)).astype("float32")
    want = np.lib.stride_tricks.sliding_window_view(data, (3, 2), axis=(1, 2))[:, ::2, ::3]
    check(relay.sliding_window(relay.var("x", shape=data.shape), 1, (3, 2), (2, 3)), {"x": data},
          np.ascontiguousarray(want))
