"""Tests of the conversions of kiln/relay/transform/convert_layout_ops.py (conv2d_transpose, conv3d, deformable_conv2d,
resize, roi_align) and of LayoutConfig, each result compared with the reference interpreter on random inputs."""

import pytest

from kiln import relay
from kiln.error import KilnError

T = relay.transform


def calls(func, name):
    found = []
    relay.post_order_visit(func, lambda e: found.append(e) if isinstance(e, relay.Call)
                           and getattr(e.op, "name", None) == name else None)
    return found


def test_conv2d_transpose_and_conv3d_take_their_default_kernel_layouts(check_pass):
    x = relay.var("x", shape=(1, 6, 6, 4))
    w = relay.var("w", shape=(3, 3, 4, 5))
    y = relay.nn.conv2d_transpose(x, w, channels=5, kernel_size=(3, 3), padding=(1, 1), data_layout="NHWC",
                                  kernel_layout="HWIO")
    after = check_pass(relay.Function([x, w], relay.nn.relu(y)), T.ConvertLayout({"nn.conv2d_transpose":
                                                                                  ["NCHW", "default"]}))
    (conv,) = calls(after, "nn.conv2d_transpose")
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == ("NCHW", "IOHW")
    x3 = relay.var("x", shape=(1, 3, 4, 5, 5))
    w3 = relay.var("w", shape=(2, 3, 3, 3, 3))
    after = check_pass(relay.Function([x3, w3], relay.nn.conv3d(x3, w3, padding=(1, 1, 1))),
                       T.ConvertLayout({"nn.conv3d": ["NDHWC", "default"]}))
    (conv,) = calls(after, "nn.conv3d")
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == ("NDHWC", "DHWIO")


def test_deformable_conv2d_offsets_follow_the_data(check_pass):
    x = relay.var("x", shape=(1, 4, 6, 6))
    offset = relay.var("offset", shape=(1, 18, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    y = relay.nn.deformable_conv2d(x, offset, w, padding=(1, 1), channels=4, kernel_size=(3, 3))
    after = check_pass(relay.Function([x, offset, w], y), T.ConvertLayout({"nn.deformable_conv2d":
                                                                           ["NHWC", "default"]}))
    (conv,) = calls(after, "nn.deformable_conv2d")
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == ("NHWC", "HWIO")
    pairs = sorted((c.attrs.src_layout, c.attrs.dst_layout) for c in calls(after, "layout_transform"))
    assert pairs == [("NCHW", "NHWC"), ("NCHW", "NHWC"), ("NHWC", "NCHW"), ("OIHW", "HWIO")]


def test_resize_and_roi_align_follow_a_converted_conv(check_pass):
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    rois = relay.var("rois", shape=(2, 5))
    y = relay.nn.conv2d(x, w, padding=(1, 1))
    resized = relay.image.resize2d(y, (9, 9))
    pooled = relay.vision.roi_align(y, rois, pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=2)
    desired = {"nn.conv2d": ["NHWC", "default"], "image.resize2d": ["NHWC"], "vision.roi_align": ["NHWC", "default"]}
    after = check_pass(relay.Function([x, w, rois], relay.Tuple([resized, pooled])), T.ConvertLayout(desired))
    assert calls(after, "image.resize2d")[0].attrs.layout == "NHWC"
    assert calls(after, "vision.roi_align")[0].attrs.layout == "NHWC"
    with pytest.raises(KilnError, match="rois layout"):
        check_pass(relay.Function([x, w, rois], pooled),
                   T.ConvertLayout({"vision.roi_align": ["NHWC", "NC"]}))


def test_layout_config_skips_layers(check_pass):
    x = relay.var("x", shape=(1, 4, 6, 6))
    w1, w2 = relay.var("w1", shape=(4, 4, 3, 3)), relay.var("w2", shape=(4, 4, 3, 3))
    y = relay.nn.conv2d(relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1))), w2, padding=(1, 1))
    with T.LayoutConfig(skip_layers=[0]) as config:
        after = check_pass(relay.Function([x, w1, w2], y), T.ConvertLayout({"nn.conv2d": ["NHWC", "default"]}))
    assert config.skip_counter == 2 and T.LayoutConfig.current is None
    assert sorted(c.attrs.data_layout for c in calls(after, "nn.conv2d")) == ["NCHW", "NHWC"]
