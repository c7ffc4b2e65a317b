"""The bit-serial operators in numpy, plane by plane as their name says: ``nn.bitpack`` packs the bit planes into
words, ``nn.bitserial_conv2d`` and ``nn.bitserial_dense`` sum ``2^(i + j)`` times the convolution (or product) of
activation bit plane ``i`` with weight bit plane ``j`` (read as +1/-1 when unipolar). The compiled kernels multiply
the quantized values directly (:mod:`kiln.topi.nn.bitserial`), so the two check each other. Results wrap in
``out_dtype`` as TVM's do."""

import numpy as np

from .common import register
from .conv import conv2d_nchw
from .transform import convert_layout


def _planes(values, bits):
    """The low ``bits`` bit planes of integer ``values`` (two's complement), each as 0/1 int64."""
    wide = values.astype(np.int64)
    return [(wide >> b) & 1 for b in range(bits)]


@register("nn.bitpack")
def bitpack(attrs, data):
    """Every ``width`` elements along ``pack_axis`` become one word per bit plane, the first in the top bit."""
    width = np.iinfo(attrs.pack_type).bits
    axis = attrs.pack_axis % data.ndim
    moved = np.moveaxis(data, axis, -1)
    words = moved.reshape(moved.shape[:-1] + (moved.shape[-1] // width, width))
    weights = np.array([1 << (width - 1 - k) for k in range(width)], dtype=np.uint64)
    planes = [(plane.astype(np.uint64) * weights).sum(axis=-1, dtype=np.uint64) for plane in
              _planes(words, attrs.bits)]
    packed = [np.moveaxis(p, -1, axis).astype(attrs.pack_type) for p in planes]
    return np.stack(packed, axis=attrs.bit_axis % (data.ndim + 1))


def _weight_plane(plane, unipolar):
    return 2 * plane - 1 if unipolar else plane


@register("nn.bitserial_conv2d")
def bitserial_conv2d(attrs, data, weight):
    """Sum over bit planes of plane convolutions (see the module docstring)."""
    x = convert_layout(data, attrs.data_layout, "NCHW")
    k = convert_layout(weight, attrs.kernel_layout, "OIHW")
    total = None
    for i, a in enumerate(_planes(x, attrs.activation_bits)):
        for j, w in enumerate(_planes(k, attrs.weight_bits)):
            term = conv2d_nchw(a, _weight_plane(w, attrs.unipolar), attrs.strides, attrs.padding, (1, 1), 1,
                               np.dtype(np.int64)) << (i + j)
            total = term if total is None else total + term
    return convert_layout(total.astype(attrs.out_dtype), "NCHW", attrs.data_layout)


@register("nn.bitserial_dense")
def bitserial_dense(attrs, data, weight):
    """Sum over bit planes of plane products; ``weight`` is ``(units, K)``."""
    if weight.shape != (attrs.units, data.shape[1]):
        from ...error import OpAttributeInvalid

        raise OpAttributeInvalid(f"nn.bitserial_dense: weight {weight.shape} must be (units, K) = "
                                 f"{(attrs.units, data.shape[1])}")
    total = np.zeros((data.shape[0], attrs.units), np.int64)
    for i, a in enumerate(_planes(data, attrs.data_bits)):
        for j, w in enumerate(_planes(weight, attrs.weight_bits)):
            total += (a @ _weight_plane(w, attrs.unipolar).T) << (i + j)
    return total.astype(attrs.out_dtype)
