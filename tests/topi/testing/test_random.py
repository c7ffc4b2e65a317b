"""kiln.topi.testing.random (the numpy random-number kernels the interpreter runs) against a model written here
apart from it: TVM's Threefry spelled round by round after the Skein paper's Threefish-256 on numpy uint64 scalars,
and the generator state rules on Python integers; numbers TVM v0.16 gives; then the distributions' ranges and
statistics."""

import numpy as np
import pytest
import scipy.stats

from kiln.error import ArgumentTypeError
from kiln.topi.testing import random as R

RNG = np.random.default_rng(5)
MASK = 2**64 - 1
# Threefish-256 rotation constants R[d mod 8][j] (Skein 1.3, table 4)
SKEIN_256_ROTATIONS = [(14, 16), (52, 57), (23, 40), (5, 37), (25, 33), (46, 12), (58, 22), (32, 32)]
C240 = 0x1BD11BDAA9FC1A22


def threefish(key, block):
    """TVM's Threefry hash on numpy uint64 scalars: Threefish-256 with a zero tweak and 20 rounds, keyed before every
    fourth round only (no final subkey), whose MIX gives ``(e0, rotl(b) ^ (e0 + b))`` with ``e0 = a + b`` (TVM's
    kernel stores ``e0`` over ``a`` before reading it back); the four output words as Python ints."""
    u = np.uint64
    with np.errstate(over="ignore"):
        k = [u(w) for w in key]
        k.append(u(C240) ^ k[0] ^ k[1] ^ k[2] ^ k[3])
        v = [u(w) for w in block]
        for d in range(20):
            if d % 4 == 0:
                s = d // 4
                v = [v[i] + k[(s + i) % 5] + (u(s) if i == 3 else u(0)) for i in range(4)]
            r0, r1 = SKEIN_256_ROTATIONS[d % 8]
            e0 = v[0] + v[1]
            e1 = ((v[1] << u(r0)) | (v[1] >> u(64 - r0))) ^ (e0 + v[1])
            e2 = v[2] + v[3]
            e3 = ((v[3] << u(r1)) | (v[3] >> u(64 - r1))) ^ (e2 + v[3])
            v = [e0, e3, e2, e1]  # the 4-word permutation pi = (0, 3, 2, 1)
    return [int(w) for w in v]


def shifted(a, b):
    """The one-bit path position held in the 128-bit number ``a:b``, one place to the right (a position is one set
    bit; in a state that breaks this, a first word other than 0 moves alone and the second is cleared, TVM's rule)."""
    if a > 1:
        return a >> 1, 0
    pos = ((a << 64) | (b if a == 0 else 0)) >> 1
    return pos >> 64, pos & MASK


def generate_model(gen, n):
    """``threefry_generate`` on Python ints: the new state and the ``n`` numbers."""
    g = [int(w) for w in gen]
    if g[7] < MASK - n:
        state = list(g)
    elif g[8] == 0 and g[9] == 0:
        state = threefish(g[:4], [MASK] * 4) + [0, 0, 0, 0, 1 << 63, 0]
    else:
        state = g[:4] + [g[4] | g[8], g[5] | g[9], 0, 0, *shifted(g[8], g[9])]
    numbers = []
    for block in range(n // 4):
        numbers += threefish(state[:4], [(w + block) & MASK for w in state[4:8]])
    if n % 4:
        state[7] = (state[7] + n // 4 * 4) & MASK
        numbers += threefish(state[:4], state[4:8])[:n % 4]
    new = state[:6] + [0, (state[7] + (4 if n % 4 else n)) & MASK] + state[8:]
    return new, numbers


def split_model(gen):
    g = [int(w) for w in gen]
    if g[8] == 0 and g[9] == 0:
        key = threefish(g[:4], g[4:8])
        return key + [0, 0, 0, 0, 1 << 62, 0], key + [1 << 63, 0, 0, 0, 1 << 62, 0]
    pos = list(shifted(g[8], g[9]))
    return g[:8] + pos, g[:4] + [g[4] | g[8], g[5] | g[9]] + g[6:8] + pos


def key(seed):
    return np.array([seed & MASK, seed >> 64 & MASK, 0, 0, 0, 0, 0, 0, 1 << 63, 0], "uint64")


def random_words(n):
    return RNG.integers(0, 2**64, n, dtype="uint64", endpoint=False)


STATES = {
    "fresh": key(7),
    "random": random_words(10),
    "counter full": np.array([3, 1, 4, 1, 0, 0, 5, MASK - 1, 1 << 63, 0], "uint64"),
    "counter full, path in the second word": np.array([3, 1, 4, 1, 9, 0, 5, MASK - 3, 0, 1 << 40], "uint64"),
    "counter and path full": np.array([3, 1, 4, 1, 9, 2, 6, MASK - 2, 0, 0], "uint64"),
    "path at its last bit of the first word": np.array([1, 2, 3, 4, 5, 6, 7, 8, 1, 0], "uint64"),
}


def test_numbers_are_tvms():
    """TVM v0.16's uniform float32 numbers for ``threefry_key(5)`` (its ONNX RandomUniform with seed 5)."""
    tvm_gives = [0.043976, 0.96656, 0.292199, 0.904297, 0.25167, 0.521778, 0.778985, 0.085463, 0.939846, 0.194201]
    _, values = R.uniform_python(key(5), np.float32(0), np.float32(1), (10,), "float32")
    np.testing.assert_allclose(values, tvm_gives, rtol=1e-5)


def test_hash_is_tvms_threefry():
    key_words = random_words(4)
    counters = random_words(4 * 6).reshape(6, 4)
    got = R.threefry_hash(key_words, counters)
    assert got.dtype == np.uint64 and got.shape == (6, 4)
    for row, counter in zip(got, counters, strict=True):
        assert [int(w) for w in row] == threefish(key_words, counter)


@pytest.mark.parametrize("name", list(STATES))
@pytest.mark.parametrize("shape", [(), (1,), (3,), (4,), (2, 5), (4, 4)])
def test_generate_follows_the_state_rules(name, shape):
    gen = STATES[name]
    new, bits = R.threefry_generate_python(gen, shape)
    want_state, want_bits = generate_model(gen, int(np.prod(shape)))
    assert bits.dtype == np.uint64 and bits.shape == shape
    assert [int(w) for w in bits.ravel()] == want_bits
    assert [int(w) for w in new] == want_state


@pytest.mark.parametrize("name", list(STATES))
def test_split_follows_the_state_rules(name):
    left, right = R.threefry_split_python(STATES[name])
    want_left, want_right = split_model(STATES[name])
    assert [int(w) for w in left] == want_left and [int(w) for w in right] == want_right


def test_split_of_a_fresh_key_appends_to_the_path():
    left, right = R.threefry_split_python(key(0))
    assert left.tolist() == [0] * 8 + [1 << 62, 0]
    assert right.tolist() == [0, 0, 0, 0, 1 << 63, 0, 0, 0, 1 << 62, 0]


def test_deep_splits_rekey_after_128_steps():
    gen = key(1)
    for step in range(128):
        _, gen = R.threefry_split_python(gen)
        assert gen[:4].tolist() == key(1)[:4].tolist(), step  # the path still has room: the key stays
    assert gen[8] == 0 and gen[9] == 0 and gen[4] == MASK and gen[5] == MASK
    left, right = R.threefry_split_python(gen)
    assert left[:4].tolist() == right[:4].tolist() != key(1)[:4].tolist()
    assert not np.array_equal(R.threefry_generate_python(left, (8,))[1], R.threefry_generate_python(right, (8,))[1])


def test_generations_in_sequence_differ_and_repeat():
    gen = key(3)
    gen1, a = R.threefry_generate_python(gen, (7,))
    _, b = R.threefry_generate_python(gen1, (7,))
    assert len(set(a.tolist()) | set(b.tolist())) == 14
    assert np.array_equal(R.threefry_generate_python(gen, (7,))[1], a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_range_and_distribution(dtype):
    _, values = R.uniform_python(key(11), np.array(-2.0, dtype), np.array(3.0, dtype), (200, 250), dtype)
    assert values.dtype == dtype and values.shape == (200, 250)
    assert values.min() >= -2.0 and values.max() < 3.0
    assert abs(values.mean() - 0.5) < 0.03 and abs(values.var() - 25 / 12) < 0.05
    assert scipy.stats.kstest(values.ravel(), scipy.stats.uniform(-2, 5).cdf).pvalue > 1e-4


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_distribution(dtype):
    _, values = R.normal_python(key(12), np.array(1.5, dtype), np.array(0.5, dtype), (300, 100), dtype)
    assert values.dtype == dtype and values.shape == (300, 100) and np.isfinite(values).all()
    assert abs(values.mean() - 1.5) < 0.01 and abs(values.std() - 0.5) < 0.01
    assert scipy.stats.kstest(values.ravel(), scipy.stats.norm(1.5, 0.5).cdf).pvalue > 1e-4


def test_multinomial_frequencies():
    probs = np.array([[1, 0, 3, -2, 4], [0, 0, 0, 0, 5]], "float32")
    _, draws = R.multinomial_python(key(13), probs, 20000)
    assert draws.dtype == np.int32 and draws.shape == (2, 20000)
    assert set(draws[1].tolist()) == {4}
    counts = np.bincount(draws[0], minlength=5)
    assert counts[1] == counts[3] == 0
    assert scipy.stats.chisquare(counts[[0, 2, 4]], 20000 * np.array([1, 3, 4]) / 8).pvalue > 1e-4


def test_multinomial_of_no_weight_draws_the_first_index():
    _, draws = R.multinomial_python(key(14), np.zeros((3,), "float32"), 4)
    assert draws.tolist() == [0, 0, 0, 0]


def test_bad_generator():
    with pytest.raises(ArgumentTypeError, match="uint64\\[10\\]"):
        R.threefry_split_python(np.zeros(9, "uint64"))
