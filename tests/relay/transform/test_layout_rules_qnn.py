"""kiln/relay/transform/layout_rules_qnn.py: ConvertLayout through the quantized operators."""

import numpy as np

from kiln import relay
from kiln.relay import qnn

ONE_F, ONE_I = relay.const(1.0, "float32"), relay.const(0, "int32")


def _conv(x, w, **layouts):
    return qnn.op.conv2d(x, w, relay.const(1, "int32"), relay.const(-2, "int32"), relay.const(0.5, "float32"),
                         relay.const(0.25, "float32"), kernel_size=(3, 3), channels=8, padding=(1, 1), **layouts)


def _requantize(y, **kw):
    return qnn.op.requantize(y, relay.const(0.125, "float32"), ONE_I, relay.const(0.5, "float32"), ONE_I,
                             out_dtype="int8", **kw)


def test_qnn_conv_requantize_add_convert_to_nchw(check_pass):
    """conv2d, requantize (its axis moved from 3 to 1) and add all compute in NCHW: one transform in per input,
    one out; the scales and zero points stay as they are. Results equal the NHWC program's."""
    def build(nchw):
        x = relay.var("x", shape=(1, 6, 6, 4), dtype="int8")
        w = relay.var("w", shape=(3, 3, 4, 8), dtype="int8")
        if nchw:
            y = _conv(relay.layout_transform(x, "NHWC", "NCHW"), relay.layout_transform(w, "HWIO", "OIHW"))
            y = _requantize(y, axis=1)
        else:
            y = _requantize(_conv(x, w, data_layout="NHWC", kernel_layout="HWIO"))
        y = qnn.op.add(y, y, ONE_F, ONE_I, ONE_F, ONE_I, ONE_F, ONE_I)
        if nchw:
            y = relay.layout_transform(y, "NCHW", "NHWC")
        return relay.Function([x, w], y)

    after = check_pass(build(False), relay.transform.ConvertLayout({"qnn.conv2d": ["NCHW", "default"]}),
                       build(True))
    assert after.body.args[0].op.name == "qnn.add"


def test_depthwise_qnn_conv_gets_hwoi():
    x = relay.var("x", shape=(1, 4, 6, 6), dtype="int8")
    w = relay.var("w", shape=(4, 1, 3, 3), dtype="int8")
    y = qnn.op.conv2d(x, w, ONE_I, ONE_I, ONE_F, ONE_F, kernel_size=(3, 3), channels=4, groups=4)
    after = relay.transform.ConvertLayout({"qnn.conv2d": ["NHWC", "default"]})(
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w], y))))
    convs = []
    relay.post_order_visit(after["main"], lambda e: convs.append(e) if isinstance(e, relay.Call)
                           and getattr(e.op, "name", "") == "qnn.conv2d" else None)
    assert [(c.attrs.data_layout, c.attrs.kernel_layout) for c in convs] == [("NHWC", "HWOI")]
    data = np.random.default_rng(0).integers(-5, 5, (1, 4, 6, 6)).astype("int8")
    weight = np.random.default_rng(1).integers(-5, 5, (4, 1, 3, 3)).astype("int8")
    want = relay.create_executor("debug", mod=relay.IRModule.from_expr(relay.Function([x, w], y))).evaluate()(
        data, weight).numpy()
    got = relay.create_executor("debug", mod=after).evaluate()(data, weight).numpy()
    np.testing.assert_array_equal(got, want)


def test_qnn_conv2d_transpose_and_concatenate_convert_to_nchw():
    import kiln

    x = relay.var("x", shape=(1, 5, 5, 3), dtype="int8")
    w = relay.var("w", shape=(2, 2, 3, 4), dtype="int8")
    one_i, one_f = relay.const(1, "int32"), relay.const(1.0, "float32")
    y = qnn.op.conv2d_transpose(x, w, one_i, one_i, one_f, one_f, kernel_size=(2, 2), channels=4,
                                data_layout="NHWC", kernel_layout="HWIO")
    y = relay.cast(relay.clip(y, -128, 127), "int8")
    out = qnn.op.concatenate([y, y], [one_f, relay.const(2.0, "float32")], [one_i, one_i], one_f, one_i, axis=3)
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([x, w], out)))
    converted = relay.transform.ConvertLayout({"qnn.conv2d_transpose": ["NCHW", "default"]})(mod)
    calls = {}
    relay.analysis.post_order_visit(converted["main"], lambda e: calls.setdefault(e.op.name, e)
                                    if isinstance(e, relay.Call) else None)
    assert calls["qnn.conv2d_transpose"].attrs.kernel_layout == "IOHW"
    assert calls["qnn.concatenate"].attrs.axis == 1  # joined in NCHW, converted back once at the end
    rng = np.random.default_rng(4)
    args = [rng.integers(-20, 20, (1, 5, 5, 3)).astype("int8"), rng.integers(-20, 20, (2, 2, 3, 4)).astype("int8")]
    want, got = (relay.create_executor("debug", mod=m).evaluate()(*args).numpy() for m in (mod, converted))
    np.testing.assert_array_equal(got, want)
