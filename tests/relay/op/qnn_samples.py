"""Sample calls of the quantized operators for test_every_op_every_dtype (kept apart to hold that file under budget):
``qnn_samples(s, c)`` returns them by operator name, built with that module's ``s`` (a sample) and ``c`` (a constant).
"""

from kiln import relay

_ELEMWISE = ("sqrt", "rsqrt", "exp", "erf", "sigmoid", "tanh", "log", "abs", "hardswish")
_POSITIVE = ("sqrt", "rsqrt", "log")


def qnn_samples(s, c):
    """The samples: ``build(v, out_dtype)`` with ``v(index, shape)`` a variable of argument ``index``'s dtype."""
    q = relay.qnn.op
    f, i = (lambda x: c(x, "float32")), (lambda x: c(x, "int32"))
    samples = {
        "qnn.quantize": s(lambda v, o: q.quantize(v(0, (2, 3)), f(0.5), i(3))),
        "qnn.dequantize": s(lambda v, o: q.dequantize(v(0, (2, 3)), f(0.25), i(1))),
        "qnn.requantize": s(lambda v, o: q.requantize(v(0, (2, 3)), f([0.5, 1.0, 2.0]), i(1), f(1.5), i(2), axis=1,
                                                      out_dtype="uint8")),
        **{f"qnn.{n}": s(lambda v, o, n=n: getattr(q, n)(v(0, (2, 3)), v(1, (3,)), f(0.5), i(1), f(0.25), i(0),
                                                         f(0.75), i(2))) for n in ("add", "mul", "subtract")},
        "qnn.dense": s(lambda v, o: q.dense(v(0, (2, 4)), v(1, (3, 4)), i(1), i(-1), f(0.5), f(0.5), units=3)),
        "qnn.conv2d": s(lambda v, o: q.conv2d(v(0, (1, 2, 4, 4)), v(1, (3, 2, 3, 3)), i(2), i([0, 1, -1]), f(0.5),
                                              f(0.5), kernel_size=(3, 3), channels=3, padding=(1, 1))),
        "qnn.conv2d_transpose": s(lambda v, o: q.conv2d_transpose(v(0, (1, 2, 3, 3)), v(1, (2, 3, 2, 2)), i(1), i(0),
                                                                  f(0.5), f(0.5), kernel_size=(2, 2), channels=3)),
        "qnn.batch_matmul": s(lambda v, o: q.batch_matmul(v(0, (2, 3, 4)), v(1, (2, 2, 4)), i(1), i(-1), f(0.5),
                                                          f(0.25))),
        "qnn.concatenate": s(lambda v, o: q.concatenate([v(0, (2, 3)), v(0, (2, 1))], [f(0.5), f(0.25)],
                                                        [i(0), i(1)], f(0.25), i(2), axis=1)),
        "qnn.avg_pool2d": s(lambda v, o: q.avg_pool2d(v(0, (1, 2, 4, 4)), f(0.5), i(1), f(0.25), i(2), (2, 2), (1, 1),
                                                      (1, 1, 0, 0), (1, 1), layout="NCHW")),
        # (a zero point below every input keeps sqrt, rsqrt and log on positive reals: NaN has no integer)
        **{f"qnn.{n}": s(lambda v, o, n=n: getattr(q, n)(v(0, (2, 5)), f(0.25), i(-200 if n in _POSITIVE else 0),
                                                         f(0.125), i(1))) for n in _ELEMWISE},
        "qnn.leaky_relu": s(lambda v, o: q.leaky_relu(v(0, (2, 5)), 0.25, f(0.5), i(1), f(0.25), i(0))),
        "qnn.softmax": s(lambda v, o: q.softmax(v(0, (2, 5)), f(0.5), i(0), f(1 / 128), i(0), axis=1)),
    }
    return samples
