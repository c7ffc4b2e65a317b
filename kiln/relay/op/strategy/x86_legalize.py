"""x86 legalizations (TVM's ``_conv2d_legalize`` in ``topi/x86/conv2d_alter_op.py`` and ``_dense_legalize`` in
``topi/x86/dense_alter_op.py``): int8 x int8 products reach the CPU's 8-bit dot product.

The x86 dot products (``vpdpbusd``, ``pmaddubsw``) multiply *unsigned* bytes by signed ones. An int8 x int8 -> int32
``nn.conv2d`` (NCHW/OIHW, no groups) or ``nn.dense`` on a CPU that has one is rewritten with the data shifted into
uint8 and the shift taken back out of the result::

    conv(A, W) = conv(A + 128, W) - 128 * sum_{c, kh, kw} W[o, c, kh, kw]

where ``A + 128`` is computed in int32 and cast to uint8 (exact: ``-128..127`` maps onto ``0..255``). Padding must
read the shifted zero (128), so a padded convolution pads explicitly first (``nn.pad`` with ``pad_value=128``) and
runs unpadded. Channel counts that are not whole dot products or vectors need nothing here: the int8 computes pad
them while packing (:mod:`kiln.topi.x86.conv2d_int8`, :mod:`kiln.topi.x86.dense_int8`).

``Legalize`` runs in ``relay.build``'s pipeline at opt_level 1; the hooks act only while a CPU target with an 8-bit
dot product is current (the generic ``topi.nn.conv2d_legalize``/``dense_legalize`` keep every call elsewhere).
"""

from ....ir.op import register_op_attr
from ....target.target import Target
from ....topi import nn as topi_nn
from ....topi import x86
from ....topi.nn.conv2d import pad_tuple
from ...expr import const
from .. import nn as _nn
from .. import reduce as _reduce
from .. import tensor as _tensor

__all__ = ["legalize_conv2d_int8", "legalize_dense_int8"]


def _shift_to_uint8(data):
    """``data + 128`` as uint8 (int8 data's values moved onto 0..255)."""
    return _tensor.cast(_tensor.add(_tensor.cast(data, "int32"), const(128, "int32")), "uint8")


def _int8_pair(types, out_dtype):
    data_type, weight_type = types[0], types[1]
    target = Target.current()
    return target is not None and (data_type.dtype, weight_type.dtype, out_dtype) == ("int8", "int8", "int32") and \
        x86.int8_dot_lanes(target) is not None


def legalize_conv2d_int8(attrs, inputs, types):
    """The ``"cpu"`` :func:`kiln.topi.nn.conv2d_legalize`: an int8 x int8 NCHW/OIHW convolution computed on uint8
    data (see the module docstring), or None to keep the call."""
    out_dtype = attrs.out_dtype or types[-1].dtype
    if not _int8_pair(types, out_dtype) or attrs.groups != 1 or \
            (attrs.data_layout, attrs.kernel_layout, attrs.out_layout or "NCHW") != ("NCHW", "OIHW", "NCHW"):
        return None
    data, weight = inputs
    shifted = _shift_to_uint8(data)
    top, left, bottom, right = pad_tuple(attrs.padding)
    if any((top, left, bottom, right)):
        shifted = _nn.pad(shifted, ((0, 0), (0, 0), (top, bottom), (left, right)), pad_value=128)
    conv = _nn.conv2d(shifted, weight, **dict(attrs, padding=(0, 0), out_dtype="int32"))
    per_filter = _reduce.sum(_tensor.cast(weight, "int32"), axis=(1, 2, 3))
    shift = _tensor.multiply(_tensor.expand_dims(per_filter, axis=1, num_newaxis=2), const(128, "int32"))
    return _tensor.subtract(conv, shift)


def legalize_dense_int8(attrs, inputs, types):
    """The ``"cpu"`` :func:`kiln.topi.nn.dense_legalize`: an int8 x int8 dense computed on uint8 data (see the
    module docstring), or None to keep the call."""
    out_dtype = attrs.out_dtype or types[-1].dtype
    if not _int8_pair(types, out_dtype) or len(types[1].shape) != 2:
        return None
    data, weight = inputs
    product = _nn.dense(_shift_to_uint8(data), weight, units=attrs.units, out_dtype="int32")
    shift = _tensor.multiply(_reduce.sum(_tensor.cast(weight, "int32"), axis=(1,)), const(128, "int32"))
    return _tensor.subtract(product, shift)


def _legalize_conv2d(attrs, inputs, types):
    """``FTVMLegalize`` of ``nn.conv2d``: the current target's ``topi.nn.conv2d_legalize`` (TVM's)."""
    return topi_nn.conv2d_legalize(attrs, inputs, types)


def _legalize_dense(attrs, inputs, types):
    """``FTVMLegalize`` of ``nn.dense``: the current target's ``topi.nn.dense_legalize`` (TVM's)."""
    return topi_nn.dense_legalize(attrs, inputs, types)


topi_nn.conv2d_legalize.register("cpu", legalize_conv2d_int8)
topi_nn.dense_legalize.register("cpu", legalize_dense_int8)
register_op_attr("nn.conv2d", "FTVMLegalize", _legalize_conv2d)
register_op_attr("nn.dense", "FTVMLegalize", _legalize_dense)
