"""kiln.topi.random: the Threefry kernels and distributions compiled for each target, against the numpy kernels of
kiln.topi.testing.random and the Threefish-256 model of tests/topi/testing/test_random.py."""

import numpy as np
import pytest

import kiln
from kiln import te, topi
from kiln.error import OpNotImplemented, TIRValueError
from kiln.topi.testing import random as R

from ...target.conftest import TARGETS
from ..testing.test_random import STATES, generate_model, key, split_model

BOTH = pytest.mark.parametrize("target", TARGETS)


def run(target, outputs, inputs, args):
    """Build ``outputs`` from ``inputs`` with the extern schedule, run it on ``args``: the outputs as numpy."""
    s = topi.generic.schedule_extern(outputs)
    f = kiln.build(s, list(inputs) + list(outputs), target=target)
    results = [kiln.nd.array(np.zeros([int(d) for d in t.shape], t.dtype)) for t in outputs]
    f(*[kiln.nd.array(a) for a in args], *results)
    return [r.numpy() for r in results]


def generator():
    return te.placeholder((10,), "uint64", name="gen")


@BOTH
@pytest.mark.parametrize("shape", [(5,), (2, 4), (3, 1, 3)])
def test_generate_matches_the_models(target, shape):
    gen = generator()
    new_gen, bits = topi.random.threefry_generate(gen, shape)
    s = topi.generic.schedule_extern([new_gen, bits])
    f = kiln.build(s, [gen, new_gen, bits], target=target)
    for name, state in STATES.items():
        out_gen, out_bits = kiln.nd.array(np.zeros(10, "uint64")), kiln.nd.array(np.zeros(shape, "uint64"))
        f(kiln.nd.array(state), out_gen, out_bits)
        want_gen, want_bits = generate_model(state, int(np.prod(shape)))
        assert out_bits.numpy().ravel().tolist() == want_bits, name
        assert out_gen.numpy().tolist() == want_gen, name


@BOTH
def test_split_matches_the_models(target):
    gen = generator()
    left, right = topi.random.threefry_split(gen)
    s = topi.generic.schedule_extern([left, right])
    f = kiln.build(s, [gen, left, right], target=target)
    for name, state in STATES.items():
        a, b = kiln.nd.array(np.zeros(10, "uint64")), kiln.nd.array(np.zeros(10, "uint64"))
        f(kiln.nd.array(state), a, b)
        want_left, want_right = split_model(state)
        assert a.numpy().tolist() == want_left and b.numpy().tolist() == want_right, name


@BOTH
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform(target, dtype):
    gen, low, high = generator(), te.placeholder((), dtype, "low"), te.placeholder((), dtype, "high")
    outputs = topi.random.uniform(gen, low, high, (64, 50), dtype)
    args = [key(21), np.array(-1.0, dtype), np.array(4.0, dtype)]
    new_gen, values = run(target, outputs, [gen, low, high], args)
    want_gen, want = R.uniform_python(*args, (64, 50), dtype)
    assert np.array_equal(new_gen, want_gen) and values.dtype == dtype
    np.testing.assert_allclose(values, want, rtol=1e-6, atol=1e-6)
    assert values.min() >= -1.0 and values.max() < 4.0 and abs(values.mean() - 1.5) < 0.1


@BOTH
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal(target, dtype):
    gen, mean, scale = generator(), te.placeholder((), dtype, "mean"), te.placeholder((), dtype, "scale")
    outputs = topi.random.normal(gen, mean, scale, (40, 50), dtype)
    args = [key(22), np.array(3.0, dtype), np.array(2.0, dtype)]
    new_gen, values = run(target, outputs, [gen, mean, scale], args)
    want_gen, want = R.normal_python(*args, (40, 50), dtype)
    assert np.array_equal(new_gen, want_gen) and values.dtype == dtype
    np.testing.assert_allclose(values, want, rtol=1e-5, atol=1e-5)
    assert abs(values.mean() - 3.0) < 0.15 and abs(values.std() - 2.0) < 0.15


@BOTH
def test_multinomial(target):
    gen, probs = generator(), te.placeholder((2, 3, 6), "float32", "probs")
    outputs = topi.random.multinomial(gen, probs, 50)
    p = np.random.default_rng(3).integers(-2, 9, (2, 3, 6)).astype("float32")
    p[1, 2] = 0  # a row with no weight draws index 0
    new_gen, draws = run(target, outputs, [gen, probs], [key(23), p])
    want_gen, want = R.multinomial_python(key(23), p, 50)
    assert np.array_equal(new_gen, want_gen) and draws.dtype == np.int32
    assert np.array_equal(draws, want)
    chosen = np.take_along_axis(p, draws, axis=-1)
    assert (chosen[0] > 0).all() and (chosen[1, :2] > 0).all() and (draws[1, 2] == 0).all()


@BOTH
def test_the_target_wraps_unsigned_arithmetic(target):
    assert topi.random.threefry_test_wrapping(target, kiln.cpu(0))


def test_bad_arguments():
    with pytest.raises(TIRValueError, match="threefry_generate: the generator must be uint64\\[10\\]"):
        topi.random.threefry_generate(te.placeholder((9,), "uint64"), (4,))
    with pytest.raises(TIRValueError, match="threefry_split: the generator must be uint64\\[10\\]"):
        topi.random.threefry_split(te.placeholder((10,), "int64"))
    with pytest.raises(TIRValueError, match="uniform: only float32 and float64"):
        topi.random.uniform(generator(), te.placeholder((), "float16"), te.placeholder((), "float16"), (2,),
                            "float16")
    with pytest.raises(OpNotImplemented, match="threefry_generate: the shape \\[n, 2\\] must be known"):
        topi.random.threefry_generate(generator(), (te.var("n"), 2))
    with pytest.raises(TIRValueError, match="multinomial: probs must have at least one axis"):
        topi.random.multinomial(generator(), te.placeholder((), "float32"), 2)
