"""SqueezeNet 1.0 and 1.1 (Iandola et al., "SqueezeNet: AlexNet-level accuracy with 50x fewer parameters and
<0.5MB model size", 2016), as TVM's ``relay.testing.squeezenet`` builds them.

A first convolution, eight fire modules (a 1x1 squeeze convolution feeding a 1x1 and a 3x3 expand convolution whose
results are concatenated) with max pools between them, dropout, a 1x1 classifier convolution, global average
pooling and softmax. Every convolution has a bias and ReLU. Parameters as in TVM (``fire1_input_conv_weight``,
``fire1_input_conv_bias``, ``conv_final_weight``...).
"""

from ...error import KilnError
from .. import op as _op
from ..analysis import free_vars
from ..expr import var
from ..function import Function
from . import layers
from .init import create_workload

# per version: the first convolution (channels, kernel, stride, pad), then the fire modules
# (squeeze, expand 1x1, expand 3x3), "pool" for a 3x3/2 max pool
_LAYOUTS = {
    "1.0": ((96, 7, 2, 3), ["pool", (16, 64, 64), (16, 64, 64), (32, 128, 128), "pool", (32, 128, 128),
                            (48, 192, 192), (48, 192, 192), (64, 256, 256), "pool", (64, 256, 256)]),
    "1.1": ((64, 3, 2, 1), ["pool", (16, 64, 64), (16, 64, 64), "pool", (32, 128, 128), (32, 128, 128), "pool",
                            (48, 192, 192), (48, 192, 192), (64, 256, 256), (64, 256, 256)]),
}


def _conv_relu(data, channels, kernel, padding, name, strides=1):
    conv = layers.conv2d(data, channels=channels, kernel_size=(kernel, kernel), strides=(strides, strides),
                         padding=(padding, padding), name=name)
    return _op.nn.relu(layers.bias_add(conv, f"{name}_bias"))


def _fire(data, squeeze, expand1x1, expand3x3, prefix):
    squeezed = _conv_relu(data, squeeze, 1, 0, f"{prefix}_input_conv")
    left = _conv_relu(squeezed, expand1x1, 1, 0, f"{prefix}_left_conv")
    right = _conv_relu(squeezed, expand3x3, 3, 1, f"{prefix}_right_conv")
    return _op.concatenate((left, right), axis=1)


def get_net(batch_size, image_shape, num_classes, version, dtype) -> Function:
    """SqueezeNet ``version`` ("1.0" or "1.1") as a Relay function of ``data`` and every weight."""
    if version not in _LAYOUTS:
        raise KilnError(f"squeezenet: unsupported version {version!r} (1.0 or 1.1)")
    (channels, kernel, stride, pad), modules = _LAYOUTS[version]
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    net = _conv_relu(data, channels, kernel, pad, "conv1", strides=stride)
    fire = 0
    for module in modules:
        if module == "pool":
            net = _op.nn.max_pool2d(net, pool_size=(3, 3), strides=(2, 2))
        else:
            fire += 1
            net = _fire(net, *module, f"fire{fire}")
    net = _op.nn.dropout(net, rate=0.5)
    net = _conv_relu(net, num_classes, 1, 0, "conv_final")
    net = _op.nn.softmax(_op.nn.batch_flatten(_op.nn.global_avg_pool2d(net)))
    return Function(free_vars(net), net)


def get_workload(batch_size=1, num_classes=1000, version="1.0", image_shape=(3, 224, 224), dtype="float32"):
    """SqueezeNet and its parameters (TVM's ``squeezenet.get_workload``)."""
    return create_workload(get_net(batch_size, image_shape, num_classes, version, dtype))
