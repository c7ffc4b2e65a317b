"""TVM's pooling entry points (pool1d, pool3d, adaptive_pool, adaptive_pool3d, pool_grad) built with the generic
schedules and run against numpy."""

import numpy as np
import pytest

import kiln
from kiln import te, topi
from kiln.error import OpAttributeInvalid


def _run(outs, inputs, arrays):
    s = topi.generic.schedule_pool(outs)
    f = kiln.build(s, [*inputs, outs], "llvm")
    out = kiln.nd.empty([int(d) for d in outs.shape], outs.dtype)
    f(*[kiln.nd.array(a) for a in arrays], out)
    return out.numpy()


def test_pool1d_max_and_avg():
    x = np.random.uniform(size=(2, 3, 11)).astype("float32")
    A = te.placeholder(x.shape, name="A")
    got = _run(topi.nn.pool1d(A, [3], [2], [1], [1, 1], "max", layout="NCW"), [A], [x])
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1)), constant_values=-np.inf)
    want = np.stack([padded[..., 2 * i:2 * i + 3].max(-1) for i in range(got.shape[-1])], -1)
    np.testing.assert_allclose(got, want)
    got = _run(topi.nn.pool1d(A, [2], [2], [1], [0, 0], "avg"), [A], [x])
    np.testing.assert_allclose(got, x[..., :10].reshape(2, 3, 5, 2).mean(-1), rtol=1e-6)


def test_pool3d_avg():
    x = np.random.uniform(size=(1, 2, 4, 6, 6)).astype("float32")
    A = te.placeholder(x.shape, name="A")
    got = _run(topi.nn.pool3d(A, [2, 2, 2], [2, 2, 2], [1, 1, 1], [0] * 6, "avg"), [A], [x])
    np.testing.assert_allclose(got, x.reshape(1, 2, 2, 2, 3, 2, 3, 2).mean((3, 5, 7)), rtol=1e-5)


def test_adaptive_pool_to_one_is_global():
    x = np.random.uniform(size=(2, 3, 5, 7)).astype("float32")
    A = te.placeholder(x.shape, name="A")
    got = _run(topi.nn.adaptive_pool(A, (1, 1), "max"), [A], [x])
    np.testing.assert_allclose(got, x.max((2, 3), keepdims=True))
    x3 = np.random.uniform(size=(1, 2, 4, 4, 4)).astype("float32")
    A3 = te.placeholder(x3.shape, name="A3")
    got = _run(topi.nn.adaptive_pool3d(A3, (2, 2, 2), "avg"), [A3], [x3])
    np.testing.assert_allclose(got, x3.reshape(1, 2, 2, 2, 2, 2, 2, 2).mean((3, 5, 7)), rtol=1e-5)


def test_pool_grad_avg_spreads_the_gradient():
    x = np.random.uniform(size=(1, 2, 4, 4)).astype("float32")
    g = np.random.uniform(size=(1, 2, 2, 2)).astype("float32")
    A, G = te.placeholder(x.shape, name="A"), te.placeholder(g.shape, name="G")
    grad = topi.nn.pool_grad(G, A, (2, 2), (2, 2), (0, 0, 0, 0), "avg")
    got = _run(grad, [A, G], [x, g])
    np.testing.assert_allclose(got, np.repeat(np.repeat(g, 2, 2), 2, 3) / 4, rtol=1e-6)


def test_bad_arguments():
    A = te.placeholder((1, 2, 8), name="A")
    with pytest.raises(OpAttributeInvalid, match="padding needs 2 values"):
        topi.nn.pool1d(A, [2], [1], [1], [0, 0, 0], "max")
    with pytest.raises(OpAttributeInvalid, match="only the NCHW layout"):
        topi.nn.pool_grad(A, A, (2, 2), (2, 2), (0, 0, 0, 0), "avg", layout="NHWC")


def test_tiled_spatial_layouts_are_refused():
    with pytest.raises(OpAttributeInvalid, match="Unsupported layout NCHWD4d"):
        topi.nn.pool3d(te.placeholder((1, 16, 8, 8, 8), name="A"), [2] * 3, [2] * 3, [1] * 3, [0] * 6, "avg",
                       layout="NCHWD4d")
    with pytest.raises(OpAttributeInvalid, match="Unsupported layout NCHW4h4w"):
        topi.nn.pool2d(te.placeholder((1, 16, 8, 8), name="A"), [2, 2], [2, 2], [1, 1], [0] * 4, "avg",
                       layout="NCHW4h4w")
