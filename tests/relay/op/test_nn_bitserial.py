"""Operators of kiln/relay/op/nn_bitserial.py against TVM's definition written as loops: words packed bit by bit,
and convolutions and products of popcounts of packed bit planes, in the reference interpreter and compiled."""

import itertools

import numpy as np
import pytest

from kiln import relay
from kiln.error import OpAttributeInvalid, TypeInferenceError

from .checks import check

RNG = np.random.default_rng(23)


def popcount_dot(a, w, abits, wbits, unipolar):
    """TVM's bit-serial dot product of two integer vectors: for every pair of planes, popcount(a_i & w_j)
    (minus popcount(a_i & ~w_j) when unipolar) shifted by i + j."""
    total = 0
    for i, j in itertools.product(range(abits), range(wbits)):
        ai, wj = [(int(v) >> i) & 1 for v in a], [(int(v) >> j) & 1 for v in w]
        both = sum(p & q for p, q in zip(ai, wj, strict=True))
        total += (both - sum(p & (1 - q) for p, q in zip(ai, wj, strict=True)) if unipolar else both) << (i + j)
    return total


@pytest.mark.parametrize("abits,wbits,unipolar", [(1, 1, True), (2, 3, True), (3, 2, False)])
def test_bitserial_dense(abits, wbits, unipolar):
    x, w = RNG.integers(-40, 40, (3, 10)).astype("int16"), RNG.integers(-40, 40, (4, 10)).astype("int16")
    want = np.array([[popcount_dot(r, c, abits, wbits, unipolar) for c in w] for r in x], "int16")
    call = relay.nn.bitserial_dense(relay.var("x", shape=x.shape, dtype="int16"),
                                    relay.var("w", shape=w.shape, dtype="int16"), units=4, data_bits=abits,
                                    weight_bits=wbits, unipolar=unipolar)
    check(call, {"x": x, "w": w}, want)


@pytest.mark.parametrize("layouts", [("NCHW", "OIHW"), ("NHWC", "HWIO")])
@pytest.mark.parametrize("abits,wbits,unipolar", [(1, 1, True), (2, 2, False)])
def test_bitserial_conv2d(layouts, abits, wbits, unipolar):
    data_layout, kernel_layout = layouts
    x, w = RNG.integers(0, 8, (1, 3, 5, 6)).astype("int8"), RNG.integers(-4, 4, (2, 3, 3, 2)).astype("int8")
    strides, (top, left, bottom, right) = (1, 2), (1, 0, 0, 1)
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh, ow = (xp.shape[2] - 3) // strides[0] + 1, (xp.shape[3] - 2) // strides[1] + 1
    want = np.zeros((1, 2, oh, ow), "int32")
    for f, y, z in itertools.product(range(2), range(oh), range(ow)):
        window = xp[0, :, y * strides[0]:y * strides[0] + 3, z * strides[1]:z * strides[1] + 2]
        want[0, f, y, z] = popcount_dot(window.ravel(), w[f].ravel(), abits, wbits, unipolar)
    if data_layout == "NHWC":
        x, w, want = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), want.transpose(0, 2, 3, 1)
    call = relay.nn.bitserial_conv2d(relay.var("x", shape=x.shape, dtype="int8"),
                                     relay.var("w", shape=w.shape, dtype="int8"), strides, (top, left, bottom, right),
                                     2, (3, 2), abits, wbits, data_layout, kernel_layout, out_dtype="int32",
                                     unipolar=unipolar)
    check(call, {"x": x, "w": w}, want)


def test_bitpack():
    x = RNG.integers(-128, 128, (2, 16, 3)).astype("int8")
    want = np.zeros((2, 3, 2, 3), "uint8")  # bit_axis 1 of (2, 16 / 8, 3)
    for n, b, p, c in itertools.product(range(2), range(3), range(2), range(3)):
        for k in range(8):
            want[n, b, p, c] |= ((int(x[n, p * 8 + k, c]) >> b) & 1) << (7 - k)
    check(relay.nn.bitpack(relay.var("x", shape=x.shape, dtype="int8"), bits=3, pack_axis=1, bit_axis=1,
                           pack_type="uint8"), {"x": x}, want)
    last = relay.nn.bitpack(relay.var("x", shape=(4, 32), dtype="int32"), bits=2, pack_axis=1, bit_axis=-1,
                            pack_type="uint16")
    assert relay.infer_type(last).checked_type == relay.TensorType((4, 2, 2), "uint16")


def test_types_and_errors():
    def typed(expr):
        return relay.infer_type(expr).checked_type

    x = relay.var("x", shape=(2, 32, 9, 9), dtype="int16")
    conv = relay.nn.bitserial_conv2d(x, relay.var("w"), channels=8, kernel_size=(3, 3), padding=(1, 1), strides=2)
    assert relay.infer_type(conv).args[1].checked_type == relay.TensorType((8, 32, 3, 3), "int16")
    assert typed(conv) == relay.TensorType((2, 8, 5, 5), "int16")
    with pytest.raises(TypeInferenceError, match="weight"):
        typed(relay.nn.bitserial_conv2d(x, relay.var("w", shape=(8, 16, 3, 3), dtype="int16"), channels=8))
    with pytest.raises(TypeInferenceError, match="multiple of the 32 bits"):
        typed(relay.nn.bitpack(relay.var("y", shape=(2, 24), dtype="int8"), pack_axis=1, bit_axis=2))
    with pytest.raises(TypeInferenceError, match="integer"):
        typed(relay.nn.bitserial_dense(relay.var("y", shape=(2, 8)), relay.var("w", shape=(4, 8)), units=4))
    with pytest.raises(OpAttributeInvalid, match="activation_bits"):
        relay.nn.bitserial_conv2d(x, x, activation_bits=9)
    with pytest.raises(OpAttributeInvalid, match="pack_type"):
        relay.nn.bitpack(x, pack_type="int32")
    # TVM types a dense by units alone; the kernel then needs the (units, K) weight it multiplies with
    odd = relay.nn.bitserial_dense(relay.var("y", shape=(2, 8), dtype="int8"),
                                   relay.var("w", shape=(8, 4), dtype="int8"), units=4)
    assert typed(odd) == relay.TensorType((2, 4), "int16")
    with pytest.raises(OpAttributeInvalid, match=r"\(units, K\)"):
        check(odd, {"y": np.zeros((2, 8), "int8"), "w": np.zeros((8, 4), "int8")}, np.zeros((2, 4), "int16"),
              targets=())
