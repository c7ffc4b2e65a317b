"""A small synthetic network for tests (TVM's ``relay.testing.synthetic``): two rounds of a dense branch
(reshape, dense, ReLU, reshape back) added to a convolution branch (3x3 convolution, softmax), with a bias and an
inference batch norm between the rounds. Its weights are constants (``init.Constant``), so results are
reproducible.
"""

from .. import op as _op
from ..analysis import free_vars
from ..expr import var
from ..function import Function
from . import layers
from .init import Constant, create_workload


def _round(data, source, input_shape, wtype, dense_name, conv_name):
    dense_shape = (-1, input_shape[3])
    dense_weight = var(dense_name, shape=(input_shape[3], input_shape[3]), dtype=wtype)
    dense = _op.nn.relu(_op.nn.dense(_op.reshape(source, dense_shape), dense_weight))
    dense = _op.reshape_like(dense, data)
    conv_weight = var(conv_name, shape=(input_shape[1], input_shape[1], 3, 3), dtype=wtype)
    conv = _op.nn.softmax(_op.nn.conv2d(source, conv_weight, padding=1, kernel_size=3))
    return _op.add(dense, conv)


def get_net(input_shape=(1, 3, 24, 12), dtype="float32", wtype=None) -> Function:
    """The network for ``data`` of ``input_shape`` (NCHW); weights of ``wtype`` (``dtype`` by default)."""
    wtype = wtype or dtype
    data = var("data", shape=tuple(input_shape), dtype=dtype)
    added = _round(data, data, input_shape, wtype, "dense_weight", "conv_weight")
    biased = _op.nn.bias_add(added, var("bias", shape=(input_shape[1],), dtype=wtype))
    biased = layers.batch_norm_infer(biased, name="batch_norm")
    out = _round(data, biased, input_shape, wtype, "dense2_weight", "conv2_weight")
    return Function(free_vars(out), out)


def get_workload(input_shape=(1, 3, 24, 12), dtype="float32", wtype=None):
    """The synthetic network and its (constant) parameters (TVM's ``synthetic.get_workload``)."""
    return create_workload(get_net(input_shape=input_shape, dtype=dtype, wtype=wtype), initializer=Constant())
