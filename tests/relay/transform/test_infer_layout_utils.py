"""Tests of kiln/relay/transform/infer_layout_utils.py: the layout-inference protocol and its shared rules."""

import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.ir.op import Op
from kiln.relay.transform.infer_layout_utils import (
    InferCorrectLayoutOutput,
    adjust_subordinate_factors,
    binary_broadcast_layout,
    elemwise_arbitrary_layout,
    factor_of,
    isomorphic,
    try_transform_like,
)
from kiln.tir.layout import SCALAR, layout


def names(layouts):
    return [None if lay is None else lay.name for lay in layouts]


def tt(*shape):
    return relay.TensorType(shape, "float32")


def test_output_normalizes_layout_names():
    out = InferCorrectLayoutOutput(["NCHW", layout("C"), "", None], ["NCHW16c"], None)
    assert names(out.input_layouts) == ["NCHW", "C", None, None] and names(out.output_layouts) == ["NCHW16c"]
    with pytest.raises(KilnError, match="expected a layout"):
        InferCorrectLayoutOutput([3], [], None)


def test_factor_of_is_minus_one_when_not_split():
    lay = layout("NCHW16c")
    assert factor_of(lay, "C") == 16 and factor_of(lay, "c") == 16 and factor_of(lay, "H") == -1


def test_try_transform_like_renames_and_aligns_right():
    """TVM's documented examples: NW like NC -> NC1c is NW1w; W (a lower rank) likewise."""
    assert try_transform_like(layout("NW"), layout("NC"), layout("NC1c")).name == "NW1w"
    assert try_transform_like(layout("W"), layout("NC"), layout("NC1c")).name == "NW1w"
    assert try_transform_like(layout("CHW"), layout("NCHW"), layout("NCHW16c")).name == "NCHW16c"
    assert try_transform_like(SCALAR, layout("NCHW"), layout("NCHW16c")) == SCALAR
    # only the structure counts: CH stands for HW, the other axes get fresh names
    assert try_transform_like(layout("CH"), layout("NCHW"), layout("NCHW16c")).name == "NACH16a"
    assert try_transform_like(layout("NC4c"), layout("NCHW"), layout("NCHW16c")) is None  # another structure


def test_adjust_subordinate_factors():
    target = layout("NCHW16c")
    assert adjust_subordinate_factors(target, layout("C"), (64,)).name == "NCHW16c"
    assert adjust_subordinate_factors(target, layout("C"), (1,)).name == "NCHW1c"  # broadcast channel
    assert adjust_subordinate_factors(target, layout("HW"), (3, 3)).name == "NCHW1c"  # no channel axis
    # a size-1 axis the old layout already split is a real block, not a broadcast
    assert adjust_subordinate_factors(layout("NCHW2c"), layout("NCHW4c"), (1, 1, 1, 1, 4)).name == "NCHW2c"


def test_isomorphic():
    assert isomorphic(layout("NCHW16c"), layout("NDHW16d"))
    assert not isomorphic(layout("NCHW16c"), layout("NCHW8c"))
    assert isomorphic(layout("NCHW"), layout("ABCD")) and isomorphic(layout("NCHW4c"), layout("NCHW4h"))
    assert not isomorphic(layout("NCHW"), layout("NCW"))


def test_elemwise_rule():
    first = elemwise_arbitrary_layout(None, None, [None, layout("NCHW")], [tt(1), tt(1)])
    assert names(first.input_layouts) == ["NCHW", "NCHW"] and names(first.output_layouts) == ["NCHW"]
    second = elemwise_arbitrary_layout(None, [layout("NCHW16c")], [layout("NCHW")], [tt(1)])
    assert names(second.output_layouts) == ["NCHW16c"]


def test_broadcast_rule_before_and_after_rewriting():
    types = [tt(1, 64, 8, 8), tt(64, 1, 1)]
    first = binary_broadcast_layout(None, None, [layout("NCHW"), None], types)
    assert names(first.input_layouts) == ["NCHW", "CHW"] and names(first.output_layouts) == ["NCHW"]
    second = binary_broadcast_layout(None, [layout("NCHW16c"), layout("CHW")], [layout("NCHW"), layout("CHW")],
                                     types)
    assert names(second.input_layouts) == ["NCHW16c", "NCHW16c"] and names(second.output_layouts) == ["NCHW16c"]
    one_channel = binary_broadcast_layout(None, [layout("C"), layout("NHWC4c")], [layout("C"), layout("NHWC")],
                                          [tt(1), tt(1, 8, 8, 64)])
    assert names(one_channel.input_layouts) == ["NHWC1c", "NHWC4c"]
    unknown = binary_broadcast_layout(None, None, [None, None], types)
    assert names(unknown.input_layouts) == [None, None]


def test_every_binary_broadcast_and_unary_operator_has_a_rule():
    for name in ("add", "multiply", "greater", "maximum", "power"):
        assert Op.get(name).get_attr("FInferCorrectLayout") is binary_broadcast_layout
    for name in ("exp", "nn.relu", "cast", "clip", "sigmoid"):
        assert Op.get(name).get_attr("FInferCorrectLayout") is elemwise_arbitrary_layout
    for name in ("nn.lrn", "nn.softmax", "where", "reshape"):  # boundaries, as in TVM
        assert Op.get(name).get_attr("FInferCorrectLayout") is None
