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
