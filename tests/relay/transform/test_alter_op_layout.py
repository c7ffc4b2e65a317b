"""Tests of AlterOpLayout (kiln/relay/transform/alter_op_layout.py over layout_rewriter.py)."""

import contextlib

import numpy as np

import kiln
from kiln import relay
from kiln.ir import op as ir_op
from kiln.relay.testing import assert_same_results, run_opt_pass

T = relay.transform


@contextlib.contextmanager
def temp_op_attr(op_name, key, value):
    """Install an op attribute for the duration of a test, then restore the previous one (TVM's TempOpAttr)."""
    attrs = ir_op._OP_ATTRS.setdefault(op_name, {})
    saved = attrs.get(key)
    attrs.pop(key, None)
    ir_op.register_op_attr(op_name, key, value)
    try:
        yield
    finally:
        attrs.pop(key, None)
        if saved is not None:
            attrs[key] = saved


def calls(func, name):
    found = []
    relay.post_order_visit(func, lambda e: found.append(e) if isinstance(e, relay.Call)
                           and getattr(e.op, "name", None) == name else None)
    return found


def alter_conv2d_nchw16c(attrs, inputs, tinfos, out_type):
    data, weight = inputs
    new_attrs = dict(attrs)
    new_attrs["data_layout"] = "NCHW16c"
    new_attrs["kernel_layout"] = "OIHW16i"
    return relay.nn.conv2d(data, weight, **new_attrs)


def test_alter_layout_matches_tvm(check_pass):
    x = relay.var("x", shape=(1, 32, 6, 6))
    bias = relay.var("bias", shape=(32,))
    weight = relay.var("weight", shape=(32, 32, 3, 3))
    y = relay.nn.conv2d(x, weight, channels=32, kernel_size=(3, 3), padding=(1, 1))
    y = relay.nn.bias_add(y, bias)
    y = relay.nn.relu(relay.TupleGetItem(relay.Tuple([y]), 0))
    y = relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2)), "int32")
    before = relay.Function([x, weight, bias], relay.nn.batch_flatten(y))

    y = relay.layout_transform(x, "NCHW", "NCHW16c")
    w = relay.layout_transform(weight, "OIHW", "OIHW16i")
    y = relay.nn.conv2d(y, w, channels=32, kernel_size=(3, 3), padding=(1, 1), kernel_layout="OIHW16i",
                        data_layout="NCHW16c")
    b = relay.expand_dims(relay.expand_dims(bias, axis=1, num_newaxis=2), axis=0, num_newaxis=1)
    y = relay.add(y, relay.layout_transform(b, "NCHW", "NCHW16c"))
    y = relay.nn.relu(y)  # (y,)[0] folds to y, as in TVM's ForwardRewrite
    y = relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NCHW16c"), "int32")
    y = relay.nn.batch_flatten(relay.layout_transform(y, "NCHW16c", "NCHW"))
    with temp_op_attr("nn.conv2d", "FTVMAlterOpLayout", alter_conv2d_nchw16c):
        check_pass(before, [T.CanonicalizeOps(), T.AlterOpLayout()], relay.Function([x, weight, bias], y))


def test_nothing_registered_changes_nothing():
    x = relay.var("x", shape=(1, 16, 6, 6))
    w = relay.var("w", shape=(16, 16, 3, 3))
    mod = T.InferType()(kiln.IRModule.from_expr(relay.Function([x, w], relay.nn.conv2d(x, w))))
    assert T.AlterOpLayout()(mod) is mod
    assert T.AlterOpLayout().info.opt_level == 3 and T.AlterOpLayout().info.required == ("InferType",)
    assert "AlterOpLayout" in kiln.transform.list_passes()


def test_consecutive_altered_convs_need_no_transform_between(check_pass):
    x = relay.var("x", shape=(1, 16, 6, 6))
    w1, w2 = relay.var("w1", shape=(16, 16, 3, 3)), relay.var("w2", shape=(16, 16, 1, 1))
    y = relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1)))
    before = relay.Function([x, w1, w2], relay.nn.conv2d(y, w2))
    with temp_op_attr("nn.conv2d", "FTVMAlterOpLayout", alter_conv2d_nchw16c):
        after = check_pass(before, T.AlterOpLayout())
    pairs = [(c.attrs.src_layout, c.attrs.dst_layout) for c in calls(after, "layout_transform")]
    assert sorted(pairs) == sorted([("NCHW", "NCHW16c"), ("OIHW", "OIHW16i"), ("OIHW", "OIHW16i"),
                                    ("NCHW16c", "NCHW")])


def test_alteration_declined_for_some_calls(check_pass):
    def alter(attrs, inputs, tinfos, out_type):
        if tinfos[1].shape[2] != 3:  # only 3x3 kernels
            return None
        return relay.nn.conv2d(*inputs, **dict(attrs, data_layout="NCHW4c", kernel_layout="OIHW4i4o"))

    x = relay.var("x", shape=(1, 8, 6, 6))
    w1, w2 = relay.var("w1", shape=(8, 8, 3, 3)), relay.var("w2", shape=(8, 8, 1, 1))
    before = relay.Function([x, w1, w2], relay.nn.conv2d(relay.nn.conv2d(x, w1, padding=(1, 1)), w2))
    with temp_op_attr("nn.conv2d", "FTVMAlterOpLayout", alter):
        after = check_pass(before, T.AlterOpLayout())
    layouts = [c.attrs.data_layout for c in calls(after, "nn.conv2d")]
    assert sorted(layouts) == ["NCHW", "NCHW4c"]


def test_replacement_in_the_original_layout():
    def alter_relu(attrs, inputs, tinfos, out_type):
        return relay.maximum(inputs[0], relay.const(0.0))

    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.var("w", shape=(8, 8, 3, 3))
    before = relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w)))
    with temp_op_attr("nn.relu", "FTVMAlterOpLayout", alter_relu):
        after = run_opt_pass(before, T.AlterOpLayout())
    assert after.body.op.name == "maximum" and not calls(after, "nn.relu")
    assert_same_results(before, after)


def test_resnet_bottleneck_in_nchw4c():
    """A bottleneck block (1x1-3x3-1x1 convs with folded bn and a residual add), every conv altered to NCHW4c."""
    rng = np.random.default_rng(0)

    def conv_bn_relu(y, cin, cout, k, relu=True):
        w = relay.const(rng.uniform(-0.5, 0.5, (cout, cin, k, k)).astype("float32"))
        y = relay.nn.conv2d(y, w, padding=(k // 2, k // 2))
        vec = [relay.const(v.astype("float32")) for v in (rng.uniform(0.5, 1.5, cout), rng.uniform(-1, 1, cout),
                                                          rng.uniform(-1, 1, cout), rng.uniform(0.5, 1.5, cout))]
        y = relay.nn.batch_norm(y, *vec)[0]
        return relay.nn.relu(y) if relu else y

    x = relay.var("x", shape=(1, 8, 6, 6))
    y = conv_bn_relu(x, 8, 4, 1)
    y = conv_bn_relu(y, 4, 4, 3)
    y = conv_bn_relu(y, 4, 8, 1, relu=False)
    before = relay.Function([x], relay.nn.relu(relay.add(y, x)))

    def alter(attrs, inputs, tinfos, out_type):
        return relay.nn.conv2d(*inputs, **dict(attrs, data_layout="NCHW4c", kernel_layout="OIHW4i4o"))

    prepared = run_opt_pass(before, [T.SimplifyInference(), T.FoldConstant(), T.FoldScaleAxis()])
    with temp_op_attr("nn.conv2d", "FTVMAlterOpLayout", alter):
        after = run_opt_pass(prepared, [T.CanonicalizeOps(), T.AlterOpLayout(), T.FoldConstant()])
    assert all(c.attrs.data_layout == "NCHW4c" for c in calls(after, "nn.conv2d"))
    # the data goes in once (shared by the first conv and the residual add) and comes out once
    pairs = [(c.attrs.src_layout, c.attrs.dst_layout) for c in calls(after, "layout_transform")]
    assert sorted(pairs) == [("NCHW", "NCHW4c"), ("NCHW4c", "NCHW")]
    assert_same_results(before, after, rtol=1e-4, atol=1e-4)
    # the helper restored the registry: the x86 hook kiln registers (kiln/relay/op/strategy/x86.py)
    assert kiln.ir.Op.get("nn.conv2d").get_attr("FTVMAlterOpLayout") is relay.op.strategy.x86.alter_op_layout_conv2d
    assert kiln.topi.nn.conv2d_alter_layout.dispatch_dict["cpu"] is relay.op.strategy.alter_conv2d_layout


def test_dense_packed_through_topi_generic_hook(check_pass):
    """TVM's usage: topi.x86.dense_alter_op._alter_dense_layout dispatches on the current target; the rewriter
    transforms the weight once to the packed layout the hook names."""
    from kiln.relay.testing.temp_op_attr import TempOpAttr

    x = relay.var("x", shape=(32, 64))
    w = relay.var("w", shape=(48, 64))
    before = relay.Function([x, w], relay.nn.dense(x, w))
    hook = kiln.topi.x86.dense_alter_op._alter_dense_layout
    with TempOpAttr("nn.dense", "FTVMAlterOpLayout", hook):
        assert run_opt_pass(before, T.AlterOpLayout()).body.op.name == "nn.dense"  # no target: no change
        with kiln.target.Target("llvm -mcpu=core-avx2"):
            after = check_pass(before, T.AlterOpLayout())
    (dense,) = calls(after, "nn.contrib_dense_pack")
    (transform,) = calls(after, "layout_transform")
    assert transform.args[0] is after.params[1] and transform.attrs.dst_layout == dense.attrs.weight_layout
