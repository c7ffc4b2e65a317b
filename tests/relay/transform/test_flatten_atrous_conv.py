import pytest

from kiln import relay

Flatten = relay.transform.FlattenAtrousConv


def _sandwich(paddings, crops, block=(2, 2), conv_padding=(0, 0, 0, 0), pad_value=0.0):
    x = relay.var("x", shape=(1, 9, 11, 4))
    w = relay.var("w", shape=(3, 3, 4, 8))
    s2b = relay.nn.space_to_batch_nd(x, block, paddings, pad_value=pad_value)
    conv = relay.nn.conv2d(s2b, w, kernel_size=(3, 3), channels=8, padding=conv_padding, data_layout="NHWC",
                           kernel_layout="HWIO")
    return relay.Function([x, w], relay.nn.batch_to_space_nd(conv, block, crops))


@pytest.mark.parametrize("paddings, crops, block", [
    (((2, 3), (2, 5)), ((0, 1), (0, 1)), (2, 2)),  # TensorFlow's SAME
    (((0, 1), (0, 1)), ((0, 1), (0, 1)), (2, 2)),  # VALID
    (((3, 3), (1, 4)), ((1, 0), (0, 2)), (3, 2)),  # asymmetric, crops eating into the padding
])
def test_sandwich_becomes_the_dilated_convolution(check_pass, paddings, crops, block):
    after = check_pass(_sandwich(paddings, crops, block), Flatten())
    assert after.body.op.name == "nn.conv2d" and tuple(after.body.attrs.dilation) == block


@pytest.mark.parametrize("kwargs", [{"pad_value": 1.0}, {"conv_padding": (1, 1, 1, 1)}])
def test_patterns_it_cannot_express_stay(check_pass, kwargs):
    after = check_pass(_sandwich(((2, 3), (2, 5)), ((0, 1), (0, 1)), **kwargs), Flatten())
    assert after.body.op.name == "nn.batch_to_space_nd"


@pytest.mark.parametrize("zero_point, flattens", [(0, True), (1, False)])
def test_quantized_convolution_sandwich_flattens_when_it_pads_with_the_zero_point(check_pass, zero_point, flattens):
    x = relay.var("x", shape=(1, 9, 11, 4), dtype="int8")
    w = relay.var("w", shape=(3, 3, 4, 8), dtype="int8")
    block, paddings, crops = (2, 2), ((2, 3), (2, 5)), ((0, 1), (0, 1))
    conv = relay.qnn.op.conv2d(relay.nn.space_to_batch_nd(x, block, paddings), w, relay.const(zero_point), relay.const(0),
                               relay.const(0.5), relay.const(0.25), (3, 3), 8, data_layout="NHWC",
                               kernel_layout="HWIO")
    after = check_pass(relay.Function([x, w], relay.nn.batch_to_space_nd(conv, block, crops)), Flatten())
    assert (after.body.op.name == "qnn.conv2d") == flattens
