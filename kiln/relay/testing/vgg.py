"""VGG 11/13/16/19 (Simonyan and Zisserman, "Very Deep Convolutional Networks for Large-Scale Image
Recognition", 2014), as TVM's ``relay.testing.vgg`` builds them.

Five stages of 3x3 convolutions (with bias, optional batch norm, ReLU), each stage ending in a 2x2/2 max pool, then
three dense layers (4096, 4096, ``num_classes``) with ReLU and dropout between them, and softmax. Parameters as in
TVM (``conv1_1_weight``, ``conv1_1_bias``, ``bn1_1_gamma``, ``fc6_weight``...).
"""

from ...error import KilnError
from .. import op as _op
from ..analysis import free_vars
from ..expr import var
from ..function import Function
from . import layers
from .init import create_workload

# depth -> (convolutions per stage, channels per stage)
SPECS = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]), 13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
         16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]), 19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_feature(internal_layer, conv_counts, filters, batch_norm=False):
    """The convolution stages."""
    for i, count in enumerate(conv_counts):
        for j in range(count):
            name = f"conv{i + 1}_{j + 1}"
            internal_layer = layers.conv2d(internal_layer, kernel_size=(3, 3), padding=(1, 1), channels=filters[i],
                                           name=name)
            internal_layer = layers.bias_add(internal_layer, f"{name}_bias")
            if batch_norm:
                internal_layer = layers.batch_norm_infer(internal_layer, name=f"bn{i + 1}_{j + 1}")
            internal_layer = _op.nn.relu(internal_layer)
        internal_layer = _op.nn.max_pool2d(internal_layer, pool_size=(2, 2), strides=(2, 2))
    return internal_layer


def get_classifier(input_data, num_classes):
    """The three dense layers."""
    body = _op.nn.batch_flatten(input_data)
    for name in ("fc6", "fc7"):
        body = _op.nn.dropout(_op.nn.relu(layers.dense_add_bias(body, units=4096, name=name)), rate=0.5)
    return layers.dense_add_bias(body, units=num_classes, name="fc8")


def get_net(batch_size, image_shape, num_classes, dtype, num_layers=11, batch_norm=False) -> Function:
    """VGG-``num_layers`` as a Relay function of ``data`` and every weight."""
    if num_layers not in SPECS:
        raise KilnError(f"vgg: invalid num_layers {num_layers} (one of {sorted(SPECS)})")
    conv_counts, filters = SPECS[num_layers]
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    out = _op.nn.softmax(get_classifier(get_feature(data, conv_counts, filters, batch_norm), num_classes))
    return Function(free_vars(out), out)


def get_workload(batch_size, num_classes=1000, image_shape=(3, 224, 224), dtype="float32", num_layers=11,
                 batch_norm=False):
    """VGG and its parameters (TVM's ``vgg.get_workload``)."""
    return create_workload(get_net(batch_size, image_shape, num_classes, dtype, num_layers, batch_norm))
