"""ResNet workloads built from Relay operators, following TVM's ``relay.testing.resnet``.

The network is the pre-activation ResNet (He et al., "Identity Mappings in Deep Residual Networks") that TVM ships:
an input batch norm, a 7x7/2 convolution with max pooling (3x3/1 for images of height <= 32), stages of residual
units (bottleneck units for 50 layers and more, basic units below), then batch norm, ReLU, global average pooling,
flatten, dense + bias and softmax. Every weight is a parameter of ``@main`` named as in TVM
(``stage1_unit1_conv1_weight``, ``bn_data_gamma``, ``fc1_bias``...); ``get_workload`` returns the typed module and
seeded random values for those parameters.
"""


from ...error import KilnError
from ..expr import var
from ..function import Function
from ..op import nn
from ..op.tensor import add
from .init import create_workload

_UNITS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3],
          200: [3, 24, 36, 3], 269: [3, 30, 48, 8]}


class _Builder:
    """Creates layers and records the parameter variables in order of creation."""

    def __init__(self, dtype):
        self.dtype = dtype

    def param(self, name, shape):
        return var(name, shape=shape, dtype=self.dtype)

    def batch_norm(self, data, channels, name, scale=True):
        gamma = self.param(f"{name}_gamma", (channels,))
        beta = self.param(f"{name}_beta", (channels,))
        mean = self.param(f"{name}_moving_mean", (channels,))
        variance = self.param(f"{name}_moving_var", (channels,))
        return nn.batch_norm(data, gamma, beta, mean, variance, epsilon=2e-5, scale=scale)[0]

    def conv2d(self, data, in_channels, channels, kernel_size, strides, padding, name):
        weight = self.param(f"{name}_weight", (channels, in_channels, *kernel_size))
        return nn.conv2d(data, weight, strides=strides, padding=padding, channels=channels, kernel_size=kernel_size)


def _residual_unit(b, data, in_channels, num_filter, stride, dim_match, name, bottle_neck):
    """One pre-activation residual unit (bottleneck 1x1-3x3-1x1, or basic 3x3-3x3) with its shortcut."""
    act1 = nn.relu(b.batch_norm(data, in_channels, f"{name}_bn1"))
    if bottle_neck:
        mid = num_filter // 4
        conv1 = b.conv2d(act1, in_channels, mid, (1, 1), stride, (0, 0), f"{name}_conv1")
        act2 = nn.relu(b.batch_norm(conv1, mid, f"{name}_bn2"))
        conv2 = b.conv2d(act2, mid, mid, (3, 3), (1, 1), (1, 1), f"{name}_conv2")
        act3 = nn.relu(b.batch_norm(conv2, mid, f"{name}_bn3"))
        out = b.conv2d(act3, mid, num_filter, (1, 1), (1, 1), (0, 0), f"{name}_conv3")
    else:
        conv1 = b.conv2d(act1, in_channels, num_filter, (3, 3), stride, (1, 1), f"{name}_conv1")
        act2 = nn.relu(b.batch_norm(conv1, num_filter, f"{name}_bn2"))
        out = b.conv2d(act2, num_filter, num_filter, (3, 3), (1, 1), (1, 1), f"{name}_conv2")
    shortcut = data if dim_match else b.conv2d(act1, in_channels, num_filter, (1, 1), stride, (0, 0), f"{name}_sc")
    return add(out, shortcut)


def _plan(num_layers, height):
    """``(units per stage, filter list, bottleneck)`` for a depth, as TVM's ``get_net`` chooses them."""
    if height <= 28:
        if (num_layers - 2) % 9 == 0 and num_layers >= 164:
            return [(num_layers - 2) // 9] * 3, [16, 64, 128, 256], True
        if (num_layers - 2) % 6 == 0 and num_layers < 164:
            return [(num_layers - 2) // 6] * 3, [16, 16, 32, 64], False
        raise KilnError(f"resnet: no {num_layers}-layer network for small images (use 6n+2 or 9n+2 >= 164 layers)")
    if num_layers not in _UNITS:
        raise KilnError(f"resnet: num_layers must be one of {sorted(_UNITS)}, got {num_layers}")
    if num_layers >= 50:
        return _UNITS[num_layers], [64, 256, 512, 1024, 2048], True
    return _UNITS[num_layers], [64, 64, 128, 256, 512], False


def get_net(batch_size=1, num_classes=1000, num_layers=50, image_shape=(3, 224, 224), dtype="float32") -> Function:
    """The ResNet as a Relay function of ``data`` and every weight.

    Parameters
    ----------
    batch_size, num_classes, num_layers : int
        Batch size, number of output classes, depth (18, 34, 50, 101, 152, 200, 269; 6n+2 for small images).
    image_shape : tuple of int
        ``(channels, height, width)``.
    dtype : str
        Element type of the data and the weights.
    """
    channels, height, _ = image_shape
    units, filters, bottle_neck = _plan(num_layers, height)
    b = _Builder(dtype)
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    body = b.batch_norm(data, channels, "bn_data", scale=False)
    if height <= 32:  # CIFAR-sized input
        body = b.conv2d(body, channels, filters[0], (3, 3), (1, 1), (1, 1), "conv0")
    else:
        body = b.conv2d(body, channels, filters[0], (7, 7), (2, 2), (3, 3), "conv0")
        body = nn.relu(b.batch_norm(body, filters[0], "bn0"))
        body = nn.max_pool2d(body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    in_channels = filters[0]
    for stage, count in enumerate(units):
        stride = (1, 1) if stage == 0 else (2, 2)
        for unit in range(count):
            name = f"stage{stage + 1}_unit{unit + 1}"
            body = _residual_unit(b, body, in_channels, filters[stage + 1], stride if unit == 0 else (1, 1),
                                  unit > 0, name, bottle_neck)
            in_channels = filters[stage + 1]
    body = nn.relu(b.batch_norm(body, in_channels, "bn1"))
    body = nn.batch_flatten(nn.global_avg_pool2d(body))
    fc_weight = b.param("fc1_weight", (num_classes, in_channels))
    fc_bias = b.param("fc1_bias", (num_classes,))
    body = nn.bias_add(nn.dense(body, fc_weight, units=num_classes), fc_bias, axis=-1)
    net = nn.softmax(body)
    from ..analysis import free_vars

    return Function(free_vars(net), net)


def get_workload(batch_size=1, num_classes=1000, num_layers=50, image_shape=(3, 224, 224), dtype="float32",
                 seed=0):
    """A ResNet and its parameters, as TVM's ``relay.testing.resnet.get_workload``.

    Parameters
    ----------
    batch_size, num_classes, num_layers, image_shape, dtype
        See :func:`get_net`.
    seed : int
        Seed of the random parameter values.

    Returns
    -------
    mod : IRModule
        The typed module; ``@main`` takes ``data`` then every weight.
    params : dict of str to NDArray
        A value for every parameter but ``data``.

    Examples
    --------
    >>> mod, params = get_workload(num_layers=18)
    >>> sorted(params)[:2]
    ['bn0_beta', 'bn0_gamma']
    """
    return create_workload(get_net(batch_size, num_classes, num_layers, image_shape, dtype), seed=seed)
