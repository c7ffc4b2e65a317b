"""Every reference implementation returns exactly the dtype and shape its type relation gives, for float16/32/64
and integer inputs, even when called on an untyped expression (as FoldConstant may), where the interpreter does not
cast results."""

import numpy as np
import pytest

from kiln import relay
from kiln.ir import TupleType
from kiln.relay.interpreter import evaluate_expr

RNG = np.random.default_rng(7)


def c(*shape):
    return relay.const(np.ones(shape, "float32"))


# builders taking a function var(shape) -> Var of the dtype under test; some ops only make sense for floats
ANY_DTYPE = {
    "add": lambda v: v((2, 3)) + v((3,)), "subtract": lambda v: relay.subtract(v((2, 3)), v((2, 1))),
    "multiply": lambda v: v((2, 3)) * v(()), "divide": lambda v: relay.divide(v((2, 3)), v((2, 3))),
    "maximum": lambda v: relay.maximum(v((2, 3)), v((3,))), "minimum": lambda v: relay.minimum(v((2,)), v((2,))),
    "abs": lambda v: relay.abs(v((4,))), "negative": lambda v: relay.negative(v((4,))),
    "sign": lambda v: relay.sign(v((4,))), "round": lambda v: relay.round(v((4,))),
    "floor": lambda v: relay.floor(v((4,))), "ceil": lambda v: relay.ceil(v((4,))),
    "clip": lambda v: relay.clip(v((5,)), -1.5, 2.5), "sum": lambda v: relay.sum(v((2, 3)), axis=1),
    "mean": lambda v: relay.mean(v((2, 3)), keepdims=True), "max": lambda v: relay.max(v((2, 3)), axis=0),
    "min": lambda v: relay.min(v((2, 3))), "prod": lambda v: relay.prod(v((2, 3)), axis=1, exclude=True),
    "argmax": lambda v: relay.argmax(v((2, 3)), axis=1), "argmin": lambda v: relay.argmin(v((2, 3))),
    "reshape": lambda v: relay.reshape(v((2, 3)), (-1,)), "transpose": lambda v: relay.transpose(v((2, 3))),
    "squeeze": lambda v: relay.squeeze(v((1, 3))), "expand_dims": lambda v: relay.expand_dims(v((3,)), 0),
    "concatenate": lambda v: relay.concatenate([v((2,)), v((3,))], 0),
    "split": lambda v: relay.split(v((4,)), 2).astuple(),
    "take": lambda v: relay.take(v((4, 2)), relay.const(np.array([3, 0], "int32")), axis=0),
    "strided_slice": lambda v: relay.strided_slice(v((5,)), [1], [4], [2]),
    "where": lambda v: relay.where(relay.const(np.array([True, False])), v((2,)), v((2,))),
    "layout_transform": lambda v: relay.layout_transform(v((1, 4, 2, 2)), "NCHW", "NHWC"),
    "nn.relu": lambda v: relay.nn.relu(v((3,))), "nn.bias_add": lambda v: relay.nn.bias_add(v((2, 3)), v((3,))),
    "nn.max_pool2d": lambda v: relay.nn.max_pool2d(v((1, 1, 4, 4)), (2, 2), padding=1),
    "nn.avg_pool2d": lambda v: relay.nn.avg_pool2d(v((1, 1, 4, 4)), (3, 3), ceil_mode=True, padding=1),
    "nn.global_avg_pool2d": lambda v: relay.nn.global_avg_pool2d(v((1, 2, 3, 3))),
    "nn.global_max_pool2d": lambda v: relay.nn.global_max_pool2d(v((1, 2, 3, 3))),
    "nn.conv2d": lambda v: relay.nn.conv2d(v((1, 2, 4, 4)), v((3, 2, 3, 3)), padding=1),
    "nn.dense": lambda v: relay.nn.dense(v((2, 3)), v((4, 3))),
    "nn.matmul": lambda v: relay.nn.matmul(v((2, 3)), v((3, 4))),
    "nn.batch_matmul": lambda v: relay.nn.batch_matmul(v((1, 2, 3)), v((2, 4, 3))),
    "nn.batch_flatten": lambda v: relay.nn.batch_flatten(v((2, 2, 2))),
    "nn.pad": lambda v: relay.nn.pad(v((2, 2)), ((1, 0), (0, 1)), pad_value=relay.const(1.0)),
    "image.resize2d": lambda v: relay.image.resize2d(v((1, 1, 2, 3)), (4, 5)),
    "full": None, "zeros": None, "ones": None, "cast": None,
}
FLOAT_ONLY = {
    "exp": lambda v: relay.exp(v((4,))), "log": lambda v: relay.log(v((4,))), "sqrt": lambda v: relay.sqrt(v((4,))),
    "rsqrt": lambda v: relay.rsqrt(v((4,))), "tanh": lambda v: relay.tanh(v((4,))),
    "sigmoid": lambda v: relay.sigmoid(v((4,))), "erf": lambda v: relay.erf(v((4,))),
    "power": lambda v: relay.power(v((4,)), v((4,))),
    "nn.leaky_relu": lambda v: relay.nn.leaky_relu(v((4,)), 0.1),
    "nn.softmax": lambda v: relay.nn.softmax(v((2, 3))), "nn.log_softmax": lambda v: relay.nn.log_softmax(v((2, 3))),
    "nn.batch_norm": lambda v: relay.nn.batch_norm(v((1, 2, 2)), v((2,)), v((2,)), v((2,)), v((2,))).astuple(),
    "nn.layer_norm": lambda v: relay.nn.layer_norm(v((2, 3)), v((3,)), v((3,))),
    "nn.lrn": lambda v: relay.nn.lrn(v((1, 3, 2, 2)), size=3),
    "nn.dropout": lambda v: relay.nn.dropout_raw(v((2,))),
    "image.resize2d.cubic": lambda v: relay.image.resize2d(v((1, 1, 2, 3)), (4, 5), method="cubic"),
}


def _cases():
    for dtype in ["float16", "float32", "float64", "int32", "int8", "uint8"]:
        table = dict(ANY_DTYPE, **(FLOAT_ONLY if dtype.startswith("float") else {}))
        for name, build in table.items():
            if build is not None:
                yield pytest.param(dtype, build, id=f"{name}-{dtype}")
        yield pytest.param(dtype, lambda v, d=dtype: relay.full(relay.const(3.0), (2,), d), id=f"full-{dtype}")
        yield pytest.param(dtype, lambda v, d=dtype: relay.zeros((2,), d), id=f"zeros-{dtype}")
        yield pytest.param(dtype, lambda v, d=dtype: relay.ones((2,), d), id=f"ones-{dtype}")
        ones = relay.const(np.ones(2, "float32"))
        yield pytest.param(dtype, lambda v, d=dtype, o=ones: relay.cast(o, d), id=f"cast-{dtype}")


def _types(ttype):
    return ttype.fields if isinstance(ttype, TupleType) else (ttype,)


@pytest.mark.parametrize("dtype,build", list(_cases()))
def test_untyped_evaluation_gives_the_relay_dtype(dtype, build):
    env = {}

    def var(shape):
        x = relay.var(f"v{len(env)}", shape=shape, dtype=dtype)
        values = RNG.uniform(1, 3, shape) if dtype.startswith("float") else RNG.integers(1, 4, shape)
        env[x] = np.asarray(values).astype(dtype)
        return x

    expr = build(var)
    expected = relay.infer_type(relay.Function(list(env), expr)).body.checked_type
    value = evaluate_expr(expr, env)  # untyped: the implementation's own dtype, no cast by the interpreter
    values = value if isinstance(value, tuple) else (value,)
    for got, want in zip(values, _types(expected), strict=True):
        assert isinstance(got, np.ndarray), type(got)
        assert (got.dtype.name, got.shape) == (want.dtype, want.shape)
