"""Layout rules and layout conversion of the quantized operators (TVM's ``src/relay/qnn/op/*.cc`` and
``python/tvm/relay/qnn/op/layout_conversions.py``).

A quantized operator lays out its tensors as its float counterpart does; its scales and zero points are scalars or
per-channel vectors, laid out as ``C``. ``qnn.requantize`` moves its channel ``axis`` into its input's new layout;
``qnn.concatenate`` joins along its axis in the new layout as ``concatenate`` does. ConvertLayout converts
``qnn.conv2d`` as ``nn.conv2d``: ``"default"`` picks OIHW for NCHW data, HWIO for NHWC (HWOI when depthwise);
``qnn.conv2d_transpose`` as ``nn.conv2d_transpose`` (IOHW, HWIO).
"""

from ...error import KilnError
from ...tir.layout import layout as parse_layout
from ..op.op import register_convert_op_layout
from ..qnn.op import qnn as _qnn
from .fold_scale_util import is_depthwise_conv2d
from .infer_layout_utils import InferCorrectLayoutOutput, binary_broadcast_layout
from .layout_rules import concatenate_layout, register_rule
from .layout_rules_nn import _moved_axes, conv_layout

_C = parse_layout("C")


@register_rule("qnn.conv2d", "qnn.conv2d_transpose")
def qnn_conv2d_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """As conv2d for the data and kernel; the two zero points and scales per channel."""
    out = conv_layout(attrs, new_in_layouts, old_in_layouts, old_in_types)
    return InferCorrectLayoutOutput([*out.input_layouts, _C, _C, _C, _C], out.output_layouts, attrs)


@register_rule("qnn.requantize")
def qnn_requantize_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Element-wise in the input's new layout, with the quantization axis moved into it."""
    if old_in_layouts is None or old_in_layouts[0] is None:
        return InferCorrectLayoutOutput([None] * 5, [None], attrs)
    ret, attrs = _moved_axes(attrs, new_in_layouts, old_in_layouts, old_in_types, ("axis",))
    return InferCorrectLayoutOutput([ret, _C, _C, _C, _C], [ret], attrs)


@register_rule("qnn.add", "qnn.mul")
def qnn_binary_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """As the broadcasting binary operators for the two operands; the six scales and zero points per channel."""
    two = lambda layouts: None if layouts is None else layouts[:2]  # noqa: E731
    out = binary_broadcast_layout(attrs, two(new_in_layouts), two(old_in_layouts), old_in_types[:2])
    return InferCorrectLayoutOutput([*out.input_layouts, _C, _C, _C, _C, _C, _C], out.output_layouts, attrs)


@register_rule("qnn.concatenate")
def qnn_concatenate_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """As concatenate for the tensors of the data tuple; their scales and zero points, and the output's, per
    channel."""
    n = len(old_in_types[0].fields)
    data = lambda layouts: None if layouts is None else layouts[:n]  # noqa: E731
    out = concatenate_layout(attrs, data(new_in_layouts), data(old_in_layouts), old_in_types[:1])
    tensors = list(out.input_layouts) + [None] * (n - len(out.input_layouts))
    params = [_C if out.output_layouts[0] is not None else None] * (2 * n + 2)
    return InferCorrectLayoutOutput([*tensors, *params], out.output_layouts, out.new_attrs)


@register_convert_op_layout("qnn.conv2d")
def convert_qnn_conv2d(attrs, inputs, tinfos, desired_layouts):
    """qnn.conv2d in the desired ``[data_layout, kernel_layout]``."""
    if len(desired_layouts) != 2:
        raise KilnError(f"ConvertLayout: qnn.conv2d needs two desired layouts [data, kernel], got {desired_layouts}")
    data_layout, kernel_layout = (str(lay) for lay in desired_layouts)
    if data_layout == "default":
        raise KilnError("ConvertLayout: the data layout of qnn.conv2d cannot be 'default'")
    if kernel_layout == "default":
        if data_layout == "NCHW":
            kernel_layout = "OIHW"
        elif data_layout == "NHWC":
            kernel_layout = "HWOI" if is_depthwise_conv2d(attrs, tinfos[1].shape) else "HWIO"
        else:
            raise KilnError(f"ConvertLayout: qnn.conv2d has no default kernel layout for data layout {data_layout}")
    return _qnn.conv2d(*inputs, **dict(attrs, data_layout=data_layout, kernel_layout=kernel_layout))


@register_convert_op_layout("qnn.conv2d_transpose")
def convert_qnn_conv2d_transpose(attrs, inputs, tinfos, desired_layouts):
    """qnn.conv2d_transpose in the desired ``[data_layout, kernel_layout]`` (``default``: IOHW for NCHW data, HWIO
    for NHWC, as conv2d_transpose)."""
    if len(desired_layouts) != 2 or str(desired_layouts[0]) == "default":
        raise KilnError(f"ConvertLayout: qnn.conv2d_transpose needs desired layouts [data, kernel] with a data "
                        f"layout, got {desired_layouts}")
    data_layout, kernel_layout = (str(lay) for lay in desired_layouts)
    if kernel_layout == "default":
        defaults = {"NCHW": "IOHW", "NHWC": "HWIO"}
        if data_layout not in defaults:
            raise KilnError(f"ConvertLayout: qnn.conv2d_transpose has no default kernel layout for {data_layout}")
        kernel_layout = defaults[data_layout]
    return _qnn.conv2d_transpose(*inputs, **dict(attrs, data_layout=data_layout, kernel_layout=kernel_layout))
