"""Small models for the autotvm tests, and a clean dispatch state around each test."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.autotvm.task import clear_fallback_cache


def conv_model():
    """One 3x3 convolution 16 -> 32 channels on 14x14, then ReLU: ``(mod, params)``."""
    x = relay.var("x", shape=(1, 16, 14, 14))
    w = relay.var("w", shape=(32, 16, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1), channels=32, kernel_size=(3, 3)))
    rng = np.random.default_rng(0)
    return kiln.IRModule.from_expr(relay.Function([x, w], y)), {"w": rng.uniform(-1, 1, (32, 16, 3, 3)).astype("f4")}


def mixed_model():
    """A blocked convolution, a depthwise one, a packed dense and an unpacked dense: ``(mod, params)``."""
    rng = np.random.default_rng(1)
    x = relay.var("x", shape=(1, 16, 8, 8))
    w1 = relay.var("w1", shape=(16, 16, 3, 3))
    w2 = relay.var("w2", shape=(16, 1, 3, 3))
    w3 = relay.var("w3", shape=(32, 1024))
    w4 = relay.var("w4", shape=(64, 1024))
    y = relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1), channels=16, kernel_size=(3, 3)))
    y = relay.nn.conv2d(y, w2, padding=(1, 1), groups=16, channels=16, kernel_size=(3, 3))
    flat = relay.reshape(y, (1, 1024))
    z = relay.nn.dense(flat, w3)  # one row: unpacked
    rows = relay.reshape(relay.tile(flat, (64, 1)), (64, 1024))
    v = relay.nn.dense(rows, w4)  # 64 rows: packed
    out = relay.Tuple([z, v])
    params = {n: rng.uniform(-1, 1, shape).astype("f4") for n, shape in
              (("w1", (16, 16, 3, 3)), ("w2", (16, 1, 3, 3)), ("w3", (32, 1024)), ("w4", (64, 1024)))}
    return kiln.IRModule.from_expr(relay.Function([x, w1, w2, w3, w4], out)), params


def grouped_model():
    """A grouped convolution (two groups of 16 channels) and a batched matmul: ``(mod, params)``."""
    rng = np.random.default_rng(2)
    x = relay.var("x", shape=(1, 32, 8, 8))
    w = relay.var("w", shape=(32, 16, 3, 3))
    a = relay.var("a", shape=(2, 64, 32))
    b = relay.var("b", shape=(2, 48, 32))
    y = relay.nn.conv2d(x, w, padding=(1, 1), groups=2, channels=32, kernel_size=(3, 3))
    out = relay.Tuple([y, relay.nn.batch_matmul(a, b)])
    params = {"w": rng.uniform(-1, 1, (32, 16, 3, 3)).astype("f4")}
    return kiln.IRModule.from_expr(relay.Function([x, w, a, b], out)), params


def pooled_model():
    """Max and average pooling, a global pooling, and three reductions of a convolution's input: ``(mod, params)``.
    """
    x = relay.var("x", shape=(1, 16, 14, 14))
    w = relay.var("w", shape=(32, 16, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1), channels=32, kernel_size=(3, 3)))
    pooled = relay.nn.avg_pool2d(relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2)), (3, 3), padding=(1, 1))
    out = relay.Tuple([relay.nn.global_avg_pool2d(pooled), relay.mean(relay.sum(x, axis=[1]), axis=[2]),
                       relay.argmax(x, axis=[1])])
    params = {"w": np.random.default_rng(3).uniform(-1, 1, (32, 16, 3, 3)).astype("f4")}
    return kiln.IRModule.from_expr(relay.Function([x, w], out)), params


@pytest.fixture(autouse=True)
def _fresh_fallbacks():
    clear_fallback_cache()
    yield
    clear_fallback_cache()
