"""Tests of ConvertLayout (kiln/relay/transform/convert_layout.py, layout_rewriter.py, layout_rules.py)."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.relay.testing import assert_same_results, run_opt_pass

T = relay.transform
NCHW = {"nn.conv2d": ["NCHW", "default"]}
NHWC = {"nn.conv2d": ["NHWC", "default"]}


def calls(func, name):
    found = []
    relay.post_order_visit(func, lambda e: found.append(e) if isinstance(e, relay.Call)
                           and getattr(e.op, "name", None) == name else None)
    return found


def nhwc_conv(x, w, **kwargs):
    return relay.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="HWIO", **kwargs)


def test_no_conversion_keeps_the_module():
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.var("w", shape=(8, 8, 3, 3))
    mod = kiln.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))))
    mod = T.InferType()(mod)
    assert T.ConvertLayout(NCHW)(mod) is mod
    assert T.ConvertLayout({})(mod) is mod


def test_conv_nhwc_to_nchw_matches_tvm(check_pass):
    x = relay.var("x", shape=(1, 6, 6, 8))
    w = relay.var("w", shape=(3, 3, 8, 8))
    before = relay.Function([x, w], relay.nn.relu(nhwc_conv(x, w, channels=8, kernel_size=(3, 3), padding=(1, 1))))
    y = relay.nn.conv2d(relay.layout_transform(x, "NHWC", "NCHW"), relay.layout_transform(w, "HWIO", "OIHW"),
                        channels=8, kernel_size=(3, 3), padding=(1, 1))
    expected = relay.Function([x, w], relay.layout_transform(relay.nn.relu(y), "NCHW", "NHWC"))
    check_pass(before, T.ConvertLayout(NCHW), expected)


def test_conv_nchw_to_nhwc_matches_tvm(check_pass):
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.var("w", shape=(4, 8, 3, 3))
    before = relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))))
    y = nhwc_conv(relay.layout_transform(x, "NCHW", "NHWC"), relay.layout_transform(w, "OIHW", "HWIO"),
                  padding=(1, 1))
    expected = relay.Function([x, w], relay.layout_transform(relay.nn.relu(y), "NHWC", "NCHW"))
    check_pass(before, T.ConvertLayout(NHWC), expected)


def _conv_bias_pool():
    x = relay.var("x", shape=(1, 6, 6, 8))
    w = relay.var("w", shape=(3, 3, 8, 8))
    b = relay.var("b", shape=(8,))
    y = relay.nn.bias_add(nhwc_conv(x, w, padding=(1, 1)), b, axis=3)
    y = relay.nn.relu(relay.TupleGetItem(relay.Tuple([y]), 0))
    y = relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NHWC"), "int32")
    return x, w, b, relay.Function([x, w, b], relay.nn.batch_flatten(y))


def test_conv_bias_pool_carries_the_layout_to_the_flatten(check_pass):
    x, w, b, before = _conv_bias_pool()
    y = relay.nn.conv2d(relay.layout_transform(x, "NHWC", "NCHW"), relay.layout_transform(w, "HWIO", "OIHW"),
                        padding=(1, 1))
    bias = relay.layout_transform(relay.expand_dims(b, axis=0, num_newaxis=3), "NHWC", "NCHW")
    y = relay.nn.relu(relay.add(y, bias))  # the layout flows through; (y,)[0] folds to y, as in TVM
    y = relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2)), "int32")
    expected = relay.Function([x, w, b], relay.nn.batch_flatten(relay.layout_transform(y, "NCHW", "NHWC")))
    # in a Sequential, CanonicalizeOps runs first (required) and turns bias_add into add
    check_pass(before, kiln.transform.Sequential([T.ConvertLayout(NCHW)]), expected)


def test_bias_add_axis_moves_when_called_directly():
    before = _conv_bias_pool()[-1]
    after = T.ConvertLayout(NCHW)(kiln.IRModule.from_expr(before))["main"]
    (bias_add,) = calls(after, "nn.bias_add")
    assert bias_add.attrs.axis == 1 and calls(after, "nn.max_pool2d")[0].attrs.layout == "NCHW"
    assert len(calls(after, "layout_transform")) == 3
    assert_same_results(before, after)


def test_pool_with_its_own_desired_layout(check_pass):
    x = relay.var("x", shape=(1, 6, 6, 8))
    w = relay.var("w", shape=(3, 3, 8, 8))
    y = relay.nn.max_pool2d(relay.nn.relu(nhwc_conv(x, w, padding=(1, 1))), pool_size=(2, 2), layout="NHWC")
    before = relay.Function([x, w], y)
    y = relay.nn.conv2d(relay.layout_transform(x, "NHWC", "NCHW"), relay.layout_transform(w, "HWIO", "OIHW"),
                        padding=(1, 1))
    y = relay.layout_transform(relay.nn.relu(y), "NCHW", "NHWC")
    expected = relay.Function([x, w], relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NHWC", out_layout="NHWC"))
    check_pass(before, T.ConvertLayout({"nn.conv2d": ["NCHW", "OIHW"], "nn.max_pool2d": ["NHWC"]}), expected)


def test_concatenate_axis_is_remapped(check_pass):
    x = relay.var("x", shape=(1, 6, 6, 8))
    w1, w2 = relay.var("w1", shape=(3, 3, 8, 8)), relay.var("w2", shape=(3, 3, 8, 8))
    y = nhwc_conv(x, w1, padding=(1, 1))
    y1 = nhwc_conv(y, w2, padding=(1, 1))
    before = relay.Function([x, w1, w2], relay.concatenate([y, y1], axis=3))
    y = relay.nn.conv2d(relay.layout_transform(x, "NHWC", "NCHW"), relay.layout_transform(w1, "HWIO", "OIHW"),
                        padding=(1, 1))
    y1 = relay.nn.conv2d(y, relay.layout_transform(w2, "HWIO", "OIHW"), padding=(1, 1))
    out = relay.layout_transform(relay.concatenate([y, y1], axis=1), "NCHW", "NHWC")
    check_pass(before, T.ConvertLayout(NCHW), relay.Function([x, w1, w2], out))


def test_dual_path_with_tuple_output(check_pass):
    x = relay.var("x", shape=(1, 6, 6, 8))
    w1, w2 = relay.var("w1", shape=(3, 3, 8, 4)), relay.var("w2", shape=(3, 3, 4, 4))
    y = relay.nn.relu(nhwc_conv(x, w1, padding=(1, 1)))
    y1 = relay.nn.relu(nhwc_conv(y, w2, padding=(1, 1)))
    before = relay.Function([x, w1, w2], relay.Tuple([y1, relay.nn.batch_flatten(y)]))
    after = check_pass(before, T.ConvertLayout(NCHW))
    to_nhwc = [c for c in calls(after, "layout_transform") if c.attrs.dst_layout == "NHWC"]
    assert len(to_nhwc) == 2  # one per consumer needing the original layout


def test_resnet_residual_and_global_pool_match_tvm(check_pass):
    x = relay.var("x", shape=(1, 6, 6, 8))
    w1, w2 = relay.var("w1", shape=(3, 3, 8, 4)), relay.var("w2", shape=(1, 1, 8, 4))
    y = relay.nn.relu(nhwc_conv(x, w1, padding=(1, 1)))
    y2 = relay.nn.relu(nhwc_conv(x, w2))
    before = relay.Function([x, w1, w2], relay.nn.global_max_pool2d(relay.add(y, y2), layout="NHWC"))
    xt = relay.layout_transform(x, "NHWC", "NCHW")
    y = relay.nn.relu(relay.nn.conv2d(xt, relay.layout_transform(w1, "HWIO", "OIHW"), padding=(1, 1)))
    y2 = relay.nn.relu(relay.nn.conv2d(xt, relay.layout_transform(w2, "HWIO", "OIHW")))
    out = relay.layout_transform(relay.nn.global_max_pool2d(relay.add(y, y2)), "NCHW", "NHWC")
    check_pass(before, T.ConvertLayout(NCHW), relay.Function([x, w1, w2], out))


def test_scalar_and_skip_input_operands(check_pass):
    x = relay.var("x", shape=(1, 6, 6, 8))
    w = relay.var("w", shape=(3, 3, 8, 8))
    y = relay.add(nhwc_conv(x, w, padding=(1, 1)), relay.const(1.0))
    before = relay.Function([x, w], relay.add(y, x))  # the residual input is transformed, the scalar kept
    xt = relay.layout_transform(x, "NHWC", "NCHW")
    y = relay.add(relay.nn.conv2d(xt, relay.layout_transform(w, "HWIO", "OIHW"), padding=(1, 1)), relay.const(1.0))
    expected = relay.Function([x, w], relay.layout_transform(relay.add(y, xt), "NCHW", "NHWC"))
    check_pass(before, T.ConvertLayout(NCHW), expected)


def test_depthwise_default_kernel_is_hwoi(check_pass):
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 1, 3, 3))
    before = relay.Function([x, w], relay.nn.conv2d(x, w, groups=4, padding=(1, 1)))
    after = check_pass(before, T.ConvertLayout(NHWC))
    (conv,) = calls(after, "nn.conv2d")
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == ("NHWC", "HWOI")


def test_reductions_pad_and_norms_follow():
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.const(rng.uniform(-1, 1, (8, 8, 3, 3)).astype("float32"))
    y = relay.nn.conv2d(relay.nn.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), w)
    y = relay.nn.pad(y, ((0, 0), (0, 0), (1, 1), (1, 1)))
    vec = [relay.const(v.astype("float32")) for v in (rng.uniform(0.5, 1, 8), rng.uniform(-1, 1, 8),
                                                      rng.uniform(-1, 1, 8), rng.uniform(0.5, 1, 8))]
    y = relay.nn.batch_norm(relay.nn.conv2d(y, w), *vec)[0]
    y = relay.nn.layer_norm(y, vec[0], vec[1], axis=1)
    before = relay.Function([x], relay.Tuple([relay.mean(y, axis=[2, 3]), relay.sum(y, axis=[1], keepdims=True)]))
    after = run_opt_pass(before, T.ConvertLayout(NHWC))
    assert [c.attrs.axis for c in calls(after, "mean")] == [(1, 2)]
    assert calls(after, "nn.batch_norm")[0].attrs.axis == 3 and calls(after, "nn.layer_norm")[0].attrs.axis == 3
    # in: pad input (the first conv reads the transformed pad); out: only the keepdims sum goes back
    assert len(calls(after, "layout_transform")) == 3
    assert_same_results(before, after, rtol=1e-4, atol=1e-4)


def test_blocked_layout_with_per_channel_constant():
    rng = np.random.default_rng(1)
    x = relay.var("x", shape=(1, 8, 5, 5))
    w = relay.const(rng.uniform(-1, 1, (8, 8, 3, 3)).astype("float32"))
    c = relay.const(rng.uniform(-1, 1, (8, 1, 1)).astype("float32"))
    y = relay.nn.relu(relay.multiply(relay.nn.conv2d(x, w, padding=(1, 1)), c))
    y = relay.nn.avg_pool2d(y, pool_size=(2, 2))
    before = relay.Function([x], y)
    after = run_opt_pass(before, [T.ConvertLayout({"nn.conv2d": ["NCHW4c", "default"]}), T.FoldConstant()])
    (conv,) = calls(after, "nn.contrib_conv2d_NCHWc")  # the blocked form, as TVM's
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == ("NCHW4c", "OIHW4i4o")
    assert calls(after, "nn.avg_pool2d")[0].attrs.layout == "NCHW4c"
    assert len(calls(after, "layout_transform")) == 2  # the weight and the constant were folded
    assert_same_results(before, after, rtol=1e-5, atol=1e-5)


def _small_cnn(rng):
    """conv-bn-relu, max_pool, a residual conv pair, global average pool, flatten, dense (NCHW, constants)."""
    def const(*shape):
        return relay.const(rng.uniform(-0.5, 0.5, shape).astype("float32"))

    def bn(y, c):
        return relay.nn.batch_norm(y, relay.const(rng.uniform(0.5, 1.5, c).astype("float32")), const(c), const(c),
                                   relay.const(rng.uniform(0.5, 1.5, c).astype("float32")))[0]

    x = relay.var("x", shape=(1, 3, 12, 12))
    y = relay.nn.relu(bn(relay.nn.conv2d(x, const(8, 3, 3, 3), padding=(1, 1)), 8))
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
    z = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(y, const(8, 8, 3, 3), padding=(1, 1)), const(8)))
    z = relay.nn.conv2d(z, const(8, 8, 1, 1))
    y = relay.nn.relu(relay.add(z, y))
    y = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(y))
    return relay.Function([x], relay.nn.bias_add(relay.nn.dense(y, const(5, 8)), const(5)))


def test_small_cnn_to_nhwc():
    before = _small_cnn(np.random.default_rng(2))
    passes = [T.SimplifyInference(), T.ConvertLayout(NHWC), T.FoldConstant()]
    after = run_opt_pass(before, passes)
    assert all(c.attrs.data_layout == "NHWC" for c in calls(after, "nn.conv2d"))
    assert all(c.attrs.layout == "NHWC" for c in calls(after, "nn.max_pool2d") + calls(after, "nn.global_avg_pool2d"))
    transforms = calls(after, "layout_transform")
    assert [(t.attrs.src_layout, t.attrs.dst_layout) for t in transforms] == [("NCHW", "NHWC"), ("NHWC", "NCHW")]
    assert_same_results(before, after, rtol=1e-4, atol=1e-4)


def test_lets_and_ifs_are_boundaries():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    v = relay.var("v")
    cond = relay.var("c", shape=(), dtype="bool")
    body = relay.If(cond, relay.nn.relu(v), relay.nn.conv2d(v, w, padding=(1, 1)))
    before = relay.Function([x, w, cond], relay.Let(v, relay.nn.conv2d(x, w, padding=(1, 1)), body))
    after = run_opt_pass(before, T.ConvertLayout(NHWC))
    # x and w in, the let value out; the branch's conv reads the let variable in and writes back
    assert len(calls(after, "layout_transform")) == 5
    assert_same_results(before, after)


def test_registration_printing_and_errors():
    p = T.ConvertLayout({"nn.conv2d": ["NHWC", "default"]})
    assert p.info.name == "ConvertLayout" and p.info.opt_level == 3
    assert p.info.required == ("InferType", "CanonicalizeOps")
    text = str(p)
    assert text == "ConvertLayout(desired_layouts={'nn.conv2d': ['NHWC', 'default']})"
    again = kiln.transform.parse_pipeline(text).passes[0]
    assert again == p and hash(again) == hash(p)
    with pytest.raises(KilnError, match="nn.conv3x"):
        T.ConvertLayout({"nn.conv3x": ["NHWC"]})
    with pytest.raises(KilnError, match="malformed layout"):
        T.ConvertLayout({"nn.conv2d": ["NH?C", "default"]})
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    mod = kiln.IRModule.from_expr(relay.Function([x, w], relay.nn.conv2d(x, w)))
    with pytest.raises(KilnError, match="cannot be 'default'"):
        T.ConvertLayout({"nn.conv2d": ["default", "default"]})(mod)


def test_conversion_declined_when_channels_do_not_split(check_pass):
    x = relay.var("x", shape=(1, 3, 6, 6))
    w1, w2 = relay.var("w1", shape=(8, 3, 3, 3)), relay.var("w2", shape=(8, 8, 3, 3))
    y = relay.nn.conv2d(relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1))), w2, padding=(1, 1))
    after = check_pass(relay.Function([x, w1, w2], y), T.ConvertLayout({"nn.conv2d": ["NCHW4c", "default"]}))
    layouts = [c.attrs.data_layout for c in calls(after, "nn.conv2d") + calls(after, "nn.contrib_conv2d_NCHWc")]
    assert sorted(layouts) == ["NCHW", "NCHW4c"]  # 3 input channels cannot be split by 4
