"""Bit-serial operators (``relay.nn``): ``nn.bitpack``, ``nn.bitserial_conv2d``, ``nn.bitserial_dense``.

They quantize integer operands to a few bit planes and multiply plane by plane (:mod:`kiln.topi.nn.bitserial` says
how); the weights are given unpacked. As in TVM, the convolution's output shape comes from ``channels`` and
``kernel_size`` and the dense's from ``units``; kiln also checks the convolution's weight against them, which TVM's
relation does not.
"""

from ...error import TypeInferenceError
from ...ir.op import register_op_attr
from ...ir.type import TensorType, is_any
from ...tir.layout import layout as parse_layout
from .attrs_bitserial import PACK_TYPES, BinaryConv2DAttrs, BinaryDenseAttrs, BitPackAttrs
from .op import OpPattern, make_call, register_relay_op
from .type_relations import INTEGER, check_dtype, nonpositive, normalize_axis, shapes_match, tensor_arg


def bitpack_shape(shape, bits, pack_axis, bit_axis, pack_type, what="nn.bitpack"):
    """The shape ``nn.bitpack`` makes of ``shape``: ``pack_axis`` divided by the width of ``pack_type``, ``bits``
    planes inserted at ``bit_axis`` (negative: from the end of the result)."""
    ndim, width = len(shape), PACK_TYPES[pack_type]
    pack_axis = normalize_axis(pack_axis, ndim, f"{what} pack_axis")
    if not -ndim - 1 <= bit_axis <= ndim:
        raise TypeInferenceError(f"{what}: bit_axis {bit_axis} is out of range for a result of rank {ndim + 1}")
    size = shape[pack_axis]
    if not is_any(size) and size % width:
        raise TypeInferenceError(f"{what}: axis {pack_axis} of size {size} is not a multiple of the {width} bits of "
                                 f"{pack_type}")
    out = list(shape)
    out[pack_axis] = size // width
    out.insert(bit_axis % (ndim + 1), bits)
    return tuple(out)


def _bitpack_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    return TensorType(bitpack_shape(data.shape, attrs.bits, attrs.pack_axis, attrs.bit_axis, attrs.pack_type),
                      attrs.pack_type)


register_relay_op("nn.bitpack", 1, _bitpack_rel, OpPattern.INJECTIVE, BitPackAttrs, dtypes=INTEGER)


def bitpack(data, bits=1, pack_axis=1, bit_axis=2, pack_type="uint32", name="BitPack"):
    """Pack the low ``bits`` bit planes of integer ``data`` along ``pack_axis`` into ``pack_type`` words, the planes
    on a new axis at ``bit_axis`` (``(1, 64, 128, 128)`` with ``pack_axis=1, bit_axis=4, pack_type="uint8",
    bits=2`` gives ``(1, 8, 128, 128, 2)``)."""
    return make_call("nn.bitpack", [data], BitPackAttrs(bits, pack_axis, bit_axis, pack_type, name))


def _binary_conv2d_rel(types, attrs):
    op = "nn.bitserial_conv2d"
    data, weight = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "weight")
    check_dtype(attrs.out_dtype, INTEGER, "out_dtype", op)
    try:
        d = parse_layout(attrs.data_layout).shape_to_primal(data.shape)
        w = parse_layout(attrs.kernel_layout).shape_to_primal(weight.shape)
    except Exception as exc:  # KilnError from the layout helper, reported as a typing error
        raise TypeInferenceError(f"{op}: data {data} or weight {weight} does not fit layouts {attrs.data_layout}/"
                                 f"{attrs.kernel_layout}: {exc}") from exc
    if set(d) != set("NCHW") or set(w) != set("OIHW"):
        raise TypeInferenceError(f"{op}: layouts {attrs.data_layout}/{attrs.kernel_layout} must have axes NCHW/OIHW")
    channels = w["O"] if attrs.channels is None else attrs.channels
    want = {"O": channels, "I": d["C"], "H": attrs.kernel_size[0], "W": attrs.kernel_size[1]}
    if not shapes_match([w[a] for a in "OIHW"], [want[a] for a in "OIHW"]):
        raise TypeInferenceError(f"{op}: weight {weight} must be {attrs.kernel_layout} of sizes {want} (unpacked)")
    top, left, bottom, right = attrs.padding
    out = {"N": d["N"], "C": channels,
           "H": (d["H"] + top + bottom - attrs.kernel_size[0]) // attrs.strides[0] + 1,
           "W": (d["W"] + left + right - attrs.kernel_size[1]) // attrs.strides[1] + 1}
    if nonpositive(out["H"], out["W"]):
        raise TypeInferenceError(f"{op}: kernel_size {list(attrs.kernel_size)} is larger than the padded {data}")
    return TensorType(parse_layout(attrs.data_layout).shape_from_primal(out), attrs.out_dtype)


register_relay_op("nn.bitserial_conv2d", 2, _binary_conv2d_rel, OpPattern.OUT_ELEMWISE_FUSABLE, BinaryConv2DAttrs,
                  dtypes=INTEGER)


def _binary_conv2d_weight(types, attrs):
    """An untyped weight is the unpacked kernel ``channels`` x the data's channels x ``kernel_size``."""
    data = tensor_arg(types, 0, "data")
    if types[1] is not None:
        return types
    if attrs.channels is None:
        raise TypeInferenceError("an untyped weight needs channels= to be inferred")
    c = parse_layout(attrs.data_layout).shape_to_primal(data.shape)["C"]
    sizes = {"O": attrs.channels, "I": c, "H": attrs.kernel_size[0], "W": attrs.kernel_size[1]}
    return [data, TensorType(parse_layout(attrs.kernel_layout).shape_from_primal(sizes), data.dtype)]


register_op_attr("nn.bitserial_conv2d", "FInferArgTypes", _binary_conv2d_weight)


def bitserial_conv2d(data, weight, strides=(1, 1), padding=(0, 0), channels=None, kernel_size=(3, 3),
                     activation_bits=1, weight_bits=1, data_layout="NCHW", kernel_layout="OIHW", pack_dtype="uint32",
                     out_dtype="int16", unipolar=True):
    """2-D convolution of ``data`` quantized to ``activation_bits`` bits with ``weight`` quantized to
    ``weight_bits`` (each bit +1/-1 when ``unipolar``), computed bit-serially (TVM's signature)."""
    return make_call("nn.bitserial_conv2d", [data, weight], BinaryConv2DAttrs(
        strides, padding, kernel_size, channels, activation_bits, weight_bits, data_layout, kernel_layout, pack_dtype,
        out_dtype, unipolar))


def _binary_dense_rel(types, attrs):
    op = "nn.bitserial_dense"
    data, weight = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "weight")
    check_dtype(attrs.out_dtype, INTEGER, "out_dtype", op)
    if data.ndim != 2 or weight.ndim != 2:
        raise TypeInferenceError(f"{op}: data {data} and weight {weight} must be 2-D")
    if attrs.units is None:
        raise TypeInferenceError(f"{op}: units must be given")
    # TVM's relation reads the result from units alone and never looks at the weight (its tests pass (K, units)
    # weights); kiln types such a call as TVM does, and the kernel requires the (units, K) weight it computes with
    return TensorType((data.shape[0], attrs.units), attrs.out_dtype)


register_relay_op("nn.bitserial_dense", 2, _binary_dense_rel, OpPattern.OUT_ELEMWISE_FUSABLE, BinaryDenseAttrs,
                  dtypes=INTEGER)


def bitserial_dense(data, weight, units=None, data_bits=1, weight_bits=1, pack_dtype="uint32", out_dtype="int16",
                    unipolar=True):
    """``data @ weight.T`` of ``data`` (M, K) quantized to ``data_bits`` bits and ``weight`` (units, K) quantized to
    ``weight_bits`` (each bit +1/-1 when ``unipolar``), computed bit-serially (TVM's signature)."""
    return make_call("nn.bitserial_dense", [data, weight], BinaryDenseAttrs(
        units, data_bits, weight_bits, pack_dtype, out_dtype, unipolar))
