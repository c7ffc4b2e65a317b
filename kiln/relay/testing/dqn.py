"""The Nature DQN network (Mnih et al., "Human-level control through deep reinforcement learning", 2015), as
TVM's ``relay.testing.dqn`` builds it: three convolutions with bias and ReLU (8x8/4, 4x4/2, 3x3/1), a 512-unit
dense layer with ReLU and a dense layer of ``num_actions`` units. Parameters as in TVM (``conv1_weight``,
``conv1_bias``, ``dense1_weight``...).
"""

from .. import op as _op
from ..analysis import free_vars
from ..expr import var
from ..function import Function
from . import layers
from .init import create_workload

_CONVS = [("conv1", 32, 8, 4), ("conv2", 64, 4, 2), ("conv3", 64, 3, 1)]  # name, channels, kernel, stride


def get_net(batch_size, num_actions=18, image_shape=(4, 84, 84), dtype="float32", layout="NCHW") -> Function:
    """The DQN as a Relay function of ``data`` (``image_shape`` in ``layout``) and every weight."""
    body = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    axis = layout.index("C")
    for name, channels, kernel, stride in _CONVS:
        body = layers.conv2d(body, kernel_size=(kernel, kernel), strides=(stride, stride), padding=(0, 0),
                             channels=channels, name=name, data_layout=layout,
                             kernel_layout=layers.conv_kernel_layout(layout))
        body = _op.nn.relu(layers.bias_add(body, f"{name}_bias", axis=axis))
    body = _op.nn.relu(layers.dense_add_bias(_op.nn.batch_flatten(body), units=512, name="dense1"))
    out = layers.dense_add_bias(body, units=num_actions, name="dense2")
    return Function(free_vars(out), out)


def get_workload(batch_size, num_actions=18, image_shape=(4, 84, 84), dtype="float32", layout="NCHW"):
    """The DQN and its parameters (TVM's ``dqn.get_workload``)."""
    return create_workload(get_net(batch_size, num_actions, image_shape, dtype, layout))
