"""Affine types (TVM's ``tvm.ir.TensorAffineType``, ``TupleAffineType``): how the integers of a quantized tensor
stand for real numbers, ``real = scale * (q - zero_point)``.

FakeQuantizationToInteger carries one per rewritten expression; scale and zero point are Relay expressions (scalars,
or one value per channel along ``axis``). Graph nodes: ``==`` is identity as for TVM's objects, and
:func:`kiln.ir.structural_equal` compares them field by field.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from ..error import ArgumentTypeError
from .node import Node


class AffineType(Node):
    """Base class of affine types."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, eq=False)
class TensorAffineType(AffineType):
    """A tensor of ``dtype`` integers ``q`` standing for ``scale * (q - zero_point)``, per channel along ``axis``
    when ``scale`` (or ``zero_point``) is a vector.

    Examples
    --------
    >>> t = TensorAffineType(relay.const(0.5), relay.const(0), "int8")   # doctest: +SKIP
    """

    scale: object
    zero_point: object
    dtype: str
    axis: int = -1

    def __post_init__(self):
        object.__setattr__(self, "dtype", str(self.dtype))
        object.__setattr__(self, "axis", int(self.axis))


@dataclass(frozen=True, slots=True, eq=False)
class TupleAffineType(AffineType):
    """The affine types of a tuple's fields."""

    types: Sequence

    def __post_init__(self):
        types = tuple(self.types)
        for t in types:
            if not isinstance(t, TensorAffineType):
                raise ArgumentTypeError(f"TupleAffineType: every field must be a TensorAffineType, "
                                        f"got {type(t).__name__}")
        object.__setattr__(self, "types", types)
