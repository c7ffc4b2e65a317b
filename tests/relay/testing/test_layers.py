"""relay.testing.layers: weights shaped from the input's type and the layouts, types computed node by node."""

import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.relay.testing import layers


def _weight(expr):
    return expr.args[1].type_annotation


def test_type_of_agrees_with_type_inference():
    data = relay.var("data", shape=(2, 3, 16, 16))
    body = relay.nn.relu(layers.conv2d(data, channels=8, kernel_size=(3, 3), strides=(2, 2), name="c"))
    body = relay.concatenate((body, body), axis=1)
    body = relay.split(body, 2, axis=1)[1]
    typed = relay.transform.InferTypeLocal(body)
    assert layers.type_of(body) == typed == relay.TensorType((2, 8, 7, 7), "float32")


@pytest.mark.parametrize("layout,kernel_layout,groups,channels,want", [
    ("NCHW", "OIHW", 1, 8, (8, 4, 3, 5)),
    ("NCHW", "OIHW", 4, 8, (8, 1, 3, 5)),
    ("NHWC", "HWIO", 1, 8, (3, 5, 4, 8)),
    ("NHWC", "HWOI", 4, 4, (3, 5, 4, 1)),   # depthwise, as mobilenet's NHWC blocks
])
def test_conv2d_weight_follows_layouts_and_groups(layout, kernel_layout, groups, channels, want):
    shape = (1, 4, 10, 12) if layout == "NCHW" else (1, 10, 12, 4)
    data = relay.var("data", shape=shape, dtype="float16")
    conv = layers.conv2d(data, channels=channels, kernel_size=(3, 5), groups=groups, data_layout=layout,
                         kernel_layout=kernel_layout, name="conv")
    assert conv.args[1].name_hint == "conv_weight"
    assert _weight(conv) == relay.TensorType(want, "float16")
    relay.transform.InferTypeLocal(conv)  # the operator accepts the weight it was given


def test_conv2d_transpose_and_conv3d_weights():
    data = relay.var("data", shape=(1, 6, 4, 4))
    deconv = layers.conv2d_transpose(data, channels=3, kernel_size=(4, 4), strides=(2, 2), padding=(1, 1),
                                     name="up")
    assert _weight(deconv).shape == (6, 3, 4, 4)
    assert layers.type_of(deconv).shape == (1, 3, 8, 8)
    cube = relay.var("cube", shape=(1, 2, 5, 6, 7))
    conv3 = layers.conv3d(cube, channels=4, kernel_size=(1, 2, 3), name="c3")
    assert _weight(conv3).shape == (4, 2, 1, 2, 3)


def test_dense_add_bias_and_batch_norm_create_named_parameters():
    data = relay.var("data", shape=(5, 7))
    out = layers.dense_add_bias(data, units=3, name="fc")
    names = {v.name_hint: v.type_annotation.shape for v in relay.analysis.free_vars(out)}
    assert names == {"data": (5, 7), "fc_weight": (3, 7), "fc_bias": (3,)}
    nhwc = relay.var("x", shape=(1, 4, 4, 6))
    norm = layers.batch_norm_infer(nhwc, axis=3, name="bn")
    params = {v.name_hint: v.type_annotation.shape for v in relay.analysis.free_vars(norm)}
    assert params == {"x": (1, 4, 4, 6), "bn_gamma": (6,), "bn_beta": (6,), "bn_moving_mean": (6,),
                      "bn_moving_var": (6,)}
    assert layers.type_of(norm).shape == (1, 4, 4, 6)


def test_clear_errors():
    data = relay.var("data", shape=(1, 3, 8, 8))
    with pytest.raises(KilnError, match="name="):
        layers.conv2d(data, channels=4, kernel_size=(3, 3))
    with pytest.raises(KilnError, match="channels= and kernel_size="):
        layers.conv2d(data, kernel_size=(3, 3), name="c")
    with pytest.raises(KilnError, match="no type annotation"):
        layers.type_of(relay.nn.relu(relay.var("untyped")))
    with pytest.raises(KilnError, match="unknown data layout"):
        layers.conv_kernel_layout("NCDHW")
