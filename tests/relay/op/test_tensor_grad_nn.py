"""The gradients of the neural-network operators (kiln/relay/op/_tensor_grad_nn.py), each checked against central
differences."""

import numpy as np
import pytest

from kiln import relay

from .grad_checks import away_from, case, run_case, uniform


def _positive_rows(shape):
    """Probabilities (positive rows summing to 1) and targets, for the cross-entropy losses."""
    def draw(rng):
        p = rng.uniform(0.2, 1.0, shape)
        return [p / p.sum(axis=1, keepdims=True), rng.uniform(0, 1, shape)]

    return draw


def _distinct(shape):
    def draw(rng):
        n = int(np.prod(shape))
        return [(rng.permutation(n) + rng.uniform(0.1, 0.9, n)).reshape(shape) / n]

    return draw


def _matmul_cases():
    out = []
    for ta in (False, True):
        for tb in (False, True):
            a, b = ((4, 3) if ta else (3, 4)), ((5, 4) if tb else (4, 5))
            out.append(case("nn.matmul", lambda x, y, ta=ta, tb=tb: relay.nn.matmul(x, y, transpose_a=ta,
                                                                                  transpose_b=tb), a, b,
                            inputs=uniform(a, b)))
            ba, bb = (2,) + a, ((1,) + b)  # the second operand broadcast over the batch
            out.append(case("nn.batch_matmul", lambda x, y, ta=ta, tb=tb: relay.nn.batch_matmul(
                x, y, transpose_a=ta, transpose_b=tb), ba, bb, inputs=uniform(ba, bb)))
    return out


def _conv(strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, data=(1, 2, 5, 5), weight=(4, 2, 3, 3)):
    return case("nn.conv2d", lambda x, w: relay.nn.conv2d(x, w, strides=strides, padding=padding, dilation=dilation,
                                                          groups=groups), data, weight, inputs=uniform(data, weight))


CASES = [
    case("nn.relu", lambda x: relay.nn.relu(x), (2, 3), inputs=away_from([0.0], (2, 3))),
    case("nn.leaky_relu", lambda x: relay.nn.leaky_relu(x, 0.2), (2, 3), inputs=away_from([0.0], (2, 3))),
    case("nn.prelu", lambda x, a: relay.nn.prelu(x, a, axis=1), (2, 3, 2), (3,),
         inputs=lambda rng: away_from([0.0], (2, 3, 2))(rng) + [rng.uniform(0.1, 0.5, 3)]),
    case("nn.softmax", lambda x: relay.nn.softmax(x, axis=1) * relay.const(np.arange(12.0).reshape(2, 3, 2), "float64"),
         (2, 3, 2), inputs=uniform((2, 3, 2))),
    case("nn.log_softmax", lambda x: relay.nn.log_softmax(x) * relay.const(np.arange(6.0).reshape(2, 3), "float64"), (2, 3),
         inputs=uniform((2, 3))),
    case("nn.bias_add", lambda x, b: relay.nn.bias_add(x, b, axis=1) * x, (2, 3, 2), (3,), inputs=uniform((2, 3, 2),
                                                                                                        (3,))),
    case("nn.dense", lambda x, w: relay.nn.dense(x, w), (3, 4), (5, 4), inputs=uniform((3, 4), (5, 4))),
    case("nn.dense", lambda x, w: relay.nn.dense(x, w), (2, 3, 4), (5, 4), inputs=uniform((2, 3, 4), (5, 4))),
    *_matmul_cases(),
    _conv(),
    _conv(strides=(2, 2), padding=(1, 1)),
    _conv(strides=(2, 1), padding=(1, 0, 0, 2), data=(1, 2, 6, 5)),
    _conv(dilation=(2, 1), padding=(1, 1), data=(2, 2, 6, 4)),
    _conv(groups=2, data=(1, 4, 4, 4), weight=(2, 2, 3, 3)),
    case("nn.max_pool2d", lambda x: relay.nn.max_pool2d(x, (2, 2), (2, 2), padding=(1, 1)), (1, 2, 4, 4),
         inputs=_distinct((1, 2, 4, 4))),
    case("nn.max_pool2d", lambda x: relay.nn.max_pool2d(x, (3, 3), (2, 2), ceil_mode=True), (1, 1, 6, 6),
         inputs=_distinct((1, 1, 6, 6))),
    case("nn.avg_pool2d", lambda x: relay.nn.avg_pool2d(x, (2, 2), (1, 1), padding=(1, 1)), (1, 2, 4, 4)),
    case("nn.avg_pool2d", lambda x: relay.nn.avg_pool2d(x, (2, 2), (2, 2), padding=(1, 1), count_include_pad=True),
         (1, 2, 4, 4)),
    case("nn.global_avg_pool2d", lambda x: relay.nn.global_avg_pool2d(x), (2, 3, 3, 2)),
    case("nn.global_max_pool2d", lambda x: relay.nn.global_max_pool2d(x), (2, 3, 3, 2), inputs=_distinct((2, 3, 3, 2))),
    case("nn.cross_entropy", lambda x, y: relay.nn.cross_entropy(x, y), (3, 4), (3, 4), inputs=_positive_rows((3, 4))),
    case("nn.cross_entropy_with_logits", lambda x, y: relay.nn.cross_entropy_with_logits(x, y), (3, 4), (3, 4),
         inputs=_positive_rows((3, 4))),
    case("nn.pad", lambda x, v: relay.nn.pad(x, ((0, 1), (2, 1)), v) * relay.const(np.arange(24.0).reshape(4, 6), "float64"),
         (3, 3), ()),
]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.op)
def test_gradient(c):
    run_case(c)


def test_conv2d_gradient_matches_the_reference_weight_gradient():
    """The weight gradient of ``conv2d`` equals ``topi.testing.conv2d_backward_weight_python`` (all-ones adjoint)."""
    from kiln.topi.testing import conv2d_backward_weight_python

    rng = np.random.default_rng(3)
    x_np, w_np = rng.uniform(-1, 1, (2, 3, 7, 7)), rng.uniform(-1, 1, (4, 3, 3, 3))
    x, w = relay.var("x", shape=x_np.shape, dtype="float64"), relay.var("w", shape=w_np.shape, dtype="float64")
    back = relay.transform.gradient(relay.Function([x, w], relay.nn.conv2d(x, w, strides=(2, 2), padding=(1, 1))))
    out, (_, gw) = relay.create_executor().evaluate(back)(x_np, w_np)
    want = conv2d_backward_weight_python(np.ones(out.numpy().shape), x_np, (3, 3), (2, 2), (1, 1))
    np.testing.assert_allclose(gw.numpy(), want, rtol=1e-10)
