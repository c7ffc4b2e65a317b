"""Attribute records of the bit-serial operators (``nn.bitpack``, ``nn.bitserial_conv2d``, ``nn.bitserial_dense``)
with TVM's field names, order and defaults."""

from dataclasses import dataclass

from ...ir.attrs import Attrs
from .attrs import _int_tuple, _layouts, _pad4, _positive

PACK_TYPES = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}
"""The unsigned types bits are packed into, and how many bits each holds."""

MAX_BITS = 8
"""The most bit planes an operand is quantized to (TVM's bitpack masks bits 0 to 7)."""


def _bits(attrs, *names):
    for name in names:
        value = getattr(attrs, name)
        attrs._require(isinstance(value, int) and 1 <= value <= MAX_BITS, name, f"must be an int in 1..{MAX_BITS}")


def _pack_type(attrs, name):
    object.__setattr__(attrs, name, str(getattr(attrs, name)))
    attrs._require(getattr(attrs, name) in PACK_TYPES, name, f"must be one of {', '.join(PACK_TYPES)}")


@dataclass(frozen=True, slots=True)
class BitPackAttrs(Attrs):
    bits: int = 1
    pack_axis: int = 1
    bit_axis: int = -1
    pack_type: str = "uint32"
    name: str = "BitPack"

    def __post_init__(self):
        _bits(self, "bits")
        _pack_type(self, "pack_type")


@dataclass(frozen=True, slots=True)
class BinaryConv2DAttrs(Attrs):
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    kernel_size: tuple = (3, 3)
    channels: int | None = None
    activation_bits: int = 1
    weight_bits: int = 1
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    pack_dtype: str = "uint32"
    out_dtype: str = "int16"
    unipolar: bool = True

    def __post_init__(self):
        _int_tuple(self, "strides", 2)
        _int_tuple(self, "kernel_size", 2)
        _pad4(self)
        self._require(len(self.strides) == 2, "strides", "must have 2 values")
        self._require(len(self.kernel_size) == 2, "kernel_size", "must have 2 values")
        _positive(self, "strides", "kernel_size")
        self._require(min(self.padding) >= 0, "padding", "must be 1, 2 or 4 non-negative ints")
        if self.channels is not None:
            object.__setattr__(self, "channels", int(self.channels))
        _bits(self, "activation_bits", "weight_bits")
        _pack_type(self, "pack_dtype")
        _layouts(self, "data_layout", "kernel_layout")
        object.__setattr__(self, "out_dtype", str(self.out_dtype))
        object.__setattr__(self, "unipolar", bool(self.unipolar))


@dataclass(frozen=True, slots=True)
class BinaryDenseAttrs(Attrs):
    units: int | None = None
    data_bits: int = 1
    weight_bits: int = 1
    pack_dtype: str = "uint32"
    out_dtype: str = "int16"
    unipolar: bool = True

    def __post_init__(self):
        if self.units is not None:
            object.__setattr__(self, "units", int(self.units))
        _bits(self, "data_bits", "weight_bits")
        _pack_type(self, "pack_dtype")
        object.__setattr__(self, "out_dtype", str(self.out_dtype))
        object.__setattr__(self, "unipolar", bool(self.unipolar))
