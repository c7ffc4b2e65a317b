"""CombineParallelConv2D: convolutions of one input that differ only in their number of filters become one.

The weights are concatenated along the kernel layout's ``O`` axis, the one convolution's output is sliced back along
the output layout's ``C`` axis, and element-wise or broadcast ops that follow every branch alike are applied once to
the combined output, their other arguments concatenated along the channel axis (TVM's ``combine_parallel_conv2d.cc``
over the shared combiner of ``combine_parallel_op.py``). Inception-style blocks then launch one kernel, not several.
"""

import dataclasses
from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from ...tir.layout import layout
from .. import op as _op
from ..expr import Call
from .combine_parallel_op import ParallelOpCombiner, dim_equal, tensor_type
from .function_pass import FunctionPass


def super_channels(conv) -> int:
    """The number of filters of a convolution: its weight's ``O`` dimension (TVM's ``GetConv2DSuperChannelsDim``)."""
    return int(tensor_type(conv.args[1]).shape[conv.attrs.kernel_layout.index("O")])


def _oihw_weight_shape(conv) -> tuple:
    """A convolution's weight shape in the OIHW layout, whatever its kernel layout."""
    return layout(conv.attrs.kernel_layout).convert_shape(tuple(tensor_type(conv.args[1]).shape), layout("OIHW"))


class ParallelConv2DCombiner(ParallelOpCombiner):
    """The conv2d instance of the parallel-op combiner."""

    def __init__(self, min_num_branches: int):
        super().__init__("nn.conv2d", min_num_branches)
        self.channel_pos = 0

    def is_supported_op(self, call) -> bool:
        return call.attrs.groups == 1

    def can_ops_be_combined(self, a, b) -> bool:
        attrs_a, attrs_b = a.attrs, b.attrs
        same = ("strides", "padding", "dilation", "groups", "data_layout", "kernel_layout", "out_dtype", "out_layout")
        if any(getattr(attrs_a, name) != getattr(attrs_b, name) for name in same):
            return False
        shape_a, shape_b = _oihw_weight_shape(a), _oihw_weight_shape(b)
        return dim_equal(shape_a[2], shape_b[2]) and dim_equal(shape_a[3], shape_b[3])

    def make_combined_op(self, branches):
        weights = [branch[0].args[1] for branch in branches]
        attrs = branches[0][0].attrs
        channels = sum(super_channels(branch[0]) for branch in branches)
        weight = _op.concatenate(weights, axis=attrs.kernel_layout.index("O"))
        layout = attrs.out_layout or attrs.data_layout
        self.channel_pos = layout.index("C")
        new_attrs = dataclasses.replace(attrs, channels=channels)
        return _op.nn.conv2d(branches[0][0].args[0], weight, **{f.name: getattr(new_attrs, f.name)
                                                                 for f in dataclasses.fields(new_attrs)})

    def _arg_channel_pos(self, out_ndim: int, arg_ndim: int) -> int:
        """The argument's axis that broadcasts against the output's channel axis (negative: it has none)."""
        return self.channel_pos - out_ndim + arg_ndim

    def is_arg_compatible(self, a, b, index) -> bool:
        ta, tb = tensor_type(a.args[index]), tensor_type(b.args[index])
        out_a, out_b = tensor_type(a), tensor_type(b)
        if ta.dtype != tb.dtype or len(ta.shape) != len(tb.shape):
            return False
        pos = self._arg_channel_pos(len(out_a.shape), len(ta.shape))
        if pos < 0 or not dim_equal(ta.shape[pos], out_a.shape[self.channel_pos]) \
                or not dim_equal(tb.shape[pos], out_b.shape[self.channel_pos]):
            return False
        return all(dim_equal(x, y) for i, (x, y) in enumerate(zip(ta.shape, tb.shape, strict=True)) if i != pos)

    def make_combined_call_from_following_ops(self, data, branches, depth, parent_index):
        call = branches[0][depth]
        ndim = len(tensor_type(call).shape)
        args = []
        for i, arg in enumerate(call.args):
            if i == parent_index:
                args.append(data)
                continue
            pos = self._arg_channel_pos(ndim, len(tensor_type(arg).shape))
            args.append(_op.concatenate([branch[depth].args[i] for branch in branches], axis=pos))
        return Call(call.op, args, call.attrs)

    def update_group_output(self, data, branches, depth, subst) -> None:
        index = 0
        for branch in branches:
            channels = super_channels(branch[0])
            begin = [0] * self.channel_pos + [index]
            end = [-1] * self.channel_pos + [channels]
            index += channels
            subst[branch[depth]] = _op.strided_slice(data, begin, end, strides=[1] * len(begin), slice_mode="size")


def combine_parallel_conv2d(expr, min_num_branches: int = 3):
    """``expr`` with parallel ``nn.conv2d`` branches of at least ``min_num_branches`` combined."""
    return ParallelConv2DCombiner(min_num_branches).combine(expr)


@register_pass("CombineParallelConv2d")  # TVM's pass name, which disabled_pass lists
@dataclass(frozen=True)
class CombineParallelConv2D(FunctionPass):
    """Combine parallel 2-D convolutions of one input into one convolution (TVM's pass of that name).

    Parameters
    ----------
    min_num_branches : int
        The smallest number of parallel convolutions that is combined.
    """

    min_num_branches: int = 3
    info = PassInfo(4, "CombineParallelConv2d", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return combine_parallel_conv2d(func, self.min_num_branches)
