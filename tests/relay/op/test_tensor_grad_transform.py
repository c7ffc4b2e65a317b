"""The gradients of the shape, data-movement and reduction operators (kiln/relay/op/_tensor_grad_transform.py), each
checked against central differences."""

import numpy as np
import pytest

from kiln import relay

from .grad_checks import case, run_case, uniform

X = (2, 3, 4)


def _ints(values, dtype="int32"):
    return relay.const(np.array(values, dtype))


def _distinct(*shapes):
    """Arguments whose elements all differ (max/min pick one element, never a tie)."""
    def draw(rng):
        out = []
        for s in shapes:
            n = int(np.prod(s))
            out.append((rng.permutation(n) + rng.uniform(0.1, 0.9, n)).reshape(s) / n)
        return out

    return draw


def _with_ties(shape):
    """Arguments where every row has its maximum exactly twice: each gets half the gradient, which is also what
    central differences see (a one-sided change of one of two tied maxima)."""
    def draw(rng):
        x = rng.uniform(-1, 1, shape)
        x[..., 1] = x.max(axis=-1) + 1
        x[..., 2] = x[..., 1]
        return [x]

    return draw


CASES = [
    case("reshape", lambda x: relay.reshape(x, (4, -1)), X),
    case("reshape", lambda x: relay.reshape(x, (0, -4, 1, 3, -2)), X),
    case("contrib_reverse_reshape", lambda x: relay.reverse_reshape(x, (-1, 0)), X),
    case("squeeze", lambda x: relay.squeeze(x, [1]), (2, 1, 3)),
    case("reshape_like", lambda x, y: relay.reshape_like(x, y), X, (6, 4), tested=(0,), inputs=uniform(X, (6, 4))),
    case("nn.batch_flatten", lambda x: relay.nn.batch_flatten(x), X),
    case("dyn.reshape", lambda x, s: relay.reshape(x, s), X, (2,), dtypes=("float64", "int64"),
         inputs=lambda rng: [rng.uniform(-1, 1, X), np.array([4, 6])], tested=(0,)),
    case("expand_dims", lambda x: relay.expand_dims(x, 1, 2), X),
    case("transpose", lambda x: relay.transpose(x, (2, 0, 1)), X),
    case("transpose", lambda x: relay.transpose(x, (-1, 0, 1)), X),
    case("transpose", lambda x: relay.transpose(x), X),
    case("broadcast_to", lambda x: relay.broadcast_to(x, (2, 3, 4)), (3, 1)),
    case("broadcast_to_like", lambda x, y: relay.broadcast_to_like(x, y), (1, 4), X, tested=(0,),
         inputs=uniform((1, 4), X)),
    case("collapse_sum_like", lambda x, y: relay.collapse_sum_like(x * x, y), X, (3, 1), tested=(0,),
         inputs=uniform(X, (3, 1))),
    case("collapse_sum_to", lambda x: relay.collapse_sum_to(x * x, (3, 1)), X, inputs=uniform(X)),
    case("layout_transform", lambda x: relay.layout_transform(x, "NCHW", "NHWC"), (1, 2, 3, 2)),
    case("reverse", lambda x: relay.reverse(x, 1), X),
    case("concatenate", lambda x, y: relay.concatenate([x, y * y, x], axis=1), X, (2, 2, 4), inputs=uniform(X, (2, 2, 4))),
    case("concatenate", lambda x: relay.concatenate([x], axis=-1), X),
    case("stack", lambda x, y: relay.stack([x, y * y], axis=-1), X, X, inputs=uniform(X, X)),
    case("split", lambda x: relay.split(x, (1, 3), axis=2)[2] * relay.split(x, (1, 3), axis=2)[0], X,
         inputs=uniform(X)),
    case("split", lambda x: relay.split(x, 3, axis=1).astuple(), X, mode="first_order"),
    case("tile", lambda x: relay.tile(x, (2, 1, 3)), X),
    case("tile", lambda x: relay.tile(x, (2, 2)), (3, 2)),
    case("repeat", lambda x: relay.repeat(x, 3, 1), X),
    case("strided_slice", lambda x: relay.strided_slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)), X),
    case("strided_slice", lambda x: relay.strided_slice(x, (1, 2, 3), (0, 0, 0), (-1, -1, -2)), X),
    case("strided_slice", lambda x: relay.strided_slice(x, (0, 1, 0), (-1, -1, 2), slice_mode="size"), X),
    case("strided_slice", lambda x: relay.strided_slice(x, (1,), (3,), axes=(2,)), X),
    case("take", lambda x: relay.take(x, _ints([0, 2, 2, 1, 3]), axis=2), X),
    case("take", lambda x: relay.take(x, _ints([[0, 5], [23, 5]])), X),
    case("take", lambda x: relay.take(x, _ints(1), axis=1), X),
    case("take", lambda x: relay.take(x, _ints([-1, 4, 7]), axis=0, mode="wrap"), X),
    case("take", lambda x: relay.take(x, _ints([-1, 4, 2]), axis=1, mode="clip"), X),
    case("gather_nd", lambda x: relay.gather_nd(x, _ints([[0, 1, 1], [2, 0, 2]])), (2, 3)),
    case("one_hot", lambda on, off: relay.one_hot(_ints([0, 2, 1, 2]), on, off, 3, -1, "float64"), (), ()),
    case("arange", lambda a: relay.arange(relay.const(1.0, "float64"), relay.const(6.0, "float64"),
                                          relay.const(1.5, "float64"), "float64") * a, (4,)),
    case("dyn.arange", lambda a, b, c: relay.arange(a, b, c, "float64") * relay.arange(a, b, c, "float64"),
         (), (), (), inputs=lambda rng: [np.array(2.5), np.array(9.5), np.array(1.8)]),
    case("sum", lambda x: relay.sum(x), X),
    case("sum", lambda x: relay.sum(x, axis=(0, 2), keepdims=True), X),
    case("sum", lambda x: relay.sum(x, axis=1, exclude=True), X),
    case("mean", lambda x: relay.mean(x, axis=-1), X),
    case("mean", lambda x: relay.mean(x, keepdims=True), X),
    case("prod", lambda x: relay.prod(x, axis=1), X, inputs=uniform(X, low=0.5, high=1.5)),
    case("max", lambda x: relay.max(x, axis=(0, 2)), X, inputs=_distinct(X)),
    case("max", lambda x: relay.max(x), X, inputs=_distinct(X)),
    case("max", lambda x: relay.max(x, axis=-1, keepdims=True), (2, 5), inputs=_with_ties((2, 5)), eps=1e-9),
    case("min", lambda x: relay.min(x, axis=1, exclude=True), X, inputs=_distinct(X)),
    case("variance", lambda x: relay.variance(x, axis=1), X, inputs=uniform(X)),
    case("variance", lambda x: relay.variance(x, axis=(0, 2), keepdims=True, unbiased=True), X, inputs=uniform(X)),
    case("variance", lambda x, m: relay.op.reduce._variance(x, m, (1,), False, False, False), X, (2, 1, 4),
         inputs=uniform(X, (2, 1, 4))),
]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.op)
def test_gradient(c):
    run_case(c)


def test_max_splits_ties():
    """``max`` over a row whose maximum appears twice gives each of them half the gradient (TVM's rule)."""
    x = relay.var("x", shape=(1, 3), dtype="float64")
    back = relay.transform.gradient(relay.Function([x], relay.max(x, axis=1)))
    _, (g,) = relay.create_executor().evaluate(back)(np.array([[2.0, 5.0, 5.0]]))
    np.testing.assert_allclose(g.numpy(), [[0.0, 0.5, 0.5]])


def test_take_sums_repeated_indices():
    """``take`` reading one element three times sends it three times the gradient."""
    x = relay.var("x", shape=(4,), dtype="float64")
    back = relay.transform.gradient(relay.Function([x], relay.take(x, _ints([1, 1, 3, 1]))))
    _, (g,) = relay.create_executor().evaluate(back)(np.arange(4.0))
    np.testing.assert_allclose(g.numpy(), [0.0, 3.0, 0.0, 1.0])
