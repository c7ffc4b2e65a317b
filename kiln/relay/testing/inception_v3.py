"""Inception V3 (Szegedy et al., "Rethinking the Inception Architecture for Computer Vision", 2015), as TVM's
``relay.testing.inception_v3`` builds it for 299x299 images.

Every convolution is conv + batch norm (no scale) + ReLU. The network is a stem of five convolutions and two max
pools, then eleven inception blocks of five kinds (A three times, B, C four times, D, E twice), an 8x8 average pool,
a dense layer and softmax. A block is a list of branches whose results are concatenated along the channels; a
branch is a chain of convolutions, or a pooling optionally followed by a projection. Parameters are named as in
TVM (``mixed_tower_conv_1_conv1_weight``, ``mixed_tower_conv_1_bn_gamma``, ``fc1_weight``, ``fc2_bias``...).
"""

from .. import op as _op
from ..analysis import free_vars
from ..expr import var
from ..function import Function
from . import layers
from .init import create_workload


def _conv(data, num_filter, kernel=(1, 1), stride=(1, 1), pad=(0, 0), name="", suffix=""):
    conv = layers.conv2d(data, channels=int(num_filter), kernel_size=kernel, strides=stride, padding=pad,
                         name=f"{name}{suffix}_conv1")
    norm = layers.batch_norm_infer(conv, epsilon=2e-5, scale=False, name=f"{name}{suffix}_bn")
    return _op.nn.relu(norm)


def _pool(data, kernel, stride, pad, pool_type):
    if pool_type == "max":
        return _op.nn.max_pool2d(data, pool_size=kernel, strides=stride, padding=pad)
    return _op.nn.avg_pool2d(data, pool_size=kernel, strides=stride, padding=pad, count_include_pad=True)


def _chain(data, name, steps):
    """Convolutions one after another; a step is ``(filters, kernel, stride, pad, suffix)``."""
    for filters, kernel, stride, pad, suffix in steps:
        data = _conv(data, filters, kernel, stride, pad, name=name, suffix=suffix)
    return data


def _unit(filters, suffix="_conv"):
    return (filters, (1, 1), (1, 1), (0, 0), suffix)


def _pool_proj(data, pool, proj, name, stride=(1, 1), pad=(1, 1)):
    pooled = _pool(data, (3, 3), stride, pad, pool)
    return pooled if proj is None else _conv(pooled, proj, name=f"{name}_tower_2", suffix="_conv")


def _block_a(data, n1x1, n3x3_red, n3x3_1, n3x3_2, n5x5_red, n5x5, pool, proj, name):
    return _op.concatenate((
        _chain(data, f"{name}_conv", [_unit(n1x1, "")]),
        _chain(data, f"{name}_tower", [_unit(n5x5_red), (n5x5, (5, 5), (1, 1), (2, 2), "_conv_1")]),
        _chain(data, f"{name}_tower_1", [_unit(n3x3_red), (n3x3_1, (3, 3), (1, 1), (1, 1), "_conv_1"),
                                         (n3x3_2, (3, 3), (1, 1), (1, 1), "_conv_2")]),
        _pool_proj(data, pool, proj, name),
    ), axis=1)


def _block_b(data, n3x3, nd3x3_red, nd3x3_1, nd3x3_2, pool, name):
    """The first downsampling block (stride 2 in every branch)."""
    return _op.concatenate((
        _chain(data, f"{name}_conv", [(n3x3, (3, 3), (2, 2), (0, 0), "")]),
        _chain(data, f"{name}_tower", [_unit(nd3x3_red), (nd3x3_1, (3, 3), (1, 1), (1, 1), "_conv_1"),
                                       (nd3x3_2, (3, 3), (2, 2), (0, 0), "_conv_2")]),
        _pool(data, (3, 3), (2, 2), (0, 0), "max"),
    ), axis=1)


def _row(filters, suffix):
    return (filters, (1, 7), (1, 1), (0, 3), suffix)


def _col(filters, suffix):
    return (filters, (7, 1), (1, 1), (3, 0), suffix)


def _block_c(data, n1x1, nd7_red, nd7_1, nd7_2, nq7_red, nq7_1, nq7_2, nq7_3, nq7_4, pool, proj, name):
    """Factorized 7x7 convolutions: 1x7 then 7x1, and twice that."""
    return _op.concatenate((
        _chain(data, f"{name}_conv", [_unit(n1x1, "")]),
        _chain(data, f"{name}_tower", [_unit(nd7_red), _row(nd7_1, "_conv_1"), _col(nd7_2, "_conv_2")]),
        _chain(data, f"{name}_tower_1", [_unit(nq7_red), _col(nq7_1, "_conv_1"), _row(nq7_2, "_conv_2"),
                                         _col(nq7_3, "_conv_3"), _row(nq7_4, "_conv_4")]),
        _pool_proj(data, pool, proj, name),
    ), axis=1)


def _block_d(data, n3x3_red, n3x3, nd7_3x3_red, nd7_1, nd7_2, nd7_3x3, pool, name):
    """The second downsampling block."""
    return _op.concatenate((
        _chain(data, f"{name}_tower", [_unit(n3x3_red), (n3x3, (3, 3), (2, 2), (0, 0), "_conv_1")]),
        _chain(data, f"{name}_tower_1", [_unit(nd7_3x3_red), _row(nd7_1, "_conv_1"), _col(nd7_2, "_conv_2"),
                                         (nd7_3x3, (3, 3), (2, 2), (0, 0), "_conv_3")]),
        _pool(data, (3, 3), (2, 2), (0, 0), pool),
    ), axis=1)


def _split_1x3_3x1(data, name, n_a, n_b):
    """The two parallel 1x3 and 3x1 convolutions an E block ends its towers with."""
    return (_conv(data, n_a, (1, 3), pad=(0, 1), name=name, suffix="_mixed_conv"),
            _conv(data, n_b, (3, 1), pad=(1, 0), name=name, suffix="_mixed_conv_1"))


def _block_e(data, n1x1, nd3_red, nd3_1, nd3_2, n3x3_d3_red, n3x3, n3x3_d3_1, n3x3_d3_2, pool, proj, name):
    tower_d3 = _chain(data, f"{name}_tower", [_unit(nd3_red)])
    tower_3x3 = _chain(data, f"{name}_tower_1", [_unit(n3x3_d3_red), (n3x3, (3, 3), (1, 1), (1, 1), "_conv_1")])
    return _op.concatenate((
        _chain(data, f"{name}_conv", [_unit(n1x1, "")]),
        *_split_1x3_3x1(tower_d3, f"{name}_tower", nd3_1, nd3_2),
        *_split_1x3_3x1(tower_3x3, f"{name}_tower_1", n3x3_d3_1, n3x3_d3_2),
        _pool_proj(data, pool, proj, name),
    ), axis=1)


def get_net(batch_size, num_classes, image_shape, dtype) -> Function:
    """Inception V3 as a Relay function of ``data`` (``(batch_size, *image_shape)``) and every weight."""
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    body = _conv(data, 32, (3, 3), (2, 2), name="conv")
    body = _conv(body, 32, (3, 3), name="conv_1")
    body = _conv(body, 64, (3, 3), pad=(1, 1), name="conv_2")
    body = _pool(body, (3, 3), (2, 2), (0, 0), "max")
    body = _conv(body, 80, name="conv_3")
    body = _conv(body, 192, (3, 3), name="conv_4")
    body = _pool(body, (3, 3), (2, 2), (0, 0), "max")
    body = _block_a(body, 64, 64, 96, 96, 48, 64, "avg", 32, "mixed")
    body = _block_a(body, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_1")
    body = _block_a(body, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_2")
    body = _block_b(body, 384, 64, 96, 96, "max", "mixed_3")
    for name, width in (("mixed_4", 128), ("mixed_5", 160), ("mixed_6", 160), ("mixed_7", 192)):
        body = _block_c(body, 192, width, width, 192, width, width, width, width, 192, "avg", 192, name)
    body = _block_d(body, 192, 320, 192, 192, 192, 192, "max", "mixed_8")
    body = _block_e(body, 320, 384, 384, 384, 448, 384, 384, 384, "avg", 192, "mixed_9")
    body = _block_e(body, 320, 384, 384, 384, 448, 384, 384, 384, "max", 192, "mixed_10")
    body = _pool(body, (8, 8), (1, 1), (0, 0), "avg")
    flat = _op.nn.batch_flatten(body)
    width = layers.type_of(flat).shape[1]
    fc1 = _op.nn.dense(flat, var("fc1_weight", shape=(num_classes, width), dtype=dtype), units=num_classes)
    fc1 = _op.nn.bias_add(fc1, var("fc2_bias", shape=(num_classes,), dtype=dtype), axis=-1)
    out = _op.nn.softmax(fc1)
    return Function(free_vars(out), out)


def get_workload(batch_size=1, num_classes=1000, image_shape=(3, 299, 299), dtype="float32"):
    """Inception V3 and its parameters (TVM's ``inception_v3.get_workload``).

    Returns
    -------
    mod : IRModule
        The typed module.
    params : dict of str to NDArray
        A value for every parameter but ``data``.
    """
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype))
