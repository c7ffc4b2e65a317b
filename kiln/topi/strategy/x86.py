"""x86 strategies (TVM's ``relay/op/strategy/x86.py``): which compute and schedule each call gets on a CPU.

Every operator gets its generic compute (:data:`kiln.topi.strategy.compute.COMPUTES`) with the tag-dispatched
x86 schedule (:func:`kiln.topi.x86.schedule_auto`) at plevel 10. Operators with faster forms add them at a higher
plevel when the call fits:

* ``nn.conv2d``: NCHW/OIHW without groups -> the packed NCHW[x]c convolution (plevel 15); the packed layouts
  themselves -> ``conv2d_NCHWc`` (plevel 15); every other layout uses the direct computes and their schedule;
* ``nn.dense`` and ``nn.matmul`` with ``transpose_b`` (a weight ``(N, K)``) on 2-D data -> ``dense_nopack`` for at
  most :data:`NOPACK_MAX_ROWS` rows, else ``dense_pack``; ``nn.matmul`` with a ``(K, N)`` operand ->
  ``matmul_tile``;
* ``nn.batch_matmul`` -> ``batch_matmul_pack``.
"""

from .. import nn, x86
from ..utils import get_const_tuple, vector_lanes
from ..x86.injective import vector_factor
from .base import OpStrategy
from .compute import COMPUTES

__all__ = ["STRATEGIES", "default_strategy", "fschedule_auto", "NOPACK_MAX_ROWS"]

NOPACK_MAX_ROWS = 16
"""Dense products with at most this many rows skip packing the weight (repacking would dominate)."""


def fschedule_auto(attrs, outs, target):
    """``FTVMSchedule`` of every operator: the x86 schedule of the group's anchor tag."""
    return x86.schedule_auto(outs, target)


def default_strategy(name):
    """The strategy with only the generic compute of operator ``name`` and the tag-dispatched schedule."""
    fcompute = COMPUTES[name]

    def fstrategy(attrs, inputs, out_type, target):
        return OpStrategy().add_implementation(fcompute, fschedule_auto, f"{name}.generic", 10)

    return fstrategy


def _out_dtype(attrs, out_type):
    return getattr(attrs, "out_dtype", "") or out_type.dtype


def _conv2d_strategy(attrs, inputs, out_type, target):
    strategy = default_strategy("nn.conv2d")(attrs, inputs, out_type, target)
    data_layout, kernel_layout = attrs.data_layout, attrs.kernel_layout
    out_layout = attrs.out_layout or data_layout
    if attrs.groups == 1 and (data_layout, kernel_layout, out_layout) == ("NCHW", "OIHW", "NCHW"):
        def fcompute(attrs, inputs, out_type):
            return [x86.conv2d_nchw(inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.dilation,
                                    _out_dtype(attrs, out_type), target)]

        strategy.add_implementation(fcompute, fschedule_auto, "conv2d_nchw.x86", 15)
    return strategy


def _dense_like(data, weight, out_dtype, target):
    """The x86 dense compute for 2-D ``data`` and a ``(N, K)`` weight, or None when the generic one is better."""
    rows = get_const_tuple(data.shape)[0]
    k = get_const_tuple(weight.shape)[1]
    if rows <= NOPACK_MAX_ROWS and vector_factor(k, vector_lanes(target, out_dtype)) >= 4:
        return x86.dense_nopack(data, weight, out_dtype, target)
    if vector_factor(get_const_tuple(weight.shape)[0], vector_lanes(target, out_dtype)) >= 4:
        return x86.dense_pack(data, weight, out_dtype, target)
    return None


def _dense_strategy(attrs, inputs, out_type, target):
    strategy = default_strategy("nn.dense")(attrs, inputs, out_type, target)
    if len(inputs[0].shape) == 2:
        def fcompute(attrs, inputs, out_type):
            out = _dense_like(inputs[0], inputs[1], _out_dtype(attrs, out_type), target)
            return [out] if out is not None else COMPUTES["nn.dense"](attrs, inputs, out_type)

        strategy.add_implementation(fcompute, fschedule_auto, "dense.x86", 15)
    return strategy


def _matmul_strategy(attrs, inputs, out_type, target):
    strategy = default_strategy("nn.matmul")(attrs, inputs, out_type, target)
    if len(inputs[0].shape) != 2:
        return strategy

    def fcompute(attrs, inputs, out_type):
        a, b = inputs[0], inputs[1]
        dtype = _out_dtype(attrs, out_type)
        if not attrs.transpose_b:
            return [x86.matmul_tile(a, b, attrs.transpose_a, dtype)]
        if not attrs.transpose_a:
            out = _dense_like(a, b, dtype, target)
            if out is not None:
                return [out]
        return [nn.matmul(a, b, None, dtype, attrs.transpose_a, attrs.transpose_b)]

    return strategy.add_implementation(fcompute, fschedule_auto, "matmul.x86", 15)


def _batch_matmul_strategy(attrs, inputs, out_type, target):
    strategy = default_strategy("nn.batch_matmul")(attrs, inputs, out_type, target)

    def fcompute(attrs, inputs, out_type):
        return [x86.batch_matmul_pack(inputs[0], inputs[1], attrs.transpose_a, attrs.transpose_b,
                                      _out_dtype(attrs, out_type), target)]

    return strategy.add_implementation(fcompute, fschedule_auto, "batch_matmul.x86", 15)


STRATEGIES = {
    **{name: default_strategy(name) for name in COMPUTES},
    "nn.conv2d": _conv2d_strategy,
    "nn.dense": _dense_strategy,
    "nn.matmul": _matmul_strategy,
    "nn.batch_matmul": _batch_matmul_strategy,
}
"""Relay operator name -> ``FTVMStrategy``."""
