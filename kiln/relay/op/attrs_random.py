"""Attribute records of the random-number operators (``random.threefry_generate random.uniform random.normal
random.multinomial``), with TVM's field names, order and defaults.

:mod:`kiln.relay.op.attrs` re-exports them; validation follows its rules (OpAttributeInvalid naming the field).
"""

from dataclasses import dataclass

from ...ir.attrs import Attrs
from .attrs import _int_tuple
from .type_relations import ALL


def _shape(attrs):
    _int_tuple(attrs, "out_shape")
    attrs._require(all(d >= 0 for d in attrs.out_shape), "out_shape", "sizes must not be negative")


def _dtype(attrs):
    """A known dtype name (the type relation then asks for float32 or float64, as TVM's does)."""
    object.__setattr__(attrs, "out_dtype", str(attrs.out_dtype))
    attrs._require(attrs.out_dtype in ALL, "out_dtype", "is not a dtype kiln knows")


@dataclass(frozen=True, slots=True)
class ThreefryGenerateAttrs(Attrs):
    out_shape: tuple = ()

    def __post_init__(self):
        _shape(self)


@dataclass(frozen=True, slots=True)
class UniformAttrs(Attrs):
    out_shape: tuple = ()
    out_dtype: str = "float32"

    def __post_init__(self):
        _shape(self)
        _dtype(self)


@dataclass(frozen=True, slots=True)
class NormalAttrs(Attrs):
    out_shape: tuple = ()
    out_dtype: str = "float32"

    def __post_init__(self):
        _shape(self)
        _dtype(self)


@dataclass(frozen=True, slots=True)
class MultinomialAttrs(Attrs):
    num_samples: int = 1

    def __post_init__(self):
        object.__setattr__(self, "num_samples", int(self.num_samples))
        self._require(self.num_samples >= 0, "num_samples", "must not be negative")
