"""A multi-layer perceptron (TVM's ``relay.testing.mlp``): flatten, then 128, 64 and ``num_classes`` units with
ReLU between them, then softmax."""

import math

from .. import op as _op
from ..analysis import free_vars
from ..expr import var
from ..function import Function
from .init import create_workload


def get_net(batch_size, num_classes=10, image_shape=(1, 28, 28), dtype="float32") -> Function:
    """The MLP as a Relay function of ``data`` and its weights (``fc{1,2,3}_weight``, ``fc{1,2,3}_bias``)."""
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    body = _op.nn.batch_flatten(data)
    width = math.prod(image_shape)
    for k, units in enumerate((128, 64, num_classes), start=1):
        weight = var(f"fc{k}_weight", shape=(units, width), dtype=dtype)
        bias = var(f"fc{k}_bias", shape=(units,), dtype=dtype)
        body = _op.nn.bias_add(_op.nn.dense(body, weight, units=units), bias, axis=-1)
        if k < 3:
            body = _op.nn.relu(body)
        width = units
    body = _op.nn.softmax(body)
    return Function(free_vars(body), body)


def get_workload(batch_size, num_classes=10, image_shape=(1, 28, 28), dtype="float32", seed=0):
    """``(mod, params)`` of the MLP (see :func:`kiln.relay.testing.init.create_workload`)."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype), seed=seed)
