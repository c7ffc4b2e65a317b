"""Tests of ForwardFoldScaleAxis, BackwardFoldScaleAxis and FoldScaleAxis (kiln/relay/transform/fold_scale_*.py)."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.ir import assert_structural_equal
from kiln.relay.testing import assert_same_results, run_opt_pass

T = relay.transform


def positive_scale(shape, seed=0):
    return relay.const(np.random.default_rng(seed).uniform(0.5, 1.5, shape).astype("float32"))


def count_ops(func, name):
    found = []
    relay.post_order_visit(func, lambda e: found.append(e) if isinstance(e, relay.Call)
                           and getattr(e.op, "name", None) == name else None)
    return len(found)


# ---- forward --------------------------------------------------------------------------------------------------
def test_forward_simple_matches_tvm_structure(check_pass):
    x = relay.var("x", shape=(2, 4, 10, 10))
    w = relay.var("w", shape=(8, 4, 3, 3))
    b = relay.var("b", shape=(4, 1, 1))
    s = positive_scale((4, 1, 1))
    y = relay.nn.relu(relay.multiply(x, s))
    y = relay.nn.conv2d(relay.add(y, b), w, channels=8, kernel_size=(3, 3), padding=(1, 1))
    before = relay.Function([x, w, b], y)

    squeezed = relay.squeeze(s, axis=[1, 2])
    bias = relay.divide(b, relay.expand_dims(squeezed, axis=1, num_newaxis=2))
    weight = relay.multiply(w, relay.expand_dims(squeezed, axis=1, num_newaxis=2))
    body = relay.nn.conv2d(relay.add(relay.nn.relu(x), bias), weight, channels=8, kernel_size=(3, 3),
                           padding=(1, 1))
    check_pass(before, T.ForwardFoldScaleAxis(), relay.Function([x, w, b], body))


def test_forward_nhwc_scales_the_input_channel_axis(check_pass):
    x = relay.var("x", shape=(1, 6, 6, 4))
    w = relay.var("w", shape=(3, 3, 4, 5))
    s = positive_scale((4,), 1)
    y = relay.nn.conv2d(relay.multiply(x, s), w, padding=(1, 1), data_layout="NHWC", kernel_layout="HWIO")
    before = relay.Function([x, w], y)
    weight = relay.multiply(w, relay.expand_dims(s, axis=1, num_newaxis=1))
    expected = relay.Function([x, w], relay.nn.conv2d(x, weight, padding=(1, 1), data_layout="NHWC",
                                                      kernel_layout="HWIO"))
    check_pass(before, T.ForwardFoldScaleAxis(), expected)


def test_forward_depthwise_scales_the_output_axis(check_pass):
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 1, 3, 3))
    s = positive_scale((4, 1, 1), 2)
    y = relay.nn.conv2d(relay.multiply(x, s), w, groups=4, padding=(1, 1))
    after = check_pass(relay.Function([x, w], y), T.ForwardFoldScaleAxis())
    assert count_ops(after, "multiply") == 1 and after.body.args[0] is after.params[0]


def test_forward_scalar_and_leading_one_shapes(check_pass):
    x = relay.var("x", shape=(1, 3, 5, 5))
    w = relay.var("w", shape=(2, 3, 1, 1))
    y = relay.nn.conv2d(relay.multiply(relay.multiply(x, relay.const(2.0)), positive_scale((1, 3, 1, 1))), w)
    after = check_pass(relay.Function([x, w], y), T.ForwardFoldScaleAxis())
    assert after.body.args[0].op.name == "multiply"  # the inner (scalar) multiply is kept: its user is a multiply


def test_forward_scalar_scale_folds(check_pass):
    x = relay.var("x", shape=(1, 3, 5, 5))
    w = relay.var("w", shape=(2, 3, 1, 1))
    y = relay.nn.conv2d(relay.multiply(x, relay.const(0.5)), w)
    after = check_pass(relay.Function([x, w], y), T.ForwardFoldScaleAxis())
    assert after.body.args[0] is after.params[0]


def test_forward_negative_scale_does_not_pass_relu():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    s = relay.const(np.array([1.0, -1.0, 2.0, 0.5], "float32").reshape(4, 1, 1))
    before = relay.Function([x, w], relay.nn.conv2d(relay.nn.relu(relay.multiply(x, s)), w))
    after = run_opt_pass(before, T.ForwardFoldScaleAxis())
    assert_structural_equal(after, relay.infer_type(before))


def test_forward_negative_scale_folds_without_relu(check_pass):
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    s = relay.const(np.array([1.0, -1.0, 2.0, 0.5], "float32").reshape(4, 1, 1))
    after = check_pass(relay.Function([x, w], relay.nn.conv2d(relay.multiply(x, s), w)), T.ForwardFoldScaleAxis())
    assert after.body.args[0] is after.params[0]


def test_forward_dual_path_folds_into_both_convs(check_pass):
    x = relay.var("x", shape=(1, 4, 6, 6))
    w1, w2 = relay.var("w1", shape=(4, 4, 3, 3)), relay.var("w2", shape=(4, 4, 1, 1))
    y = relay.nn.relu(relay.multiply(x, positive_scale((4, 1, 1))))
    out = relay.add(relay.nn.conv2d(y, w1, padding=(1, 1)), relay.nn.conv2d(y, w2))
    after = check_pass(relay.Function([x, w1, w2], out), T.ForwardFoldScaleAxis())
    assert count_ops(after, "multiply") == 2  # one per weight, none on the data


def test_forward_blocked_by_another_user():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    y = relay.multiply(x, positive_scale((4, 1, 1)))
    before = relay.Function([x, w], relay.Tuple([relay.nn.conv2d(y, w), relay.exp(y)]))
    after = run_opt_pass(before, T.ForwardFoldScaleAxis())
    assert_structural_equal(after, relay.infer_type(before))


def test_forward_grouped_conv_is_left_alone():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 2, 3, 3))
    before = relay.Function([x, w], relay.nn.conv2d(relay.multiply(x, positive_scale((4, 1, 1))), w, groups=2))
    assert_structural_equal(run_opt_pass(before, T.ForwardFoldScaleAxis()), relay.infer_type(before))


def test_forward_dense(check_pass):
    x = relay.var("x", shape=(3, 5))
    w = relay.var("w", shape=(4, 5))
    s = positive_scale((5,))
    before = relay.Function([x, w], relay.nn.dense(relay.multiply(x, s), w))
    check_pass(before, T.ForwardFoldScaleAxis(), relay.Function([x, w], relay.nn.dense(x, relay.multiply(w, s))))


def test_forward_blocked_layout(check_pass):
    x = relay.var("x", shape=(1, 2, 5, 5, 4))
    w = relay.var("w", shape=(2, 2, 3, 3, 4, 4))
    s = positive_scale((2, 1, 1, 4), 3)
    y = relay.nn.conv2d(relay.nn.relu(relay.multiply(x, s)), w, data_layout="NCHW4c", kernel_layout="OIHW4i4o")
    after = check_pass(relay.Function([x, w], y), T.ForwardFoldScaleAxis())
    assert count_ops(after, "reshape") == 1 and after.body.args[0].args[0] is after.params[0]


# ---- backward -------------------------------------------------------------------------------------------------
def test_backward_simple_matches_tvm_structure(check_pass):
    x = relay.var("x", shape=(2, 4, 10, 10))
    w = relay.var("w", shape=(8, 4, 3, 3))
    b = relay.var("b", shape=(8,))
    s = positive_scale((8, 1, 1))
    bias = relay.expand_dims(b, axis=1, num_newaxis=2)
    y = relay.nn.conv2d(x, w, channels=8, kernel_size=(3, 3), padding=(1, 1))
    before = relay.Function([x, w, b], relay.multiply(relay.nn.relu(relay.add(y, bias)), s))

    squeezed = relay.squeeze(s, axis=[1, 2])
    weight = relay.multiply(w, relay.expand_dims(squeezed, axis=1, num_newaxis=3))
    y = relay.nn.conv2d(x, weight, channels=8, kernel_size=(3, 3), padding=(1, 1))
    bias = relay.multiply(bias, relay.expand_dims(squeezed, axis=1, num_newaxis=2))
    check_pass(before, T.BackwardFoldScaleAxis(), relay.Function([x, w, b], relay.nn.relu(relay.add(y, bias))))


def test_backward_bias_add_nhwc(check_pass):
    x = relay.var("x", shape=(1, 6, 6, 3))
    w = relay.var("w", shape=(3, 3, 3, 4))
    b = relay.var("b", shape=(4,))
    s = positive_scale((4,), 4)
    y = relay.nn.conv2d(x, w, padding=(1, 1), data_layout="NHWC", kernel_layout="HWIO")
    before = relay.Function([x, w, b], relay.multiply(relay.nn.bias_add(y, b, axis=3), s))
    y = relay.nn.conv2d(x, relay.multiply(w, s), padding=(1, 1), data_layout="NHWC", kernel_layout="HWIO")
    check_pass(before, T.BackwardFoldScaleAxis(), relay.Function([x, w, b], relay.nn.bias_add(
        y, relay.multiply(b, s), axis=3)))


def test_backward_residual_add_of_two_convs(check_pass):
    x = relay.var("x", shape=(1, 4, 6, 6))
    w1, w2 = relay.var("w1", shape=(8, 4, 3, 3)), relay.var("w2", shape=(8, 4, 1, 1))
    y = relay.add(relay.nn.conv2d(x, w1, padding=(1, 1)), relay.nn.conv2d(x, w2))
    after = check_pass(relay.Function([x, w1, w2], relay.multiply(y, positive_scale((8, 1, 1)))),
                       T.BackwardFoldScaleAxis())
    assert after.body.op.name == "add" and count_ops(after, "multiply") == 2


def test_backward_conv_used_twice_is_left_alone():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    y = relay.nn.conv2d(x, w)
    before = relay.Function([x, w], relay.add(relay.multiply(y, positive_scale((4, 1, 1))), y))
    assert_structural_equal(run_opt_pass(before, T.BackwardFoldScaleAxis()), relay.infer_type(before))


def test_backward_negative_scale_does_not_pass_relu(check_pass):
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    s = relay.const(np.array([1.0, -1.0, 2.0, 0.5], "float32").reshape(4, 1, 1))
    before = relay.Function([x, w], relay.multiply(relay.nn.relu(relay.nn.conv2d(x, w)), s))
    assert_structural_equal(run_opt_pass(before, T.BackwardFoldScaleAxis()), relay.infer_type(before))
    no_relu = relay.Function([x, w], relay.multiply(relay.nn.conv2d(x, w), s))
    assert count_ops(check_pass(no_relu, T.BackwardFoldScaleAxis()), "multiply") == 1


def test_backward_depthwise_dense_and_blocked(check_pass):
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 1, 3, 3))
    y = relay.multiply(relay.nn.conv2d(x, w, groups=4), positive_scale((4, 1, 1)))
    assert count_ops(check_pass(relay.Function([x, w], y), T.BackwardFoldScaleAxis()), "nn.conv2d") == 1

    d, dw = relay.var("d", shape=(3, 5)), relay.var("dw", shape=(6, 5))
    y = relay.multiply(relay.nn.dense(d, dw), positive_scale((6,)))
    after = check_pass(relay.Function([d, dw], y), T.BackwardFoldScaleAxis())
    assert after.body.op.name == "nn.dense"

    xb = relay.var("xb", shape=(1, 2, 5, 5, 4))
    wb = relay.var("wb", shape=(3, 2, 3, 3, 4, 4))
    y = relay.nn.conv2d(xb, wb, data_layout="NCHW4c", kernel_layout="OIHW4i4o")
    y = relay.multiply(relay.nn.relu(y), positive_scale((3, 1, 1, 4)))
    assert check_pass(relay.Function([xb, wb], y), T.BackwardFoldScaleAxis()).body.op.name == "nn.relu"


# ---- the Sequential, registration and whole blocks ---------------------------------------------------------------
def test_fold_scale_axis_is_a_registered_sequential():
    seq = T.FoldScaleAxis()
    assert isinstance(seq, kiln.transform.Sequential) and seq.info.name == "FoldScaleAxis"
    assert [p.info.name for p in seq.passes] == ["BackwardFoldScaleAxis", "ForwardFoldScaleAxis", "FoldConstant"]
    assert T.ForwardFoldScaleAxis().info.opt_level == 3 and T.BackwardFoldScaleAxis().info.opt_level == 3
    assert T.ForwardFoldScaleAxis().info.required == ("InferType",)
    for name in ("FoldScaleAxis", "ForwardFoldScaleAxis", "BackwardFoldScaleAxis"):
        assert name in kiln.transform.list_passes()
        assert kiln.transform.get_pass(name).info.name == name
    assert str(seq) == "FoldScaleAxis"


def _conv_bn_relu(data, in_channels, channels, rng):
    weight = relay.const(rng.uniform(-1, 1, (channels, in_channels, 3, 3)).astype("float32"))
    y = relay.nn.conv2d(data, weight, padding=(1, 1), channels=channels, kernel_size=(3, 3))
    bn = [relay.const(v.astype("float32")) for v in (
        rng.uniform(0.5, 1.5, channels), rng.uniform(-1, 1, channels), rng.uniform(-1, 1, channels),
        rng.uniform(0.5, 1.5, channels))]
    return relay.nn.relu(relay.nn.batch_norm(y, *bn)[0])


def test_resnet_block_conv_bn_relu_folds_every_scale():
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 4, 8, 8))
    y = _conv_bn_relu(x, 4, 6, rng)
    y = relay.add(_conv_bn_relu(y, 6, 4, rng), x)  # residual
    before = relay.Function([x], y)
    prepared = run_opt_pass(before, [T.SimplifyInference(), T.FoldConstant()])
    assert count_ops(prepared, "multiply") == 2
    with kiln.transform.PassContext(opt_level=2):  # the halves need opt_level 3, as in TVM
        skipped = T.FoldScaleAxis()(kiln.IRModule.from_expr(prepared))
    assert count_ops(skipped["main"], "multiply") == 2
    after = run_opt_pass(prepared, T.FoldScaleAxis(), opt_level=3)  # a Sequential of opt-3 passes
    assert count_ops(after, "multiply") == 0
    for conv in [e for e in _calls(after, "nn.conv2d")]:
        assert isinstance(conv.args[1], relay.Constant)
    assert_same_results(before, after, rtol=1e-4, atol=1e-4)


def _calls(func, name):
    found = []
    relay.post_order_visit(func, lambda e: found.append(e) if isinstance(e, relay.Call)
                           and getattr(e.op, "name", None) == name else None)
    return found


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_bottleneck_with_pre_activation_batch_norm(layout):
    """Pre-activation bottleneck (bn-relu-conv x3 + shortcut): the forward fold moves bn scales into the convs."""
    rng = np.random.default_rng(1)
    nhwc = layout == "NHWC"
    axis = 3 if nhwc else 1
    x = relay.var("x", shape=(1, 6, 6, 8) if nhwc else (1, 8, 6, 6))

    def bn_relu(data, channels):
        vals = [relay.const(v.astype("float32")) for v in (
            rng.uniform(0.5, 1.5, channels), rng.uniform(-1, 1, channels), rng.uniform(-1, 1, channels),
            rng.uniform(0.5, 1.5, channels))]
        return relay.nn.relu(relay.nn.batch_norm(data, *vals, axis=axis)[0])

    def conv(data, cin, cout, k):
        shape = (k, k, cin, cout) if nhwc else (cout, cin, k, k)
        weight = relay.const(rng.uniform(-1, 1, shape).astype("float32"))
        return relay.nn.conv2d(data, weight, padding=(k // 2, k // 2), data_layout=layout,
                               kernel_layout="HWIO" if nhwc else "OIHW")

    y = conv(bn_relu(x, 8), 8, 4, 1)
    y = conv(bn_relu(y, 4), 4, 4, 3)
    y = conv(bn_relu(y, 4), 4, 8, 1)
    before = relay.Function([x], relay.add(y, x))
    prepared = run_opt_pass(before, [T.SimplifyInference(), T.FoldConstant()])
    after = run_opt_pass(prepared, T.FoldScaleAxis(), opt_level=3)
    # every bn scale passes its relu (positive) and its bias add, into the next conv's (constant, folded) weight
    assert count_ops(after, "multiply") == 0 and count_ops(after, "divide") == 0
    assert_same_results(before, after, rtol=1e-4, atol=1e-4)


def test_untouched_function_keeps_identity():
    x = relay.var("x", shape=(1, 4, 6, 6))
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    assert T.ForwardFoldScaleAxis()(mod) is mod and T.BackwardFoldScaleAxis()(mod) is mod


def test_integer_scales_are_left_alone():
    x = relay.var("x", shape=(1, 4, 6, 6), dtype="int32")
    w = relay.var("w", shape=(4, 4, 3, 3), dtype="int32")
    s = relay.const(np.full((4, 1, 1), 3, "int32"))
    before = relay.Function([x, w], relay.multiply(relay.nn.conv2d(relay.multiply(x, s), w), s))
    for fold in (T.ForwardFoldScaleAxis(), T.BackwardFoldScaleAxis()):
        assert_structural_equal(run_opt_pass(before, fold), relay.infer_type(before))


def test_scale_that_only_one_consumer_can_absorb_is_realized_for_the_other(check_pass):
    """The blocked conv asks for axes (1, 4), the dense for (4,): the meet (4,) folds into the dense only."""
    x = relay.var("x", shape=(1, 2, 5, 5, 4))
    w = relay.var("w", shape=(2, 2, 3, 3, 4, 4))
    d = relay.var("d", shape=(3, 4))
    y = relay.multiply(x, positive_scale((4,), 5))
    conv = relay.nn.conv2d(y, w, data_layout="NCHW4c", kernel_layout="OIHW4i4o")
    before = relay.Function([x, w, d], relay.Tuple([conv, relay.nn.dense(y, d)]))
    after = check_pass(before, T.ForwardFoldScaleAxis())
    conv_after, dense_after = after.body.fields
    assert conv_after.args[0].op.name == "multiply" and dense_after.args[0] is after.params[0]


def test_forward_regroups_a_scale_between_different_blockings(check_pass):
    """NCHW2c data (scale (C=2, c=2)) into an OIHW4i2o kernel (channels as (I=1, i=4)): same channel order."""
    x = relay.var("x", shape=(1, 2, 5, 5, 2))
    w = relay.var("w", shape=(2, 1, 3, 3, 4, 2))
    s = relay.const(np.random.default_rng(6).uniform(-1.5, -0.5, (1, 2, 1, 1, 2)).astype("float32"))
    y = relay.nn.conv2d(relay.multiply(x, s), w, channels=4, kernel_size=(3, 3), data_layout="NCHW2c",
                        kernel_layout="OIHW4i2o")
    scale = relay.reshape(relay.squeeze(s, axis=[0, 2, 3]), [1, 1, 1, 1, 4, 1])
    expected = relay.nn.conv2d(x, relay.multiply(w, scale), channels=4, kernel_size=(3, 3),
                               data_layout="NCHW2c", kernel_layout="OIHW4i2o")
    check_pass(relay.Function([x, w], y), T.ForwardFoldScaleAxis(), relay.Function([x, w], expected))


def test_forward_and_backward_conv3d(check_pass):
    x = relay.var("x", shape=(1, 3, 4, 5, 5))
    w = relay.var("w", shape=(2, 3, 3, 3, 3))
    y = relay.nn.conv3d(relay.nn.relu(relay.multiply(x, positive_scale((3, 1, 1, 1), 7))), w, padding=(1, 1, 1))
    after = check_pass(relay.Function([x, w], y), T.ForwardFoldScaleAxis())
    assert after.body.args[0].args[0] is after.params[0]
    z = relay.multiply(relay.nn.relu(relay.nn.conv3d(x, w)), positive_scale((2, 1, 1, 1), 8))
    after = check_pass(relay.Function([x, w], z), T.BackwardFoldScaleAxis())
    assert after.body.op.name == "nn.relu" and after.body.args[0].args[1].op.name == "multiply"


def test_a_scale_need_not_be_a_constant_unless_it_must_be_positive(check_pass):
    """Without a relu on the way any float multiplier folds (TVM's MatchBroadcastToLeftAxes); through a relu
    only a positive constant, seen through reshapes, does."""
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(3, 4, 1, 1))
    s = relay.var("s", shape=(4, 1, 1))
    after = check_pass(relay.Function([x, w, s], relay.nn.conv2d(relay.multiply(x, s), w)), T.ForwardFoldScaleAxis())
    assert after.body.args[0] is after.params[0]
    through_relu = relay.Function([x, w, s], relay.nn.conv2d(relay.nn.relu(relay.multiply(x, s)), w))
    assert count_ops(run_opt_pass(through_relu, T.ForwardFoldScaleAxis()), "multiply") == 1
    reshaped = relay.reshape(positive_scale((3,), 9), (3, 1, 1))
    out = relay.multiply(relay.nn.relu(relay.nn.conv2d(x, w)), reshaped)
    after = check_pass(relay.Function([x, w], out), T.BackwardFoldScaleAxis())
    assert after.body.op.name == "nn.relu"
