"""DenseNet (Huang et al., "Densely Connected Convolutional Networks", 2017), as TVM's ``relay.testing.densenet``
builds it (a port of MXNet Gluon's model).

A 7x7/2 convolution, batch norm, ReLU and a 3x3/2 max pool; four dense blocks, each layer of a block a
bottleneck (batch norm, ReLU, 1x1 convolution to ``bn_size * growth_rate`` channels, batch norm, ReLU, 3x3
convolution to ``growth_rate`` channels) fed by the previous layer, the block's result the concatenation of its
layers' outputs; between blocks a transition (batch norm, ReLU, 1x1 convolution halving the channels, 2x2 average
pool); then batch norm, ReLU, a 7x7 average pool, a dense layer with bias. Parameters as in TVM
(``conv2d_1_0_0_weight``, ``batch_1_0_0_gamma``, ``conv_t_0_weight``, ``dense_weight``...).
"""

from ...error import KilnError
from .. import op as _op
from ..analysis import free_vars
from ..expr import var
from ..function import Function
from . import layers
from .init import create_workload

# size -> (initial features, growth rate, layers per block)
SPECS = {121: (64, 32, [6, 12, 24, 16]), 161: (96, 48, [6, 12, 36, 24]), 169: (69, 32, [6, 12, 32, 32]),
         201: (64, 32, [6, 12, 48, 32])}


def _bn_relu(data, name):
    return _op.nn.relu(layers.batch_norm_infer(data, name=name))


def _dense_layer(data, growth_rate, bn_size, index):
    conv1 = layers.conv2d(_bn_relu(data, f"batch_1_{index}"), channels=bn_size * growth_rate, kernel_size=(1, 1),
                          name=f"conv2d_1_{index}")
    return layers.conv2d(_bn_relu(conv1, f"batch_2_{index}"), channels=growth_rate, kernel_size=(3, 3),
                         padding=(1, 1), name=f"conv2d_2_{index}")


def _dense_block(data, num_layers, bn_size, growth_rate, index):
    outputs = []
    for i in range(num_layers):
        data = _dense_layer(data, growth_rate, bn_size, f"{index}_{i}")
        outputs.append(data)
    return _op.concatenate(outputs, 1)


def _transition(data, num_output_features, index):
    conv = layers.conv2d(_bn_relu(data, f"batch_t_{index}"), channels=num_output_features, kernel_size=(1, 1),
                         name=f"conv_t_{index}")
    return _op.nn.avg_pool2d(conv, pool_size=(2, 2), strides=(2, 2))


def get_net(num_init_features, growth_rate, block_config, data_shape, data_dtype, bn_size=4,
            classes=1000) -> Function:
    """A DenseNet as a Relay function of ``data`` (``data_shape``) and every weight."""
    data = var("data", shape=tuple(data_shape), dtype=data_dtype)
    conv1 = layers.conv2d(data, channels=num_init_features, kernel_size=(7, 7), strides=(2, 2), padding=(3, 3),
                          name="conv1")
    body = _op.nn.max_pool2d(_bn_relu(conv1, "batch1"), pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    features = num_init_features
    for i, num_layers in enumerate(block_config):
        body = _dense_block(body, num_layers, bn_size, growth_rate, i)
        features += num_layers * growth_rate
        if i != len(block_config) - 1:
            features //= 2
            body = _transition(body, features, i)
    pooled = _op.nn.avg_pool2d(_bn_relu(body, "batch2"), pool_size=(7, 7))
    out = layers.dense_add_bias(_op.nn.batch_flatten(pooled), units=classes, name="dense")
    return Function(free_vars(out), out)


def get_workload(densenet_size=121, classes=1000, batch_size=4, image_shape=(3, 224, 224), dtype="float32"):
    """DenseNet-``densenet_size`` (121, 161, 169 or 201) and its parameters (TVM's ``densenet.get_workload``)."""
    if densenet_size not in SPECS:
        raise KilnError(f"densenet: unsupported size {densenet_size} (one of {sorted(SPECS)})")
    num_init_features, growth_rate, block_config = SPECS[densenet_size]
    net = get_net(num_init_features, growth_rate, block_config, (batch_size, *image_shape), dtype, 4, classes)
    return create_workload(net)
