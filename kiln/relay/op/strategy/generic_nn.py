"""Generic computes of the convolutions and poolings of :mod:`kiln.relay.op.nn_conv` (1-D/3-D, transposed,
adaptive) and the other ``relay.nn`` operators beyond the seed set: adapters from each call's attributes to
:mod:`kiln.topi.nn.convnd`, :mod:`kiln.topi.nn.poolnd` and :mod:`kiln.topi.nn.extra`, merged into
:data:`.generic.COMPUTES`."""

from ....topi.nn import convnd, poolnd

__all__ = ["NN_COMPUTES"]


def _out_dtype(attrs, out_type):
    return attrs.out_dtype or out_type.dtype


def _conv(attrs, inputs, out_type):
    return [convnd.conv(inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.dilation, attrs.groups,
                        attrs.data_layout, attrs.kernel_layout, attrs.out_layout, _out_dtype(attrs, out_type))]


def _conv_transpose(attrs, inputs, out_type):
    return [convnd.conv_transpose(inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.output_padding,
                                  attrs.dilation, attrs.groups, attrs.data_layout, attrs.kernel_layout,
                                  attrs.out_layout, _out_dtype(attrs, out_type))]


def _relayout(out, attrs):
    from ....topi.transform import layout_transform

    return layout_transform(out, attrs.layout, attrs.out_layout) if attrs.out_layout and \
        attrs.out_layout != attrs.layout else out


def _pool(kind):
    def fcompute(attrs, inputs, out_type):
        out = poolnd.pool(inputs[0], attrs.pool_size, attrs.strides, attrs.dilation, attrs.padding, kind,
                          attrs.ceil_mode, attrs.layout, getattr(attrs, "count_include_pad", False))
        return [_relayout(out, attrs)]

    return fcompute


def _adaptive(kind):
    def fcompute(attrs, inputs, out_type):
        return [_relayout(poolnd.adaptive_pool(inputs[0], attrs.output_size, kind, attrs.layout), attrs)]

    return fcompute


NN_COMPUTES = {
    **{name: _conv for name in ("nn.conv1d", "nn.conv3d")},
    **{name: _conv_transpose for name in ("nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose")},
    **{f"nn.{kind}_pool{n}d": _pool(kind) for kind in ("max", "avg") for n in (1, 3)},
    **{f"nn.adaptive_{kind}_pool{n}d": _adaptive(kind) for kind in ("max", "avg") for n in (1, 2, 3)},
}
"""Relay operator name -> ``FTVMCompute`` of the operators this module covers."""
