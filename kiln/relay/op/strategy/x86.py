"""The x86 layout alteration of ``nn.conv2d`` (TVM's ``topi/x86/conv2d_alter_op.py`` ``_alter_conv2d_layout``).

Registered as the ``FTVMAlterOpLayout`` of ``nn.conv2d``, so AlterOpLayout (opt_level 3, run by ``relay.build``
under ``PassContext(opt_level=3)``) calls it for every convolution while a CPU target (``llvm`` or ``c``) is current.
For a float32 NCHW/OIHW convolution without groups it returns the same convolution in the blocked layouts
:func:`kiln.topi.x86.conv2d_alter_layout` picks for the target's vector width::

    nn.conv2d(data, weight, data_layout="NCHW{ic_bn}c", kernel_layout="OIHW{ic_bn}i{oc_bn}o", out_layout="NCHW{oc_bn}c")

The layout rewriter then transforms the inputs (a weight ``layout_transform`` of a constant, which the FoldConstant
after AlterOpLayout folds: the weights are packed once, at compile time) and carries the blocked result through the
layout-agnostic operators that follow (bias adds, batch-norm arithmetic, relu, pooling, residual adds,
concatenation), so consecutive convolutions exchange blocked tensors and layouts change only at the boundaries of
the blocked region. topi computes such a call with ``conv2d_NCHWc`` directly, without packing at run time.

Why here: the decision (block sizes) is topi's and needs no Relay; building the replacement call needs Relay, which
topi may not import. This module joins the two, as TVM's generic ``conv2d_alter_layout`` does per target.
"""

from ....ir.op import register_op_attr
from ....target.target import Target
from ....topi.x86 import conv2d_alter_layout
from .. import nn as _nn

__all__ = ["alter_conv2d_layout", "CPU_TARGET_KINDS", "BLOCKED_DTYPES"]

CPU_TARGET_KINDS = ("llvm", "c")
"""Target kinds whose conv2d is altered to the blocked layouts."""

BLOCKED_DTYPES = ("float32",)
"""Data/weight dtypes the blocked x86 convolution is used for (others keep their layout, as in TVM's float path)."""


def alter_conv2d_layout(attrs, inputs, tinfos, out_type):
    """``FTVMAlterOpLayout`` of ``nn.conv2d`` for CPU targets (see the module docstring).

    Parameters
    ----------
    attrs : Conv2DAttrs
        The call's attributes.
    inputs : list of relay.Expr
        ``[data, weight]`` in their original layouts.
    tinfos : list of TensorType
        Their types.
    out_type : TensorType
        The call's type.

    Returns
    -------
    new : relay.Call or None
        The blocked convolution, or None to keep the call (no CPU target is current, another dtype, groups, or a
        layout other than NCHW/OIHW).
    """
    target = Target.current()
    if target is None or target.kind.name not in CPU_TARGET_KINDS:
        return None
    data_type, weight_type = tinfos
    out_dtype = attrs.out_dtype or out_type.dtype
    if data_type.dtype not in BLOCKED_DTYPES or weight_type.dtype != data_type.dtype or out_dtype != data_type.dtype:
        return None
    new = conv2d_alter_layout(attrs, data_type.shape, weight_type.shape, target)
    if new is None:
        return None
    data, weight = inputs
    return _nn.conv2d(data, weight, **dict(attrs, **new))


register_op_attr("nn.conv2d", "FTVMAlterOpLayout", alter_conv2d_layout)
