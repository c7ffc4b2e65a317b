"""Operators of kiln/relay/op/elemwise.py, ``sort`` and the batch/space moves, ``nn.dilate`` and the losses of
nn_extra.py against numpy, in the reference interpreter and compiled for llvm and c."""

import math

import numpy as np
import pytest

from kiln import relay
from kiln.error import TypeInferenceError

from .checks import check

RNG = np.random.default_rng(29)


def v(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


def test_more_elementwise_and_reinterpret():
    a = RNG.uniform(0.5, 3.0, (2, 3)).astype("float32")
    x = v("x", (2, 3))
    erf = np.vectorize(math.erf)(a.astype("float64")).astype("float32")
    check(relay.Tuple([relay.log2(x), relay.log10(x), relay.fast_exp(x), relay.fast_tanh(x), relay.fast_erf(x),
                       relay.copy(x), relay.reinterpret(x, "uint32")]), {"x": a},
          (np.log2(a), np.log10(a), np.exp(a), np.tanh(a), erf, a, a.view("uint32")))
    with pytest.raises(TypeInferenceError, match="reinterpret"):
        relay.infer_type(relay.reinterpret(x, "float16"))


@pytest.mark.parametrize("axis,ascend", [(-1, True), (0, False)])
def test_sort(axis, ascend):
    a = RNG.integers(0, 5, (3, 4)).astype("int32")
    want = np.sort(a, axis=axis) if ascend else -np.sort(-a, axis=axis)
    check(relay.sort(v("x", a.shape, "int32"), axis, ascend), {"x": a}, want)


def test_dilate():
    a = RNG.standard_normal((2, 3)).astype("float32")
    want = np.full((3, 7), 9.0, "float32")
    want[::2, ::3] = a
    check(relay.nn.dilate(v("x", a.shape), (2, 3), 9.0), {"x": a}, want)


def test_space_to_batch_and_back():
    a = RNG.standard_normal((2, 4, 3, 2)).astype("float32")
    block, pads = (2, 3), ((0, 2), (1, 2))
    padded = np.pad(a, ((0, 0), (0, 2), (1, 2), (0, 0)))
    want = padded.reshape(2, 3, 2, 2, 3, 2).transpose(2, 4, 0, 1, 3, 5).reshape(12, 3, 2, 2)
    check(relay.nn.space_to_batch_nd(v("x", a.shape), block, pads), {"x": a}, want)
    check(relay.nn.batch_to_space_nd(v("y", want.shape), block, pads), {"y": want}, a)
    with pytest.raises(TypeInferenceError, match="nn.space_to_batch_nd"):
        relay.infer_type(relay.nn.space_to_batch_nd(v("x", a.shape), (3, 3), ((0, 0), (0, 0))))


def test_losses_share_variables():
    p = RNG.uniform(0.1, 1.0, (3, 4)).astype("float32")
    t = RNG.uniform(0.0, 1.0, (3, 4)).astype("float32")
    pv, tv = v("p", p.shape), v("t", t.shape)
    check(relay.Tuple([relay.nn.cross_entropy(pv, tv), relay.nn.cross_entropy_with_logits(pv, tv)]),
          {"p": p, "t": t}, (np.float32(-np.sum(np.log(p) * t) / 3), np.float32(-np.sum(p * t) / 3)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
    pred = RNG.standard_normal((3, 4, 2)).astype("float32")
    target = np.array([[0, 3], [1, -100], [2, 2]], "int32")
    weights = RNG.uniform(0.5, 2, (4,)).astype("float32")
    loss = np.zeros((3, 2), "float32")
    wsum = 0.0
    for n in range(3):
        for d in range(2):
            if target[n, d] != -100:
                loss[n, d] = -pred[n, target[n, d], d] * weights[target[n, d]]
                wsum += weights[target[n, d]]
    want = {"none": loss, "sum": np.float32(loss.sum()), "mean": np.float32(loss.sum() / wsum)}[reduction]
    check(relay.nn.nll_loss(v("p", pred.shape), v("t", target.shape, "int32"), v("w", (4,)), reduction),
          {"p": pred, "t": target, "w": weights}, want)


@pytest.mark.parametrize("strides,padding,groups", [((1, 1), (0, 0), 1), ((2, 1), (1, 1), 2)])
def test_conv2d_backward_weight(strides, padding, groups):
    data = RNG.standard_normal((2, 4, 6, 5)).astype("float32")
    oh = (6 + 2 * padding[0] - 3) // strides[0] + 1
    ow = (5 + 2 * padding[1] - 3) // strides[1] + 1
    grad = RNG.standard_normal((2, 6, oh, ow)).astype("float32")
    xp = np.pad(data, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    cg, og = 4 // groups, 6 // groups
    want = np.zeros((6, cg, 3, 3))
    for f in range(6):
        for ch in range(cg):
            for ky in range(3):
                for kx in range(3):
                    for y in range(oh):
                        for x in range(ow):
                            want[f, ch, ky, kx] += np.dot(grad[:, f, y, x],
                                                          xp[:, (f // og) * cg + ch, y * strides[0] + ky,
                                                             x * strides[1] + kx])
    expr = relay.nn.conv2d_backward_weight(v("g", grad.shape), v("d", data.shape), strides, padding, groups=groups,
                                           channels=6, kernel_size=(3, 3))
    check(expr, {"g": grad, "d": data}, want.astype("float32"), rtol=1e-4)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("strides,padding", [((2, 2), (0, 0)), ((1, 2), (1, 1))])
def test_pool2d_grad(kind, strides, padding):
    data = RNG.standard_normal((1, 2, 5, 6)).astype("float32")
    oh = (5 + 2 * padding[0] - 3) // strides[0] + 1
    ow = (6 + 2 * padding[1] - 2) // strides[1] + 1
    out_grad = RNG.standard_normal((1, 2, oh, ow)).astype("float32")
    want = np.zeros_like(data)
    for y in range(oh):
        for x in range(ow):
            y0, x0 = y * strides[0] - padding[0], x * strides[1] - padding[1]
            ys, ye, xs, xe = max(y0, 0), min(y0 + 3, 5), max(x0, 0), min(x0 + 2, 6)
            for ch in range(2):
                if kind == "max":
                    win = data[0, ch, ys:ye, xs:xe]
                    r, q = np.unravel_index(np.argmax(win), win.shape)
                    want[0, ch, ys + r, xs + q] += out_grad[0, ch, y, x]
                else:
                    want[0, ch, ys:ye, xs:xe] += out_grad[0, ch, y, x] / 6
    build = relay.nn.max_pool2d_grad if kind == "max" else relay.nn.avg_pool2d_grad
    expr = build(v("g", out_grad.shape), v("d", data.shape), (3, 2), strides, padding)
    check(expr, {"g": out_grad, "d": data}, want, rtol=1e-5)


@pytest.mark.parametrize("sparse_lhs", [False, True])
def test_sparse_dense(sparse_lhs):
    dense = RNG.standard_normal((3, 5)).astype("float32")
    w = RNG.standard_normal((4, 5)).astype("float32") * (RNG.random((4, 5)) < 0.5)
    indptr = np.concatenate([[0], np.cumsum((w != 0).sum(axis=1))]).astype("int32")
    rows, cols = np.nonzero(w)
    data, indices = w[rows, cols].astype("float32"), cols.astype("int32")
    want = w @ dense.T if sparse_lhs else dense @ w.T
    expr = relay.nn.sparse_dense(v("x", dense.shape), (v("d", data.shape), v("i", indices.shape, "int32"),
                                                       v("p", indptr.shape, "int32")), sparse_lhs)
    check(expr, {"x": dense, "d": data, "i": indices, "p": indptr}, want.astype("float32"))


def test_debug_passes_the_value_through_and_calls_back():
    seen = []
    a = RNG.standard_normal((2, 3)).astype("float32")
    check(relay.add(relay.debug(v("x", a.shape), seen.append), relay.const(1.0)), {"x": a}, a + 1)
    assert len(seen) == 1 and np.array_equal(seen[0], a)


def test_sparse_add():
    dense = RNG.standard_normal((4, 5)).astype("float32")
    w = RNG.standard_normal((4, 5)).astype("float32") * (RNG.random((4, 5)) < 0.4)
    indptr = np.concatenate([[0], np.cumsum((w != 0).sum(axis=1))]).astype("int64")
    rows, cols = np.nonzero(w)
    expr = relay.nn.sparse_add(v("x", dense.shape), (v("d", (len(rows),)), v("i", (len(rows),), "int64"),
                                                     v("p", indptr.shape, "int64")))
    check(expr, {"x": dense, "d": w[rows, cols].astype("float32"), "i": cols.astype("int64"), "p": indptr}, dense + w)
