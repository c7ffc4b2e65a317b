"""The random-number kernels in numpy (:mod:`kiln.topi.random` says what they compute): ``threefry_generate``,
``threefry_split``, ``uniform``, ``normal`` and ``multinomial`` on ``uint64[10]`` generator states.

This is the one numpy implementation of their semantics, which the reference interpreter registers too; the tests
check it against a Threefry written apart from it and against kiln's compiled kernels. Every hash is vectorized
over the blocks of a generation (the words as rows of a ``(4, blocks)`` uint64 array, whose arithmetic wraps).
"""

import math

import numpy as np

from ...error import ArgumentTypeError

__all__ = ["threefry_hash", "threefry_generate_python", "threefry_split_python", "uniform_python", "normal_python",
           "multinomial_python"]

_ROTATIONS = ((14, 16), (52, 57), (23, 40), (5, 37), (25, 33), (46, 12), (58, 22), (32, 32))
_PARITY = np.uint64(0x1BD11BDAA9FC1A22)
_ALL_ONES = 2**64 - 1


def threefry_hash(key, counters) -> np.ndarray:
    """The Threefry hash of each row of ``counters`` (``(n, 4)`` uint64) under ``key`` (4 uint64): ``(n, 4)``."""
    key = np.asarray(key, "uint64")
    schedule = list(key) + [np.bitwise_xor.reduce(key) ^ _PARITY]
    x = np.array(counters, "uint64").reshape(-1, 4).T.copy()
    with np.errstate(over="ignore"):  # the words wrap modulo 2**64
        return _rounds(schedule, x).T


def _rounds(schedule, x):
    for group in range(5):
        for j in range(4):
            x[j] += schedule[(group + j) % 5] + np.uint64(group if j == 3 else 0)
        for r in range(4):
            rotation = _ROTATIONS[(group * 4 + r) % 8]
            for pair in range(2):
                a, b = x[2 * pair], x[2 * pair + 1]
                a += b  # in place: rows of x
                rot = np.uint64(rotation[pair])
                b[:] = (a + b) ^ ((b << rot) | (b >> (np.uint64(64) - rot)))  # TVM's mixing step, a = a + b
            x = x[[0, 3, 2, 1]]
    return x


def _state(gen):
    gen = np.asarray(gen, "uint64")
    if gen.shape != (10,):
        raise ArgumentTypeError(f"a Threefry generator is uint64[10], got {gen.dtype}{list(gen.shape)}")
    return gen


def _shift_position(a, b):
    """The 128-bit path position ``(a, b)`` moved one bit right."""
    if a == 1:
        return np.uint64(0), np.uint64(1 << 63)
    if a == 0:
        return np.uint64(0), b >> np.uint64(1)
    return a >> np.uint64(1), np.uint64(0)


def threefry_generate_python(gen, shape):
    """``(new_gen, bits)``: ``uint64`` random bits of ``shape`` from generator ``gen``."""
    gen = _state(gen)
    count = math.prod(shape)
    state = gen.copy()
    if not int(gen[7]) < _ALL_ONES - count:
        if gen[8] == 0 and gen[9] == 0:
            state[:4] = threefry_hash(gen[:4], [[_ALL_ONES] * 4])[0]
            state[4:] = [0, 0, 0, 0, 1 << 63, 0]
        else:
            state[4], state[5] = gen[4] | gen[8], gen[5] | gen[9]
            state[6] = state[7] = 0
            state[8], state[9] = _shift_position(gen[8], gen[9])
    blocks = count // 4
    steps = np.arange(blocks, dtype="uint64")[:, None]
    bits = [threefry_hash(state[:4], state[4:8][None, :] + steps).ravel()]
    if count % 4:
        state[7:8] += np.uint64(blocks * 4)
        bits.append(threefry_hash(state[:4], state[4:8][None, :])[0, :count % 4])
    new_gen = state.copy()
    new_gen[6] = 0
    new_gen[7:8] = state[7:8] + np.uint64(4 if count % 4 else count)  # an array add: it wraps without a warning
    return new_gen, np.concatenate(bits).reshape(shape)


def threefry_split_python(gen):
    """``(left, right)``: two new generators from ``gen``."""
    gen = _state(gen)
    if gen[8] == 0 and gen[9] == 0:
        key = threefry_hash(gen[:4], [gen[4:8]])[0]
        left, right = (np.concatenate([key, np.array([path, 0, 0, 0, 1 << 62, 0], "uint64")])
                       for path in (0, 1 << 63))
        return left, right
    left, right = gen.copy(), gen.copy()
    right[4], right[5] = gen[4] | gen[8], gen[5] | gen[9]
    left[8], left[9] = right[8], right[9] = _shift_position(gen[8], gen[9])
    return left, right


def _unit_interval(bits, dtype):
    """Numbers of ``[0, 1)``: the top fraction bits of the low word of ``bits`` under the exponent of 1.0."""
    if dtype == "float32":
        mantissa = (bits.astype("uint32") >> np.uint32(9)) | np.uint32(127 << 23)
        return mantissa.view("float32") - np.float32(1.0)
    if dtype == "float64":
        mantissa = (bits >> np.uint64(12)) | np.uint64(1023 << 52)
        return mantissa.view("float64") - np.float64(1.0)
    raise ArgumentTypeError(f"random numbers are float32 or float64, not {dtype}")


def uniform_python(gen, low, high, shape, dtype):
    """``(new_gen, values)``: numbers uniform on ``[low, high)``."""
    new_gen, bits = threefry_generate_python(gen, shape)
    low, high = np.asarray(low, dtype), np.asarray(high, dtype)
    return new_gen, (_unit_interval(bits, dtype) * (high - low) + low).astype(dtype)


def normal_python(gen, mean, scale, shape, dtype):
    """``(new_gen, values)``: normally distributed numbers (Box-Muller on two uniform ones)."""
    shape = tuple(shape)
    new_gen, bits = threefry_generate_python(gen, (2,) + shape)
    u = _unit_interval(bits, dtype)
    one, two = np.array(1.0, dtype), np.array(-2.0, dtype)
    radius = np.sqrt(two * np.log(one - u[0]))
    values = radius * np.sin(np.array(2.0 * math.pi, dtype) * u[1]) * np.asarray(scale, dtype) + np.asarray(mean,
                                                                                                          dtype)
    return new_gen, values.astype(dtype)


def multinomial_python(gen, probs, num_samples):
    """``(new_gen, indices)``: ``num_samples`` int32 draws per row of the last axis of ``probs``."""
    weight = np.maximum(np.asarray(probs).astype("float32"), np.float32(0))
    total = np.cumsum(weight, axis=-1)[..., -1:]  # a running sum, in the kernel's order
    with np.errstate(invalid="ignore", divide="ignore"):
        cumulative = np.cumsum(weight / total, axis=-1, dtype="float32")
    new_gen, bits = threefry_generate_python(gen, weight.shape[:-1] + (num_samples,))
    gap = cumulative[..., :, None] - _unit_interval(bits, "float32")[..., None, :]
    with np.errstate(invalid="ignore"):
        gap = np.where(gap > 0, gap, np.float32(1.0))
    return new_gen, np.argmin(gap, axis=-2).astype("int32")
