"""FlattenAtrousConv: ``batch_to_space_nd(conv2d(space_to_batch_nd(x)))`` becomes one dilated ``conv2d`` (TVM's pass;
``qnn.conv2d`` likewise).

TensorFlow exports a dilated ("atrous") convolution as this sandwich: the input is split into ``block x block``
phases, each phase convolved without dilation, and the phases merged back. With zero padding values, a unit-stride
undilated NHWC convolution without padding in the middle, and ``paddings`` (before ``p0``, after ``p1``) and
``crops`` (``c0``, ``c1``) per spatial axis, output element ``i`` reads the input at ``i + c0 - p0 + j * block``: the
convolution with ``dilation = block`` and padding ``(p0 - c0, p1 - c1)``, which must not be negative. TVM derives
the padding from the input size assuming TensorFlow's SAME scheme; kiln derives it from the pattern itself, so
every instance is rewritten exactly or left alone.
"""

import dataclasses
from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from ..expr import Call, Constant
from .function_pass import FunctionPass
from .rewrite import RuleTable, rewrite
from .simplify_expr import _is_op

RULES = RuleTable()


def _dilated_padding(s2b, conv, b2s):
    """The equivalent convolution's (top, left, bottom, right) padding, or None when the pattern does not fit."""
    attrs = conv.attrs
    block = tuple(int(b) for b in b2s.attrs.block_shape)
    if (len(block) != 2 or block != tuple(int(b) for b in s2b.attrs.block_shape) or float(s2b.attrs.pad_value) != 0
            or attrs.data_layout != "NHWC" or tuple(attrs.strides) != (1, 1) or tuple(attrs.dilation) != (1, 1)
            or any(int(p) != 0 for p in attrs.padding)):
        return None
    (p0h, p1h), (p0w, p1w) = ((int(a), int(b)) for a, b in s2b.attrs.paddings)
    (c0h, c1h), (c0w, c1w) = ((int(a), int(b)) for a, b in b2s.attrs.crops)
    padding = (p0h - c0h, p0w - c0w, p1h - c1h, p1w - c1w)
    return padding if min(padding) >= 0 else None


def _pads_with_zero_point(s2b, qconv) -> bool:
    """Whether a quantized convolution's own padding (its input zero point) is what space_to_batch_nd padded with:
    TVM does not check, and folds a zero padding into a convolution padding with a non-zero zero point."""
    zero_point = qconv.args[2]
    return isinstance(zero_point, Constant) and zero_point.data.numpy().size == 1 \
        and float(zero_point.data.numpy().reshape(())) == float(s2b.attrs.pad_value)


@RULES.register("nn.batch_to_space_nd")
def flatten_atrous_conv(call):
    """batch_to_space_nd(conv2d(space_to_batch_nd(x), w)) -> conv2d(x, w, dilation=block); qnn.conv2d likewise."""
    conv = call.args[0]
    if not _is_op(conv, "nn.conv2d", "qnn.conv2d") or not _is_op(conv.args[0], "nn.space_to_batch_nd"):
        return None
    s2b = conv.args[0]
    padding = _dilated_padding(s2b, conv, call)
    if padding is None or (conv.op.name == "qnn.conv2d" and not _pads_with_zero_point(s2b, conv)):
        return None
    attrs = dataclasses.replace(conv.attrs, strides=(1, 1), padding=padding,
                                dilation=tuple(int(b) for b in call.attrs.block_shape))
    return Call(conv.op, (s2b.args[0], *conv.args[1:]), attrs, span=call.span)


@register_pass("FlattenAtrousConv")
@dataclass(frozen=True)
class FlattenAtrousConv(FunctionPass):
    """Replace TensorFlow's space-to-batch form of a dilated convolution by the dilated convolution."""

    info = PassInfo(0, "FlattenAtrousConv", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return rewrite(func, RULES, mod=mod)
