"""Dense/matmul, normalization, softmax, padding, LRN ... of the reference interpreter against independent
references written with explicit loops or plain formulas."""

import itertools
import math

import numpy as np
import pytest

from kiln import relay

RNG = np.random.default_rng(4)


def run(expr, **inputs):
    params = relay.analysis.free_vars(expr)
    out = relay.create_executor().evaluate(relay.Function(params, expr))(**inputs)
    return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()


def v(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


def rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def test_bias_add_relu_leaky_relu():
    x, b = rand(2, 3, 4), rand(3)
    out = run(relay.nn.bias_add(v("x", (2, 3, 4)), v("b", (3,))), x=x, b=b)
    for i, c, k in itertools.product(range(2), range(3), range(4)):
        assert out[i, c, k] == np.float32(x[i, c, k] + b[c])
    last = run(relay.nn.bias_add(v("x", (2, 3, 4)), v("b", (4,)), axis=-1), x=x, b=b[:1].repeat(4))
    np.testing.assert_array_equal(last, x + b[0])
    np.testing.assert_array_equal(run(relay.nn.relu(v("x", x.shape)), x=x), np.where(x > 0, x, 0))
    out = run(relay.nn.leaky_relu(v("x", x.shape), alpha=0.2), x=x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[[t if t > 0 else 0.2 * t for t in r] for r in m] for m in x], rtol=1e-6)


def test_dense_and_out_dtype():
    x, w = rand(3, 5), rand(4, 5)
    expected = [[sum(float(x[i, k]) * float(w[j, k]) for k in range(5)) for j in range(4)] for i in range(3)]
    np.testing.assert_allclose(run(relay.nn.dense(v("x", (3, 5)), v("w", (4, 5))), x=x, w=w), expected, rtol=1e-5)
    xi = RNG.integers(-128, 128, (2, 6)).astype("int8")
    wi = RNG.integers(-128, 128, (3, 6)).astype("int8")
    out = run(relay.nn.dense(v("x", (2, 6), "int8"), v("w", (3, 6), "int8"), out_dtype="int32"), x=xi, w=wi)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, xi.astype("int64") @ wi.astype("int64").T)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_transposes(ta, tb):
    a = rand(2, 4, 3) if ta else rand(2, 3, 4)  # logical (2, 3, 4)
    b = rand(5, 4) if tb else rand(4, 5)        # logical (4, 5)
    la = a.transpose(0, 2, 1) if ta else a
    lb = b.T if tb else b
    out = run(relay.nn.matmul(v("a", a.shape), v("b", b.shape), transpose_a=ta, transpose_b=tb), a=a, b=b)
    expected = np.einsum("bik,kj->bij", la.astype("f8"), lb.astype("f8"))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ta,tb", [(False, True), (False, False), (True, True), (True, False)])
def test_batch_matmul_transposes_and_broadcast(ta, tb):
    x = rand(1, 4, 3) if ta else rand(1, 3, 4)  # logical (1, 3, 4): batch 1 broadcasts
    y = rand(2, 5, 4) if tb else rand(2, 4, 5)  # logical (2, 4, 5)
    lx = x.transpose(0, 2, 1) if ta else x
    ly = y.transpose(0, 2, 1) if tb else y
    out = run(relay.nn.batch_matmul(v("x", x.shape), v("y", y.shape), transpose_a=ta, transpose_b=tb), x=x, y=y)
    assert out.shape == (2, 3, 5)
    for b in range(2):
        np.testing.assert_allclose(out[b], lx[0].astype("f8") @ ly[b], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis,center,scale", [(1, True, True), (-1, False, True), (2, True, False)])
def test_batch_norm_three_outputs(axis, center, scale):
    x = rand(2, 3, 4)
    c = x.shape[axis]
    gamma, beta, mean, var = rand(c), rand(c), rand(c), np.abs(rand(c)) + 0.5
    out, m, s = run(relay.nn.batch_norm(v("x", x.shape), v("g", (c,)), v("b", (c,)), v("m", (c,)), v("s", (c,)),
                                        axis=axis, epsilon=1e-3, center=center, scale=scale).astuple(),
                    x=x, g=gamma, b=beta, m=mean, s=var)
    np.testing.assert_array_equal(m, mean)
    np.testing.assert_array_equal(s, var)
    for idx in itertools.product(*map(range, x.shape)):
        k = idx[axis]
        expected = (x[idx] - mean[k]) / math.sqrt(var[k] + 1e-3) * (gamma[k] if scale else 1)
        expected += beta[k] if center else 0
        assert out[idx] == pytest.approx(expected, rel=1e-5, abs=1e-6)


def test_layer_norm():
    x, gamma, beta = rand(2, 3, 6), rand(6), rand(6)
    out = run(relay.nn.layer_norm(v("x", x.shape), v("g", (6,)), v("b", (6,)), epsilon=1e-5), x=x, g=gamma, b=beta)
    for i, j in itertools.product(range(2), range(3)):
        row = x[i, j].astype("f8")
        normalized = (row - row.mean()) / math.sqrt(row.var() + 1e-5)
        np.testing.assert_allclose(out[i, j], normalized * gamma + beta, rtol=1e-4, atol=1e-5)
    y = rand(4, 3)
    out = run(relay.nn.layer_norm(v("y", y.shape), v("g", (4,)), v("b", (4,)), axis=0, scale=False), y=y,
              g=gamma[:4], b=beta[:4])
    col = y.astype("f8")
    np.testing.assert_allclose(out, (col - col.mean(0)) / np.sqrt(col.var(0) + 1e-5) + beta[:4, None], rtol=1e-4,
                               atol=1e-5)


def test_softmax_and_log_softmax_are_stable():
    x = np.array([[1000.0, 1001.0, 1002.0], [-5.0, 0.0, 5.0]], "float32")
    out = run(relay.nn.softmax(v("x", x.shape)), x=x)
    for i in range(2):
        exps = [math.exp(t - max(x[i])) for t in x[i]]
        np.testing.assert_allclose(out[i], [e / sum(exps) for e in exps], rtol=1e-6)
    log = run(relay.nn.log_softmax(v("x", x.shape), axis=0), x=x)
    for j in range(3):
        col = [float(t) for t in x[:, j]]
        lse = max(col) + math.log(sum(math.exp(t - max(col)) for t in col))
        np.testing.assert_allclose(log[:, j], [t - lse for t in col], rtol=1e-6, atol=1e-6)
    assert np.isfinite(log).all()


def test_batch_flatten_and_dropout():
    x = rand(2, 3, 4)
    np.testing.assert_array_equal(run(relay.nn.batch_flatten(v("x", x.shape)), x=x), x.reshape(2, 12))
    np.testing.assert_array_equal(run(relay.nn.dropout(v("x", x.shape), 0.3), x=x), x)
    _, mask = run(relay.nn.dropout_raw(v("x", x.shape), 0.3), x=x)
    np.testing.assert_array_equal(mask, np.ones_like(x))


def test_pad_modes():
    x = np.arange(12, dtype="float32").reshape(3, 4)
    width = ((1, 2), (2, 1))
    out = run(relay.nn.pad(v("x", (3, 4)), width, pad_value=-1.0), x=x)
    assert out.shape == (6, 7)
    for i, j in itertools.product(range(6), range(7)):
        inside = 1 <= i < 4 and 2 <= j < 6
        assert out[i, j] == (x[i - 1, j - 2] if inside else -1)

    def mirror(k, n):  # reflect without repeating the edge
        while k < 0 or k >= n:
            k = -k if k < 0 else 2 * (n - 1) - k
        return k

    edge = run(relay.nn.pad(v("x", (3, 4)), width, pad_mode="edge"), x=x)
    refl = run(relay.nn.pad(v("x", (3, 4)), width, pad_mode="reflect"), x=x)
    for i, j in itertools.product(range(6), range(7)):
        assert edge[i, j] == x[min(max(i - 1, 0), 2), min(max(j - 2, 0), 3)]
        assert refl[i, j] == x[mirror(i - 1, 3), mirror(j - 2, 4)]
    xi = np.arange(4, dtype="int32")
    padded = run(relay.nn.pad(v("x", (4,), "int32"), ((1, 1),), pad_value=relay.const(9)), x=xi)
    assert padded.dtype == np.int32 and padded.tolist() == [9, 0, 1, 2, 3, 9]


@pytest.mark.parametrize("size,axis", [(3, 1), (5, 1), (4, 1), (3, 3)])
def test_lrn(size, axis):
    x = rand(2, 6, 3, 4)
    bias, alpha, beta = 2.0, 1e-2, 0.75
    out = run(relay.nn.lrn(v("x", x.shape), size=size, axis=axis, bias=bias, alpha=alpha, beta=beta), x=x)
    n = x.shape[axis]
    for idx in itertools.product(*map(range, x.shape)):
        c = idx[axis]
        total = 0.0
        for k in range(c - size // 2, c - size // 2 + size):  # topi's window: size channels from c - size // 2
            if 0 <= k < n:
                other = list(idx)
                other[axis] = k
                total += float(x[tuple(other)]) ** 2
        expected = x[idx] / (bias + alpha * total / size) ** beta
        assert out[idx] == pytest.approx(expected, rel=1e-5)
