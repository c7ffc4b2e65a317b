"""MobileNet (Howard et al., "MobileNets: Efficient Convolutional Neural Networks for Mobile Vision
Applications", 2017), as TVM's ``relay.testing.mobilenet`` builds it, in NCHW or NHWC.

A 3x3/2 convolution block, thirteen depthwise-separable blocks (a depthwise 3x3 convolution and a pointwise 1x1
convolution, each followed by batch norm and ReLU; some downsample with stride 2), global average pooling, a dense
layer and softmax. Parameters are named as in TVM (``separable_conv_block_1_weight`` for a depthwise kernel,
``separable_conv_block_1_conv2_weight``, ``fc_weight``...).
"""

from ...error import KilnError
from .. import op as _op
from ..analysis import free_vars
from ..expr import var
from ..function import Function
from . import layers
from .init import create_workload

# (depthwise channels, pointwise channels, downsample) of the separable blocks, at width multiplier 1
_BLOCKS = [(32, 64, False), (64, 128, True), (128, 128, False), (128, 256, True), (256, 256, False),
           (256, 512, True)]
_DEEP_TAIL = [(512, 512, False)] * 5 + [(512, 1024, True), (1024, 1024, False)]
_SHALLOW_TAIL = [(512, 1024, True), (1024, 1024, True)]


def conv_block(data, name, channels, kernel_size=(3, 3), strides=(1, 1), padding=(1, 1), epsilon=1e-5,
               layout="NCHW"):
    """Convolution, batch norm and ReLU."""
    conv = layers.conv2d(data, channels=channels, kernel_size=kernel_size, strides=strides, padding=padding,
                         data_layout=layout, kernel_layout=layers.conv_kernel_layout(layout), name=f"{name}_conv")
    norm = layers.batch_norm_infer(conv, epsilon=epsilon, axis=layout.index("C"), name=f"{name}_bn")
    return _op.nn.relu(norm)


def separable_conv_block(data, name, depthwise_channels, pointwise_channels, kernel_size=(3, 3), downsample=False,
                         padding=(1, 1), epsilon=1e-5, layout="NCHW", dtype="float32"):
    """A depthwise convolution (stride 2 when ``downsample``) and a pointwise one, each with batch norm and ReLU."""
    if layout not in ("NCHW", "NHWC"):
        raise KilnError(f"mobilenet: invalid layout {layout!r} (NCHW or NHWC)")
    kernel_size = tuple(kernel_size)
    shape = (depthwise_channels, 1, *kernel_size) if layout == "NCHW" else (*kernel_size, depthwise_channels, 1)
    axis = layout.index("C")
    strides = (2, 2) if downsample else (1, 1)
    conv1 = layers.conv2d(data, weight=var(f"{name}_weight", shape=shape, dtype=dtype), channels=depthwise_channels,
                          groups=depthwise_channels, kernel_size=kernel_size, strides=strides, padding=padding,
                          data_layout=layout, kernel_layout=layers.conv_kernel_layout(layout, True),
                          name=f"{name}_depthwise_conv1")
    act1 = _op.nn.relu(layers.batch_norm_infer(conv1, epsilon=epsilon, axis=axis, name=f"{name}_bn1"))
    conv2 = layers.conv2d(act1, channels=pointwise_channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                          data_layout=layout, kernel_layout=layers.conv_kernel_layout(layout), name=f"{name}_conv2")
    return _op.nn.relu(layers.batch_norm_infer(conv2, epsilon=epsilon, axis=axis, name=f"{name}_bn2"))


def mobile_net(num_classes=1000, data_shape=(1, 3, 224, 224), dtype="float32", alpha=1.0, is_shallow=False,
               layout="NCHW") -> Function:
    """MobileNet as a Relay function; ``alpha`` scales every width, ``is_shallow`` drops five 512-wide blocks."""
    data = var("data", shape=tuple(data_shape), dtype=dtype)
    body = conv_block(data, "conv_block_1", int(32 * alpha), strides=(2, 2), layout=layout)
    for k, (depthwise, pointwise, down) in enumerate(_BLOCKS + (_SHALLOW_TAIL if is_shallow else _DEEP_TAIL), 1):
        body = separable_conv_block(body, f"separable_conv_block_{k}", int(depthwise * alpha),
                                    int(pointwise * alpha), downsample=down, layout=layout, dtype=dtype)
    flat = _op.nn.batch_flatten(_op.nn.global_avg_pool2d(body, layout=layout))
    out = _op.nn.softmax(layers.dense_add_bias(flat, units=num_classes, name="fc"))
    return Function(free_vars(out), out)


def get_workload(batch_size=1, num_classes=1000, image_shape=(3, 224, 224), dtype="float32", layout="NCHW"):
    """MobileNet and its parameters (TVM's ``mobilenet.get_workload``); ``image_shape`` follows ``layout``."""
    net = mobile_net(num_classes=num_classes, data_shape=(batch_size, *image_shape), dtype=dtype, layout=layout)
    return create_workload(net)
