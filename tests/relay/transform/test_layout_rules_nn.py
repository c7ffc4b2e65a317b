"""Tests of the nn and image operators' layout rules (kiln/relay/transform/layout_rules_nn.py), through AlterOpLayout
(conv2d to NCHW4c) and ConvertLayout (to NHWC), each result compared with the reference interpreter."""

import pytest

from kiln import relay
from kiln.relay.op.op import register_infer_correct_layout
from kiln.relay.testing.temp_op_attr import TempOpAttr
from kiln.relay.transform.infer_layout_utils import InferCorrectLayoutOutput

from .test_layout_rules import calls, run, transforms

T = relay.transform


def test_poolings_follow_unless_the_pooled_axes_are_split(check_pass):
    after = run(check_pass, lambda y: relay.nn.max_pool2d(y, pool_size=(2, 2)))
    assert calls(after, "nn.max_pool2d")[0].attrs.layout == "NCHW4c"
    after = run(check_pass, lambda y: relay.nn.adaptive_avg_pool2d(y, output_size=(2, 2)))
    assert calls(after, "nn.adaptive_avg_pool2d")[0].attrs.layout == "NCHW4c"
    after = run(check_pass, lambda y: relay.nn.avg_pool2d(y, pool_size=(2, 2)), data_layout="NCHW2h")
    assert calls(after, "nn.avg_pool2d")[0].attrs.layout == "NCHW"  # H split: pooled in NCHW


def test_upsampling_and_resize(check_pass):
    after = run(check_pass, lambda y: relay.nn.upsampling(y, scale_h=2, scale_w=2))
    assert calls(after, "nn.upsampling")[0].attrs.layout == "NCHW4c"
    after = run(check_pass, lambda y: relay.nn.upsampling(y, scale_h=relay.const(2.0), scale_w=2))
    assert calls(after, "nn.upsampling")[0].attrs.scale_h == 2.0  # a constant scale is read back (TVM)
    after = run(check_pass, lambda y: relay.image.resize2d(y, (9, 9)))
    assert calls(after, "image.resize2d")[0].attrs.layout == "NCHW"  # TVM's rule: only a layout of the same rank
    after = run(check_pass, lambda y: relay.image.resize2d(y, (9, 9)), data_layout="NHWC")
    assert calls(after, "image.resize2d")[0].attrs.layout == "NHWC"


@pytest.mark.parametrize("widths, follows", [(((0, 0), (0, 0), (1, 1), (2, 2)), True),
                                             (((0, 0), (1, 1), (1, 1), (0, 0)), False)])
def test_pad_follows_unless_a_split_axis_is_padded(check_pass, widths, follows):
    after = run(check_pass, lambda y: relay.nn.pad(y, widths))
    (pad,) = calls(after, "nn.pad")
    assert (len(pad.attrs.pad_width) == 5) == follows


def test_normalizations_move_their_axis_but_not_onto_a_split_one(check_pass):
    def bn(y):
        vec = [relay.var(n, shape=(8,)) for n in ("g", "b", "m", "v")]
        return relay.nn.batch_norm(y, *vec)[0]

    after = run(check_pass, bn)
    assert calls(after, "nn.batch_norm")[0].attrs.axis == 1 and transforms(after)[-1] == ("NCHW4c", "NCHW")
    assert len(transforms(after)) == 2  # transformed back before the batch_norm, not after
    nhwc = run(check_pass, lambda y: relay.nn.layer_norm(y, relay.var("g", shape=(8,)), relay.var("b", shape=(8,)),
                                                         axis=1), data_layout="NHWC")
    assert calls(nhwc, "nn.layer_norm")[0].attrs.axis == 3
    nhwc = run(check_pass, lambda y: relay.nn.l2_normalize(y, 1e-5, axis=[1]), data_layout="NHWC")
    assert tuple(calls(nhwc, "nn.l2_normalize")[0].attrs.axis) == (3,)


def test_bias_add_moves_its_axis_and_prelu_dense_read_the_original(check_pass):
    nhwc = run(check_pass, lambda y: relay.nn.bias_add(y, relay.var("b", shape=(8,))), data_layout="NHWC")
    assert calls(nhwc, "nn.bias_add")[0].attrs.axis == 3
    after = run(check_pass, lambda y: relay.nn.bias_add(y, relay.var("b", shape=(8,))))
    assert calls(after, "nn.bias_add")[0].attrs.axis == 1 and transforms(after)[-1] == ("NCHW4c", "NCHW")
    after = run(check_pass, lambda y: relay.nn.prelu(y, relay.var("a", shape=(8,))))
    assert transforms(after)[-1] == ("NCHW4c", "NCHW") and len(transforms(after)) == 2
    after = run(check_pass, lambda y: relay.nn.dense(relay.nn.batch_flatten(y), relay.var("d", shape=(3, 288))))
    assert transforms(after)[-1] == ("NCHW4c", "NCHW")


def test_a_user_rule_at_a_higher_level_is_used(check_pass):
    """TVM's register_infer_correct_layout: here relu refuses every layout change, so it becomes a boundary."""
    seen = []

    def refuse(attrs, new_in_layouts, old_in_layouts, old_in_types):
        seen.append(new_in_layouts)
        return InferCorrectLayoutOutput([old_in_layouts[0]], [old_in_layouts[0]], attrs)

    with TempOpAttr("nn.relu", "FInferCorrectLayout", refuse):
        after = run(check_pass, relay.nn.relu)
    assert transforms(after)[-1] == ("NCHW4c", "NCHW") and len(seen) == 2 and seen[0] is None
    assert register_infer_correct_layout.__name__ == "register_infer_correct_layout"


def test_conv_result_carried_through_several_rules(check_pass):
    def make(y):
        y = relay.nn.relu(relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2)))
        y = relay.nn.upsampling(y, scale_h=2, scale_w=2)
        return relay.sum(relay.nn.pad(y, ((0, 0), (0, 0), (1, 1), (1, 1))), axis=[2, 3])

    after = run(check_pass, make)
    assert transforms(after) == [("NCHW", "NCHW4c"), ("NC4c", "NC")]
