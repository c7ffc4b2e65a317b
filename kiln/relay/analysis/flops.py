"""Floating-point operations of the convolutions and matrix products in an expression (for GFLOP/s in profiles).

Each of these operators computes every output element as a sum of ``K`` products, so it costs ``2 * K`` operations
per output element (a multiply and an add), as TVM and the usual GFLOP/s figures count them:

* ``nn.conv2d``: ``K = in_channels / groups * kernel_h * kernel_w``, the weight's size over its output channels,
  whatever the kernel layout (``OIHW``, ``HWIO`` or a blocked ``OIHW16i16o``: every ``O``/``o`` axis is an output
  channel axis);
* ``nn.dense``: ``K`` is the weight's second axis; ``nn.matmul`` and ``nn.batch_matmul``: the reduced axis of the
  first operand.

Other operators (element-wise, pooling, softmax ...) are not counted: their cost is memory traffic, not arithmetic,
and a GFLOP/s figure for them would mislead.
"""

import math
import re

from ...error import TypeInferenceError
from ..expr import Call
from ..expr_functor import post_order_visit

__all__ = ["estimate_flops", "get_total_mac_number", "FLOP_COUNTERS"]


def _shape(expr) -> tuple:
    return tuple(int(d) for d in expr.checked_type.shape)


def _output_channels(weight_shape, kernel_layout) -> int:
    axes = re.findall(r"\d*[A-Za-z]", kernel_layout)
    if len(axes) != len(weight_shape):
        raise ValueError(f"kernel layout {kernel_layout!r} does not match the weight shape {weight_shape}")
    return math.prod(d for d, axis in zip(weight_shape, axes, strict=True) if axis[-1] in "Oo")


def conv2d_flops(call) -> int:
    """``2 * output elements * in_channels / groups * kernel_h * kernel_w``."""
    weight = _shape(call.args[1])
    per_output = math.prod(weight) // _output_channels(weight, call.attrs.kernel_layout)
    return 2 * math.prod(_shape(call)) * per_output


def conv2d_transpose_flops(call) -> int:
    """``2 * output elements * in_channels / groups * kernel_h * kernel_w``: each output element gathers every
    input channel of its group through the kernel window (weight ``(in_channels, out_channels / groups, kh, kw)``)."""
    weight = _shape(call.args[1])
    in_channels = _shape(call.args[0])[call.attrs.data_layout.index("C")]
    return 2 * math.prod(_shape(call)) * (in_channels // call.attrs.groups) * math.prod(weight[2:])


def dense_flops(call) -> int:
    """``2 * output elements * K`` with ``weight`` (units, K)."""
    return 2 * math.prod(_shape(call)) * _shape(call.args[1])[1]


def matmul_flops(call) -> int:
    """``2 * output elements * K``, ``K`` the reduced axis of ``tensor_a``."""
    a = _shape(call.args[0])
    return 2 * math.prod(_shape(call)) * (a[-2] if call.attrs.transpose_a else a[-1])


def batch_matmul_flops(call) -> int:
    """``2 * output elements * K``, ``K`` the reduced axis of ``x``."""
    x = _shape(call.args[0])
    return 2 * math.prod(_shape(call)) * (x[1] if call.attrs.transpose_a else x[2])


FLOP_COUNTERS = {
    "nn.conv2d": conv2d_flops,
    "nn.contrib_conv2d_NCHWc": conv2d_flops,  # AlterOpLayout's blocked forms of conv2d
    "nn.contrib_depthwise_conv2d_NCHWc": conv2d_flops,
    "nn.conv2d_transpose": conv2d_transpose_flops,
    "nn.dense": dense_flops,
    "nn.contrib_dense_pack": dense_flops,  # the packed weight (N / b, K, b) keeps K second
    "nn.matmul": matmul_flops,
    "nn.batch_matmul": batch_matmul_flops,
}
"""Operator name -> function of the typed call giving its floating-point operations."""


def estimate_flops(expr):
    """The floating-point operations of the operators of :data:`FLOP_COUNTERS` in ``expr`` (see the module
    docstring).

    Parameters
    ----------
    expr : relay.Expr
        A typed expression, typically a fused primitive function.

    Returns
    -------
    flops : int or None
        The sum over its convolutions and matrix products, None when it has none or when a counted operator has a
        dimension known only at run time.

    Examples
    --------
    >>> x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 3, 3, 3))
    >>> estimate_flops(infer_type(relay.Function([x, w], relay.nn.conv2d(x, w))))
    7776
    """
    counted = _counted_flops(expr)
    return sum(counted) if counted and None not in counted else None


def _counted_flops(expr) -> list:
    """The flops of each counted operator in ``expr``, None for one with a dimension known only at run time."""
    counted = []

    def visit(node):
        if isinstance(node, Call):
            counter = FLOP_COUNTERS.get(getattr(node.op, "name", None))
            if counter is not None:
                try:
                    counted.append(counter(node))
                except TypeInferenceError:  # a dynamic dimension: the count is known only at run time
                    counted.append(None)

    post_order_visit(expr, visit)
    return counted


def get_total_mac_number(expr) -> int:
    """Multiply-accumulates of the convolutions and matrix products in a typed ``expr`` (TVM's
    ``relay.analysis.get_total_mac_number``): half of :func:`estimate_flops`, 0 when there are none."""
    counted = _counted_flops(expr)
    if None in counted:
        raise TypeInferenceError("get_total_mac_number: a convolution or matrix product has a dimension known only "
                                 "at run time")
    return sum(counted) // 2
