"""Types of Relay expressions and TIR values. All are value nodes (compared by ``==``).

``str(t)`` gives TVM's text form: ``Tensor[(1, 3), float32]``, ``Tensor[(64), float32]`` for 1-D, ``float32`` for a
scalar tensor, ``(t1, t2)`` for a
tuple and ``fn (t1) -> t2`` for a function type.
"""

import re
from dataclasses import dataclass

import numpy as np

from ..error import TypeInferenceError
from .node import Node


class Type(Node):
    """Base class of types."""

    __slots__ = ()


_DTYPE = re.compile(r"(bool|handle|void|(float|int|uint|bfloat)(8|16|32|64)?)(x\d+)?")


def _check_dtype(dtype, what) -> str:
    dtype = str(dtype)
    if _DTYPE.fullmatch(dtype):
        return dtype
    raise TypeInferenceError(f"{what}: unknown dtype {dtype!r}")


@dataclass(frozen=True, slots=True)
class TensorType(Type):
    """A tensor of static ``shape`` (a tuple of non-negative ints) and element ``dtype``.

    Examples
    --------
    >>> str(TensorType((1, 3), "float32"))
    'Tensor[(1, 3), float32]'
    """

    shape: tuple
    dtype: str = "float32"

    def __post_init__(self):
        try:
            shape = tuple(int(d) for d in self.shape)
        except (TypeError, ValueError) as exc:
            raise TypeInferenceError(f"TensorType: shape {self.shape!r} must be a sequence of ints") from exc
        if any(d < 0 for d in shape):
            raise TypeInferenceError(f"TensorType: negative dimension in shape {shape}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", _check_dtype(self.dtype, "TensorType"))

    @property
    def concrete_shape(self) -> tuple:
        """The shape as a tuple of ints (TVM's name)."""
        return self.shape

    @property
    def ndim(self) -> int:
        """The rank."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    def __str__(self):
        if not self.shape:
            return self.dtype
        dims = ", ".join(str(d) for d in self.shape)  # TVM prints a 1-D shape as (64), without a comma
        return f"Tensor[({dims}), {self.dtype}]"


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    """The type of a tuple: one type per field."""

    # TVM's name for the field types; it hides Node.fields() on this class (nothing calls that on a type)
    fields: tuple  # type: ignore[assignment]

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple(self.fields))

    def __str__(self):
        inner = ", ".join(str(f) for f in self.fields)
        return f"({inner},)" if len(self.fields) == 1 else f"({inner})"


@dataclass(frozen=True, slots=True)
class FuncType(Type):
    """The type of a function: its argument types and its return type."""

    arg_types: tuple
    ret_type: Type

    def __post_init__(self):
        object.__setattr__(self, "arg_types", tuple(self.arg_types))

    def __str__(self):
        return f"fn ({', '.join(str(a) for a in self.arg_types)}) -> {self.ret_type}"


@dataclass(frozen=True, slots=True)
class PrimType(Type):
    """The type of a TIR scalar value (``int32``, ``float32``, ``handle``, ...)."""

    dtype: str

    def __post_init__(self):
        object.__setattr__(self, "dtype", _check_dtype(self.dtype, "PrimType"))

    def __str__(self):
        return self.dtype


def scalar_type(dtype) -> TensorType:
    """Return the rank-0 tensor type of ``dtype``."""
    return TensorType((), dtype)
