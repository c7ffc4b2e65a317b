"""Converters of kiln/relay/frontend/onnx/random.py (RandomUniform, RandomNormal, their *Like forms, Bernoulli,
Multinomial): onnxruntime draws other numbers, so each result is checked for onnxruntime's shape and dtype, for its
distribution, for repeating under a seed, and compiled against the interpreter."""

import numpy as np
import pytest
import scipy.stats

from kiln.error import OpAttributeInvalid, OpNotImplemented

RNG = np.random.default_rng(43)


def draw(ox, op_type, inputs, attrs, out_dtype="float32"):
    """kiln's result of a one-node model, after checking that its shape and dtype are onnxruntime's."""
    model = ox.node_model(op_type, inputs, attrs, out_dtype=out_dtype)
    (want,) = ox.run_ort(model, dict(inputs))
    (got,) = ox.run_kiln(model, dict(inputs))
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    return got


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random_uniform(ox, dtype):
    attrs = {"shape": [200, 300], "low": -3.0, "high": 5.0, "dtype": ox.elem_type(dtype), "seed": 2.0}
    values = draw(ox, "RandomUniform", {}, attrs, dtype)
    assert values.min() >= -3.0 and values.max() < 5.0
    assert scipy.stats.kstest(values.ravel(), scipy.stats.uniform(-3, 8).cdf).pvalue > 1e-4
    assert np.array_equal(values, draw(ox, "RandomUniform", {}, attrs, dtype))  # the same seed, the same numbers


def test_random_uniform_gives_tvms_numbers(ox):
    """TVM v0.16 gives these for ``RandomUniform(shape=[10], seed=5)``."""
    values = draw(ox, "RandomUniform", {}, {"shape": [10], "seed": 5.0})
    tvm_gives = [0.043976, 0.96656, 0.292199, 0.904297, 0.25167, 0.521778, 0.778985, 0.085463, 0.939846, 0.194201]
    np.testing.assert_allclose(values, tvm_gives, rtol=1e-5)


def test_random_normal(ox):
    attrs = {"shape": [300, 200], "mean": 2.0, "scale": 3.0, "seed": 8.0}
    values = draw(ox, "RandomNormal", {}, attrs)
    assert scipy.stats.kstest(values.ravel(), scipy.stats.norm(2, 3).cdf).pvalue > 1e-4
    other = draw(ox, "RandomNormal", {}, {**attrs, "seed": 9.0})
    assert not np.array_equal(values, other)


@pytest.mark.parametrize("op_type", ["RandomUniformLike", "RandomNormalLike"])
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_like(ox, op_type, dtype):
    x = RNG.random((40, 50)).astype("float32")
    attrs = {"seed": 3.0} if dtype is None else {"seed": 3.0, "dtype": ox.elem_type(dtype)}
    values = draw(ox, op_type, {"x": x}, attrs, dtype or "float32")
    assert values.std() > 0.2 and not np.array_equal(values, x)


def test_bernoulli(ox):
    p = np.concatenate([np.zeros(500), np.ones(500), np.full(20000, 0.3)]).astype("float32")
    ones = draw(ox, "Bernoulli", {"p": p}, {"seed": 4.0, "dtype": ox.elem_type("int32")}, "int32")
    assert set(np.unique(ones).tolist()) <= {0, 1}
    assert ones[:500].sum() == 0 and ones[500:1000].sum() == 500
    assert scipy.stats.binomtest(int(ones[1000:].sum()), 20000, 0.3).pvalue > 1e-4


def test_multinomial_takes_log_probabilities(ox):
    logits = np.log(np.array([[1, 2, 7], [5, 0, 5]], "float32") + 1e-30).astype("float32")
    draws = draw(ox, "Multinomial", {"x": logits}, {"sample_size": 20000, "seed": 6.0}, "int32")
    assert draws.dtype == np.int32 and draws.shape == (2, 20000)
    counts = [np.bincount(row, minlength=3) for row in draws]
    assert counts[1][1] == 0
    assert scipy.stats.chisquare(counts[0], 20000 * np.array([1, 2, 7]) / 10).pvalue > 1e-4
    assert scipy.stats.chisquare(counts[1][[0, 2]], [10000, 10000]).pvalue > 1e-4


def test_compiled_matches_the_interpreter(ox):
    from kiln.backend.onnx import prepare

    p = RNG.random((6, 50)).astype("float32")
    bern = ox.helper.make_node("Bernoulli", ["p"], ["b"], seed=1.0)
    multi = ox.helper.make_node("Multinomial", ["p"], ["m"], sample_size=9, seed=2.0, dtype=ox.elem_type("int64"))
    model = ox.make_model([bern, multi], {"p": p}, ["b", ("m", "int64")])
    want = ox.run_kiln(model, {"p": p})
    got = prepare(model).run({"p": p})
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and np.array_equal(g, w)


def test_bad_attributes(ox):
    with pytest.raises(OpNotImplemented, match="only float32 and float64"):
        ox.run_kiln(ox.node_model("RandomUniform", {}, {"shape": [2], "dtype": ox.elem_type("float16")},
                                  out_dtype="float16"), {})
    with pytest.raises(OpAttributeInvalid, match="seed -1.0 must be a whole number >= 0"):
        ox.run_kiln(ox.node_model("RandomNormal", {}, {"shape": [2], "seed": -1.0}), {})
