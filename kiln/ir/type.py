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


_DTYPE = re.compile(r"(bool|handle|void|(float|int|uint|bfloat)(4|8|16|32|64)?)(x\d+)?")


def _check_dtype(dtype, what) -> str:
    dtype = str(dtype)
    if dtype == "uint1" or dtype.startswith("uint1x"):  # TVM's bool is the 1-bit unsigned integer
        dtype = "bool" + dtype[5:]
    match = _DTYPE.fullmatch(dtype)
    if match is None:
        raise TypeInferenceError(f"{what}: unknown dtype {dtype!r}")
    kind, bits, lanes = match.group(2), match.group(3), match.group(4) or ""
    if kind is not None and bits is None:  # TVM's DataType("int") is int32, "float" float32, "bfloat" bfloat16
        return f"{kind}{16 if kind == 'bfloat' else 32}{lanes}"
    return dtype


class Any:
    """A dimension known only at run time (TVM's ``tir.Any``, ``relay.Any()``); printed ``?``.

    All unnamed ``Any`` dimensions are equal to each other and to nothing else: a type relation treats one as an
    unknown, not as a wildcard. Arithmetic on an ``Any`` gives an unnamed ``Any`` (an output dimension computed from
    an unknown one is unknown), so relations written for static shapes derive dynamic ones; ``int(Any())`` is a
    :class:`~kiln.error.TypeInferenceError`, which is how code that needs the value learns it has none.

    A *symbolic* dimension, TVM's ``te.var("n")`` or ``te.size_var("n")`` written into a tensor type, is an ``Any``
    named by that variable (``var``): it is printed by the variable's name, equal only to an ``Any`` of the same
    variable object (and to the variable itself), and kept by every relation that passes the dimension through, so
    ``(n, c) -> sum(axis=1, keepdims) -> (n, 1)`` states that both tensors have ``n`` rows.
    """

    __slots__ = ("var",)

    def __init__(self, var=None):
        self.var = var

    def __eq__(self, other):
        if isinstance(other, Any):
            return self.var is other.var
        return self.var is not None and other is self.var

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash("relay.Any") if self.var is None else hash(self.var)

    def __repr__(self):
        return "?" if self.var is None else str(getattr(self.var, "name_hint", self.var))

    def __int__(self):
        raise TypeInferenceError(f"a dynamic dimension ({self!r}) has no static value")

    __index__ = __int__

    def __bool__(self):
        raise TypeInferenceError(f"a dynamic dimension ({self!r}) has no static value to test")

    def _unknown(self, other=None):
        return Any()

    def _order(self, other):
        raise TypeInferenceError(f"a dynamic dimension ({self!r}) cannot be ordered against another dimension")

    __lt__ = __le__ = __gt__ = __ge__ = _order

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unknown
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = _unknown


def is_any(dim) -> bool:
    """Whether ``dim`` is a dynamic dimension."""
    return isinstance(dim, Any)


def static_or_any(shape) -> tuple:
    """``shape`` as a tuple of ints and :class:`Any` dimensions."""
    return tuple(_dimension(d) for d in shape)


def _dimension(d):
    if isinstance(d, Any):
        return d
    if type(d).__name__ in ("Any", "AnyNode"):  # a TVM-style Any from another module
        return Any()
    if getattr(d, "_is_var", False):  # a TIR variable (te.var / te.size_var): a symbolic dimension
        return Any(d)
    try:
        return int(d)
    except TypeError:
        if any(c.__name__ == "PrimExpr" for c in type(d).__mro__):  # an expression of variables, e.g. n * 2
            return Any()
        raise


@dataclass(frozen=True, slots=True)
class TensorType(Type):
    """A tensor of ``shape`` (a tuple of non-negative ints and :class:`Any` dimensions; a TIR variable given as a
    dimension becomes a symbolic :class:`Any`) and element ``dtype``.

    Examples
    --------
    >>> str(TensorType((1, 3), "float32"))
    'Tensor[(1, 3), float32]'
    """

    shape: tuple
    dtype: str = "float32"

    def __post_init__(self):
        try:
            shape = tuple(_dimension(d) for d in self.shape)
        except (TypeError, ValueError) as exc:
            raise TypeInferenceError(f"TensorType: shape {self.shape!r} must be a sequence of ints") from exc
        if any(type(d) is int and d < 0 for d in shape):
            raise TypeInferenceError(f"TensorType: negative dimension in shape {shape}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", _check_dtype(self.dtype, "TensorType"))

    @property
    def concrete_shape(self) -> tuple:
        """The shape as a tuple of ints (TVM's name); a TypeInferenceError for a dynamic shape."""
        if self.is_dynamic:
            raise TypeInferenceError(f"{self} has dynamic dimensions; its shape is known only at run time")
        return self.shape

    @property
    def is_dynamic(self) -> bool:
        """Whether some dimension is :class:`Any`."""
        return any(type(d) is Any for d in self.shape)

    def admits(self, shape) -> bool:
        """Whether a value of the concrete ``shape`` has this type's shape (a dynamic dimension admits any size)."""
        return len(shape) == len(self.shape) and all(type(t) is Any or d == t
                                                     for d, t in zip(shape, self.shape, strict=True))

    @property
    def ndim(self) -> int:
        """The rank."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements; a TypeInferenceError for a dynamic shape."""
        return int(np.prod(self.concrete_shape, dtype=np.int64))

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


@dataclass(frozen=True, slots=True, eq=False)
class IncompleteType(Type):
    """A type left for inference to find (TVM's ``relay.IncompleteType``). A function parameter annotated with one,
    or with nothing, takes the type the first operator it is passed to requires of it (a convolution's weight, a
    dense layer's weight, a bias), as TVM's type solver gives it. Each instance is a different unknown."""

    kind: int = 0

    def __str__(self):
        return "?type"


def scalar_type(dtype) -> TensorType:
    """Return the rank-0 tensor type of ``dtype``."""
    return TensorType((), dtype)


def has_dynamic_shape(ttype) -> bool:
    """Whether ``ttype`` (a tensor or tuple type) has a dimension known only at run time (:class:`Any`)."""
    if isinstance(ttype, TupleType):
        return any(has_dynamic_shape(f) for f in ttype.fields)
    return isinstance(ttype, TensorType) and ttype.is_dynamic
