import numpy as np
import pytest

from kiln import relay

Fold = relay.transform.FoldExplicitPadding


def _ops(func):
    names = []
    relay.analysis.post_order_visit(func, lambda e: names.append(e.op.name) if isinstance(e, relay.Call) else None)
    return names


@pytest.mark.parametrize("layout, conv, pad_width, own, expected", [
    ("NCHW", relay.nn.conv2d, [[0, 0], [0, 0], [1, 2], [0, 3]], (1, 0, 1, 0), (2, 0, 3, 3)),
    ("NHWC", relay.nn.conv2d, [[0, 0], [2, 1], [1, 1], [0, 0]], (0, 0, 0, 0), (2, 1, 1, 1)),
    ("NCW", relay.nn.conv1d, [[0, 0], [0, 0], [3, 1]], (1, 1), (4, 2)),
    ("NCDHW", relay.nn.conv3d, [[0, 0], [0, 0], [1, 0], [0, 1], [1, 1]], (0,) * 6, (1, 0, 1, 0, 1, 1)),
])
def test_zero_padding_of_spatial_axes_folds_into_a_convolution(check_pass, layout, conv, pad_width, own, expected):
    ndim = len(layout) - 2
    channels_last = layout[-1] == "C"
    x = relay.var("x", shape=[1] + [7] * ndim + [3] if channels_last else [1, 3] + [7] * ndim)
    kernel_layout = ("HWIO" if channels_last else "OIHW") if ndim == 2 else "OI" + layout[2:]
    w = relay.var("w", shape=[3, 3, 3, 4] if channels_last else [4, 3] + [3] * ndim)
    before = relay.Function([x, w], conv(relay.nn.pad(x, pad_width), w, padding=own, data_layout=layout,
                                         kernel_layout=kernel_layout))
    after = check_pass(before, Fold())
    assert len(_ops(after)) == 1 and tuple(after.body.attrs.padding) == expected


@pytest.mark.parametrize("pad_width, value, mode", [
    ([[1, 0], [0, 0], [1, 1], [0, 0]], 0.0, "constant"),  # pads the batch axis
    ([[0, 0], [0, 0], [1, 1], [1, 1]], 1.0, "constant"),  # not zero
    ([[0, 0], [0, 0], [1, 1], [1, 1]], 0.0, "edge"),
])
def test_pads_a_convolution_cannot_express_stay(check_pass, pad_width, value, mode):
    x, w = relay.var("x", shape=(1, 2, 5, 5)), relay.var("w", shape=(2, 2, 3, 3))
    before = relay.Function([x, w], relay.nn.conv2d(relay.nn.pad(x, pad_width, value, mode), w))
    assert _ops(check_pass(before, Fold())) == ["nn.pad", "nn.conv2d"]


def test_max_pool_folds_the_lowest_value_of_the_dtype(check_pass):
    x = relay.var("x", shape=(1, 2, 6, 6), dtype="uint8")
    folds = relay.nn.max_pool2d(relay.nn.pad(x, [[0, 0], [0, 0], [1, 0], [0, 2]], relay.const(0, "uint8")), (2, 2))
    stays = relay.nn.max_pool2d(relay.nn.pad(x, [[0, 0], [0, 0], [1, 0], [0, 2]], relay.const(5, "uint8")), (2, 2))
    after = check_pass(relay.Function([x], relay.Tuple([folds, stays])), Fold())
    assert after.body.fields[0].args[0] is after.params[0]
    assert tuple(after.body.fields[0].attrs.padding) == (1, 0, 0, 2)
    assert after.body.fields[1].args[0].op.name == "nn.pad"
    f32 = relay.var("y", shape=(1, 1, 4, 4))
    lowest = float(np.finfo("float32").min)
    pooled = relay.nn.max_pool2d(relay.nn.pad(f32, [[0, 0], [0, 0], [1, 1], [1, 1]], lowest), (3, 3))
    assert _ops(check_pass(relay.Function([f32], pooled), Fold())) == ["nn.max_pool2d"]


@pytest.mark.parametrize("own, count_include_pad, folds", [
    ((0, 0, 0, 0), False, True),  # no padding of its own: the pad's zeros are counted from now on
    ((1, 0, 1, 0), True, True),
    ((1, 0, 1, 0), False, False),  # its own padding is not counted, the pad's must be
])
def test_average_pool_folds_only_when_the_pads_zeros_can_be_counted(check_pass, own, count_include_pad, folds):
    x = relay.var("x", shape=(1, 2, 6, 6))
    pool = relay.nn.avg_pool2d(relay.nn.pad(x, [[0, 0], [0, 0], [0, 2], [2, 0]]), (2, 2), padding=own,
                               count_include_pad=count_include_pad)
    after = check_pass(relay.Function([x], pool), Fold())
    assert (_ops(after) == ["nn.avg_pool2d"]) == folds
    if folds:
        assert after.body.attrs.count_include_pad


def test_quantized_convolution_folds_a_pad_of_its_input_zero_point(check_pass):
    x = relay.var("x", shape=(1, 2, 4, 4), dtype="int8")
    w = relay.var("w", shape=(2, 2, 2, 2), dtype="int8")

    def qconv(zero_point, pad_value):
        pad = relay.nn.pad(x, [[0, 0], [0, 0], [1, 1], [1, 1]], relay.const(pad_value, "int8"))
        return relay.qnn.op.conv2d(pad, w, relay.const(zero_point, "int32"), relay.const(0, "int32"),
                                   relay.const(0.5, "float32"), relay.const(0.25, "float32"), (2, 2), 2)

    after = check_pass(relay.Function([x, w], relay.Tuple([qconv(3, 3), qconv(3, 0)])), Fold())
    assert tuple(after.body.fields[0].attrs.padding) == (1, 1, 1, 1) and after.body.fields[0].args[0] is after.params[0]
    assert after.body.fields[1].args[0].op.name == "nn.pad"
