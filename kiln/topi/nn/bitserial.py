"""Bit-serial operators (TVM's ``topi.nn.bitpack``, ``bitserial_conv2d_nchw/nhwc``, ``bitserial_dense``).

A bit-serial operator quantizes its integer operands to their low bits, ``activation_bits`` (or ``data_bits``) of the
data and ``weight_bits`` of the weight, and multiplies them plane by plane:
``sum over bit planes i, j of 2^(i + j) * popcount(a_i & w_j)`` -- or, ``unipolar``, with each weight bit read as
+1 (set) or -1 (clear): ``popcount(a_i & w_j) - popcount(a_i & ~w_j)``. Summed over the planes this is exactly the
product of the quantized values, ``a = x & (2^abits - 1)`` times ``w = k & (2^wbits - 1)`` (``2 w - (2^wbits - 1)``
when unipolar), accumulated over the reduction: that is how these computes state it, so a CPU vectorizes the
products instead of packing words. The result is in ``out_dtype`` (TVM's ``int16`` by default), wrapping as TVM's
does.

``bitpack`` is the packing itself, for programs that store packed operands: along ``pack_axis`` every ``width``
elements (the bits of ``pack_type``) become one word per bit plane, the first element in the most significant bit,
and the planes go on a new axis at ``bit_axis``.
"""

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import intrin as _intrin
from ...tir import op as _op
from .. import tag as _tag
from ..utils import get_const_tuple
from .convnd import primal_layout
from .pad import pad

__all__ = ["bitpack", "quantize_bits", "bitserial_conv2d", "bitserial_dense"]

PACK_WIDTHS = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}


def quantize_bits(value, bits, dtype, unipolar=False):
    """The operand ``value`` (an integer expression) reduced to its low ``bits`` bits, in ``dtype``; ``unipolar``
    reads each bit as +1 or -1 (``2 q - (2^bits - 1)``)."""
    mask = (1 << bits) - 1
    low = _intrin.bitwise_and(_op.cast(value, "int32"), _op.const(mask, "int32"))
    if unipolar:
        low = low * 2 - mask
    return _op.cast(low, dtype)


def bitpack(data, bits, pack_axis, bit_axis, pack_type, name="BitPack"):
    """Pack the low ``bits`` bit planes of integer ``data`` along ``pack_axis`` into words of ``pack_type``.

    Parameters
    ----------
    data : te.Tensor
    bits : int
        Bit planes to keep (1 to 8).
    pack_axis : int
        The axis whose elements are packed; its size must be a multiple of the word width.
    bit_axis : int
        Where the new axis of ``bits`` planes goes in the result.
    pack_type : str
        ``uint8``, ``uint16``, ``uint32`` or ``uint64``.

    Returns
    -------
    out : te.Tensor
        ``data``'s shape with ``pack_axis`` divided by the width and ``bits`` inserted at ``bit_axis``.
    """
    shape = list(get_const_tuple(data.shape))
    width = PACK_WIDTHS.get(pack_type)
    if width is None or not 0 <= pack_axis < len(shape) or not 0 <= bit_axis <= len(shape):
        raise OpAttributeInvalid(f"topi.bitpack: pack_type {pack_type}, pack_axis {pack_axis} or bit_axis {bit_axis} "
                                 f"does not fit data of shape {tuple(shape)}")
    if isinstance(shape[pack_axis], int) and shape[pack_axis] % width:
        raise OpAttributeInvalid(f"topi.bitpack: axis {pack_axis} of {tuple(shape)} is not a multiple of {width}")
    out_shape = list(shape)
    out_shape[pack_axis] = shape[pack_axis] // width
    out_shape.insert(bit_axis, bits)
    packed_axis = pack_axis + 1 if bit_axis <= pack_axis else pack_axis

    def fcompute(*index):
        k = reduce_axis((0, width), name="k")
        plane = index[bit_axis]
        source = [i * width + k.var if a == packed_axis else i for a, i in enumerate(index) if a != bit_axis]
        bit = _intrin.bitwise_and(_intrin.shift_right(_op.cast(data(*source), "int64"), _op.cast(plane, "int64")),
                                  _op.const(1, "int64"))
        # the element k places from the word's start lands in bit width - 1 - k (the first is the most significant)
        return _te_sum(_intrin.shift_left(_op.cast(bit, pack_type), _op.cast(width - 1 - k.var, pack_type)), axis=k)

    return compute(tuple(out_shape), fcompute, name=name, tag="bitpack")


def bitserial_conv2d(data, kernel, strides, padding, activation_bits, weight_bits, out_dtype="int16", unipolar=True,
                     data_layout="NCHW", kernel_layout="OIHW"):
    """Bit-serial 2-D convolution of integer ``data`` with an unpacked integer ``kernel`` (see the module docstring).

    Parameters
    ----------
    data, kernel : te.Tensor
        In ``data_layout`` (``NCHW``, ``NHWC``...) and ``kernel_layout`` (``OIHW``, ``HWIO``...).
    strides : tuple of int
    padding : tuple of int
        ``(top, left, bottom, right)``.
    activation_bits, weight_bits : int
    out_dtype : str
    unipolar : bool

    Returns
    -------
    out : te.Tensor
        In ``data_layout``, tagged ``bitserial_conv2d``.
    """
    from ..transform import layout_transform

    primal = primal_layout(data_layout)
    if primal != "NCHW":
        raise OpAttributeInvalid(f"topi.bitserial_conv2d: data layout {data_layout} is not a 2-D layout")
    x = data if data_layout == "NCHW" else layout_transform(data, data_layout, "NCHW")
    w = kernel if kernel_layout == "OIHW" else layout_transform(kernel, kernel_layout, "OIHW")
    n, c, h, wd = get_const_tuple(x.shape)
    o, ci, kh, kw = get_const_tuple(w.shape)
    if ci != c:
        raise OpAttributeInvalid(f"topi.bitserial_conv2d: kernel {(o, ci, kh, kw)} does not fit the {c} channels of "
                                 f"the data (a prepacked kernel is not supported)")
    (sh, sw), (top, left, bottom, right) = strides, padding
    oh, ow = (h + top + bottom - kh) // sh + 1, (wd + left + right - kw) // sw + 1
    padded = pad(x, (0, 0, top, left), (0, 0, bottom, right), name="data_pad") if any(padding) else x
    acc = "int64" if out_dtype in ("int64", "uint64") else "int32"

    def fcompute(b, f, y, xx):
        rc, ry, rx = reduce_axis((0, c), name="rc"), reduce_axis((0, kh), name="ry"), reduce_axis((0, kw), name="rx")
        a = quantize_bits(padded(b, rc.var, y * sh + ry.var, xx * sw + rx.var), activation_bits, acc)
        k = quantize_bits(w(f, rc.var, ry.var, rx.var), weight_bits, acc, unipolar)
        return _te_sum(a * k, axis=[rc, ry, rx])

    total = compute((n, o, oh, ow), fcompute, name="bitserial_conv2d", tag="bitserial_conv2d")
    out = compute(total.shape, lambda *i: _op.cast(total(*i), out_dtype), name="bitserial_conv2d_cast",
                  tag=_tag.ELEMWISE)
    return out if data_layout == "NCHW" else layout_transform(out, "NCHW", data_layout)


def bitserial_dense(data, weight, data_bits, weight_bits, out_dtype="int16", unipolar=True):
    """Bit-serial ``data @ weight.T`` of integer ``data`` ``(M, K)`` and an unpacked ``weight`` ``(N, K)`` (see the
    module docstring).

    Returns
    -------
    out : te.Tensor
        ``(M, N)``, tagged ``bitserial_dense``.
    """
    m, k = get_const_tuple(data.shape)
    if len(weight.shape) != 2 or get_const_tuple(weight.shape)[1] != k:
        raise OpAttributeInvalid(f"topi.bitserial_dense: weight {get_const_tuple(weight.shape)} must be (units, {k}) "
                                 f"for data {(m, k)} (a prepacked weight is not supported)")
    units = get_const_tuple(weight.shape)[0]
    acc = "int64" if out_dtype in ("int64", "uint64") else "int32"

    def fcompute(i, j):
        r = reduce_axis((0, k), name="k")
        a = quantize_bits(data(i, r.var), data_bits, acc)
        return _te_sum(a * quantize_bits(weight(j, r.var), weight_bits, acc, unipolar), axis=r)

    total = compute((m, units), fcompute, name="bitserial_dense", tag="bitserial_dense")
    return compute(total.shape, lambda *i: _op.cast(total(*i), out_dtype), name="bitserial_dense_cast",
                   tag=_tag.ELEMWISE)
