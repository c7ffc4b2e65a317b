"""Tests of the tensor operators' layout rules (kiln/relay/transform/layout_rules.py, layout_rules_slice.py): each
rule is exercised through AlterOpLayout turning an NCHW (or NHWC) conv2d into NCHW4c, then the result is compared
with the reference interpreter on random inputs."""

import pytest

from kiln import relay
from kiln.relay.testing.temp_op_attr import TempOpAttr

T = relay.transform


def blocked(data_layout="NCHW4c"):
    def alter(attrs, inputs, tinfos, out_type):
        return relay.nn.conv2d(*inputs, **dict(attrs, data_layout=data_layout))

    return TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", alter)


def conv(x, channels=8, layout="NCHW"):
    cin = x.type_annotation.shape[1 if layout == "NCHW" else 3]
    w = relay.var("w", shape=(channels, cin, 3, 3) if layout == "NCHW" else (3, 3, cin, channels))
    y = relay.nn.conv2d(x, w, channels=channels, kernel_size=(3, 3), padding=(1, 1), data_layout=layout,
                        kernel_layout="OIHW" if layout == "NCHW" else "HWIO")
    return y, w


def calls(func, name):
    found = []
    relay.post_order_visit(func, lambda e: found.append(e) if isinstance(e, relay.Call)
                           and getattr(e.op, "name", None) == name else None)
    return found


def run(check_pass, make, layout="NCHW", data_layout="NCHW4c", shape=(1, 8, 6, 6)):
    """Alter the conv of ``make(conv_output)`` to ``data_layout``; returns the checked result."""
    x = relay.var("x", shape=shape if layout == "NCHW" else (shape[0], shape[2], shape[3], shape[1]))
    y, w = conv(x, layout=layout)
    out = make(y)
    before = relay.Function(relay.analysis.free_vars(out), out)
    with blocked(data_layout):
        return check_pass(before, T.AlterOpLayout())


def transforms(func):
    return [(c.attrs.src_layout, c.attrs.dst_layout) for c in calls(func, "layout_transform")]


@pytest.mark.parametrize("keepdims", [True, False])
def test_sum_over_a_split_axis_reduces_both_parts(check_pass, keepdims):
    after = run(check_pass, lambda y: relay.sum(y, axis=1, keepdims=keepdims))
    (reduce,) = calls(after, "sum")
    assert tuple(reduce.attrs.axis) == (1, 4)
    assert transforms(after)[-1] == (("NCHW1c", "NCHW") if keepdims else transforms(after)[-1])
    if not keepdims:
        assert ("NCHW4c", "NCHW") not in transforms(after)  # the output (NHW) needs no transform


def test_mean_with_exclude_and_argmax(check_pass):
    after = run(check_pass, lambda y: relay.mean(y, axis=1, exclude=True))
    assert tuple(calls(after, "mean")[0].attrs.axis) == (1, 4)
    assert transforms(after)[-1] == ("C4c", "C")
    after = run(check_pass, lambda y: relay.argmax(y, axis=[2, 3], keepdims=True))
    assert tuple(calls(after, "argmax")[0].attrs.axis) == (2, 3)


def test_concatenate_nhwc_along_channels(check_pass):
    def make(y):
        return relay.concatenate([y, relay.nn.relu(y)], axis=3)

    after = run(check_pass, make, layout="NHWC")
    assert calls(after, "concatenate")[0].attrs.axis == 1
    assert transforms(after) == [("NHWC", "NCHW4c"), ("NCHW4c", "NHWC")]


def test_split_by_indices_divisible_and_not(check_pass):
    after = run(check_pass, lambda y: relay.split(y, [4], axis=1).astuple())
    (split,) = calls(after, "split")
    assert tuple(split.attrs.indices_or_sections) == (1,) and split.attrs.axis == 1
    after = run(check_pass, lambda y: relay.split(y, [2], axis=1).astuple())
    assert tuple(calls(after, "split")[0].attrs.indices_or_sections) == (2,)  # not on blocks: split NCHW
    after = run(check_pass, lambda y: relay.split(y, 2, axis=1).astuple())
    assert calls(after, "split")[0].attrs.axis == 1 and ("NCHW", "NCHW4c") not in transforms(after)[1:]


def test_squeeze_and_transpose(check_pass):
    after = run(check_pass, lambda y: relay.squeeze(relay.nn.global_avg_pool2d(y), axis=[2, 3]))
    assert transforms(after)[-1] == ("NC4c", "NC")
    # as in TVM, a transpose follows only a permutation of the layout (NCHW -> NHWC), not a blocking of it
    after = run(check_pass, lambda y: relay.transpose(y, (0, 1, 3, 2)))
    assert tuple(calls(after, "transpose")[0].attrs.axes) == (0, 1, 3, 2)
    assert transforms(after)[-1] == ("NCHW4c", "NCHW")
    after = run(check_pass, lambda y: relay.transpose(y, (0, 2, 3, 1)), data_layout="NHWC")
    assert tuple(calls(after, "transpose")[0].attrs.axes) == (0, 1, 2, 3)
    assert transforms(after) == [("NCHW", "NHWC")]


def test_strided_slice_on_blocks_and_off_blocks(check_pass):
    after = run(check_pass, lambda y: relay.strided_slice(y, begin=[0, 4], end=[1, 8]))
    (sl,) = calls(after, "strided_slice")
    assert tuple(sl.attrs.begin) == (0, 1) and tuple(sl.attrs.end) == (1, 2)
    after = run(check_pass, lambda y: relay.strided_slice(y, begin=[0, 3], end=[1, 8]))
    assert tuple(calls(after, "strided_slice")[0].attrs.begin) == (0, 3)  # not on blocks: sliced in NCHW
    after = run(check_pass, lambda y: relay.strided_slice(y, begin=[4], end=[8], axes=[3]), layout="NHWC",
                data_layout="NHWC4c")
    (sl,) = calls(after, "strided_slice")
    assert tuple(sl.attrs.axes) == (3,) and tuple(sl.attrs.begin) == (1,) and tuple(sl.attrs.end) == (2,)
    after = run(check_pass, lambda y: relay.strided_slice(y, begin=[0, 0], end=[1, 8], strides=[1, 2]))
    assert tuple(calls(after, "strided_slice")[0].attrs.end) == (1, 8)  # a stride inside blocks


def test_topk_keeps_a_split_axis_out(check_pass):
    after = run(check_pass, lambda y: relay.topk(y, k=2, axis=3, ret_type="values"))
    assert calls(after, "topk")[0].attrs.axis == 3 and transforms(after)[-1] == ("NCHW4c", "NCHW")
    after = run(check_pass, lambda y: relay.topk(y, k=2, axis=1, ret_type="values"))
    assert calls(after, "topk")[0].attrs.axis == 1 and transforms(after)[-1] == ("NCHW4c", "NCHW")
    assert len(transforms(after)) == 2  # the topk reads NCHW: the conv output is transformed back first


def test_broadcast_with_scalars_and_vectors(check_pass):
    def make(y):
        y = relay.add(y, relay.var("b", shape=(8, 1, 1)))
        y = relay.multiply(relay.var("s", shape=(1,)), y)
        return relay.subtract(y, relay.var("z", shape=(1, 6, 6)))

    after = run(check_pass, make)
    assert sorted(transforms(after)) == sorted([("NCHW", "NCHW4c"), ("NCHW", "NCHW4c"), ("NCHW", "NCHW1c"),
                                                ("NCHW4c", "NCHW")])
