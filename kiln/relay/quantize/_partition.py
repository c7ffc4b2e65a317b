"""Partition: the step before annotation (TVM's ``relay.quantize._partition`` and ``QuantizePartition``).

It marks where the quantized regions of the graph end, so they become separate kernels: a value leaving a region
(a convolution and what follows it, kept as a :class:`QPartitionExpr`) gets ``annotation.cast_hint`` to
``dtype_input`` and ``annotation.stop_fusion``. Annotation reads the cast hints as INPUT boundaries; realization
turns them into casts.
"""

from ...ir.op import register_op_attr
from ..expr import Call
from ..op.annotation import cast_hint, stop_fusion
from ..transform.function_pass import function_pass
from ._annotate import _is_constant
from .config import current_qconfig
from .forward_rewrite import TempExpr, forward_rewrite

__all__ = ["QPartitionExpr", "register_partition_function", "QuantizePartition"]

ATTR = "FQPartitionRewrite"


class QPartitionExpr(TempExpr):
    """A value inside a quantized region; leaving it, it is cast-hinted and stops fusion."""

    def __init__(self, expr):
        self.expr = expr

    def realize(self):
        return stop_fusion(cast_hint(self.expr, current_qconfig().dtype_input))


def register_partition_function(op_name, frewrite=None, level=10):
    """Register ``frewrite(ref_call, new_args, ctx)`` as the partition rule of ``op_name`` (usable as a
    decorator)."""
    def register(func):
        register_op_attr(op_name, ATTR, func, level)
        return func
    return register(frewrite) if frewrite is not None else register


def _check(expr):
    return (True, expr.expr) if isinstance(expr, QPartitionExpr) else (False, expr)


def _forward(ref_call, args):
    return Call(ref_call.op, tuple(args), ref_call.attrs, span=ref_call.span)


@register_partition_function("nn.conv2d")
def conv2d_partition(ref_call, new_args, ctx):
    """A convolution starts a region (its data, if it comes from another region, leaves that one first)."""
    data_in, data = _check(new_args[0])
    _, kernel = _check(new_args[1])
    if data_in:
        data = new_args[0].realize()
    return QPartitionExpr(_forward(ref_call, [data, kernel]))


def identity_partition(ref_call, new_args, ctx):
    inside, expr = _check(new_args[0])
    return QPartitionExpr(_forward(ref_call, [expr])) if inside else None


for _name in ("clip", "nn.relu", "nn.max_pool2d"):
    register_partition_function(_name, identity_partition)


@register_partition_function("add")
def add_partition(ref_call, new_args, ctx):
    """Two regions merge into a new one; a region plus a constant stays in it; otherwise the region ends."""
    (lhs_in, lhs), (rhs_in, rhs) = map(_check, new_args)
    if lhs_in and rhs_in:
        return QPartitionExpr(_forward(ref_call, [new_args[0].realize(), new_args[1].realize()]))
    if rhs_in:
        return _forward(ref_call, [lhs, new_args[1].realize()])
    if lhs_in:
        if _is_constant(rhs):
            return QPartitionExpr(_forward(ref_call, [lhs, rhs]))
        return _forward(ref_call, [new_args[0].realize(), rhs])
    return None


@register_partition_function("multiply")
def multiply_partition(ref_call, new_args, ctx):
    """A product with a region's value starts a new region."""
    (lhs_in, lhs), (rhs_in, rhs) = map(_check, new_args)
    if lhs_in:
        return QPartitionExpr(_forward(ref_call, [new_args[0].realize(), rhs]))
    if rhs_in:
        return QPartitionExpr(_forward(ref_call, [lhs, new_args[1].realize()]))
    return None


@register_partition_function("nn.global_avg_pool2d")
def global_avg_pool2d_partition(ref_call, new_args, ctx):
    """The pooling reads its input as it leaves a region."""
    inside, expr = _check(new_args[0])
    expr = new_args[0].realize() if inside else QPartitionExpr(new_args[0]).realize()
    return _forward(ref_call, [expr])


@function_pass(opt_level=1, name="QuantizePartition")
def QuantizePartition(func, mod, ctx):  # noqa: N802  (TVM's pass name)
    """Mark the ends of the quantized regions of each function (see the module docstring)."""
    return forward_rewrite(func, ATTR)
