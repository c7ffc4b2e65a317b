"""TIR data types: ``int32``, ``float32x4`` (4 lanes), ``bool``, ``handle``, and TVM's rules for mixing them.

A dtype is kept as a string on every node (as TVM's Python API shows it); :class:`DataType` parses one into its type
code, bit width and lane count, cached per string. :func:`binary_result` implements TVM's ``BinaryOpMatchTypes``:
a float operand makes the result float, otherwise the wider integer wins, signed before unsigned at equal width, and a
scalar meeting a vector is broadcast to the vector's lanes.
"""

import functools
import re
from dataclasses import dataclass

import numpy as np

from ..error import TIRError

_PATTERN = re.compile(r"(bool|handle|void|int|uint|float|bfloat)(\d+)?(?:x(\d+)|xvscalex(\d+))?")
_DEFAULT_BITS = {"bool": 1, "handle": 64, "void": 0, "int": 32, "uint": 32, "float": 32, "bfloat": 16}


@dataclass(frozen=True, slots=True, init=False)
class DataType:
    """A parsed dtype: ``code`` ("int", "uint", "float", "bfloat", "bool", "handle", "void"), ``bits``, ``lanes``.

    A scalable vector (``int32xvscalex4``: 4 times the target's ``vscale`` lanes) has ``lanes == -4``, as TVM's
    ``DataType`` keeps it.

    Examples
    --------
    >>> DataType.parse("float32x4")
    DataType(code='float', bits=32, lanes=4)
    >>> str(DataType.parse("float32x4").element_of())
    'float32'
    """

    code: str
    bits: int
    lanes: int = 1

    def __init__(self, code, bits=None, lanes=1):
        """``DataType(code, bits, lanes)``, or ``DataType("float32x4")`` parsing a dtype string as TVM's."""
        if bits is None:
            code, bits, lanes = (lambda t: (t.code, t.bits, t.lanes))(DataType.parse(code))
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "bits", int(bits))
        object.__setattr__(self, "lanes", int(lanes))

    @staticmethod
    def parse(dtype) -> "DataType":
        """Parse a dtype string (or return a DataType as is); raises TIRError on an unknown name."""
        if isinstance(dtype, DataType):
            return dtype
        return _parse(str(dtype))

    def __str__(self):
        if self.code in ("bool", "handle", "void"):
            base = self.code
        else:
            base = f"{self.code}{self.bits}"
        if self.lanes < 0:
            return f"{base}xvscalex{-self.lanes}"
        return base if self.lanes == 1 else f"{base}x{self.lanes}"

    def with_lanes(self, lanes: int) -> "DataType":
        """The same element type with ``lanes`` lanes."""
        return DataType(self.code, self.bits, int(lanes))

    def element_of(self) -> "DataType":
        """The scalar element type."""
        return self.with_lanes(1)

    def is_int(self) -> bool:
        return self.code == "int"

    def is_uint(self) -> bool:
        return self.code == "uint"

    def is_integer(self) -> bool:
        """Signed or unsigned integer (not bool)."""
        return self.code in ("int", "uint")

    def is_float(self) -> bool:
        return self.code in ("float", "bfloat")

    def is_bool(self) -> bool:
        return self.code == "bool"

    def is_handle(self) -> bool:
        return self.code == "handle"

    def is_scalar(self) -> bool:
        return self.lanes == 1

    def is_vector(self) -> bool:
        return self.lanes != 1

    def is_scalable_vector(self) -> bool:
        """Whether the lane count is a multiple of the target's ``vscale`` (known only at run time)."""
        return self.lanes < 0

    def numpy(self) -> np.dtype:
        """The numpy dtype of one element (bool as numpy bool, bfloat16 widened to float32)."""
        if self.code == "bool":
            return np.dtype(np.bool_)
        if self.code == "bfloat":
            return np.dtype(np.float32)
        if self.code == "handle":
            return np.dtype(np.uint64)
        if self.bits == 4:
            return np.dtype(f"{self.code}8")  # numpy has no 4-bit integers; the values fit in a byte
        return np.dtype(f"{self.code}{self.bits}")

    def min_value(self):
        """The smallest representable value (a Python int or float)."""
        if self.code == "int":
            return -(1 << (self.bits - 1))
        if self.code in ("uint", "bool"):
            return 0
        if self.is_float():
            return float(np.finfo(self.numpy()).min)
        raise TIRError(f"dtype {self} has no minimum value")

    def max_value(self):
        """The largest representable value (a Python int or float)."""
        if self.code == "int":
            return (1 << (self.bits - 1)) - 1
        if self.code == "uint":
            return (1 << self.bits) - 1
        if self.code == "bool":
            return 1
        if self.is_float():
            return float(np.finfo(self.numpy()).max)
        raise TIRError(f"dtype {self} has no maximum value")


@functools.cache
def _parse(text: str) -> DataType:
    if not text:
        return DataType("void", 0)  # TVM's DataType(""), the type of a call with no value
    match = _PATTERN.fullmatch(text)
    if match is None:
        raise TIRError(f"unknown TIR dtype {text!r} (expected e.g. int32, float32x4, bool, handle)")
    code, bits, lanes, scalable = match.groups()
    if code in ("bool", "handle", "void") and bits is not None:
        raise TIRError(f"unknown TIR dtype {text!r}")
    nbits = int(bits) if bits is not None else _DEFAULT_BITS[code]
    if code in ("int", "uint") and nbits not in (1, 4, 8, 16, 32, 64) or code == "float" and nbits not in (16, 32, 64):
        raise TIRError(f"unsupported bit width in TIR dtype {text!r}")
    if code == "uint" and nbits == 1:
        code = "bool"  # TVM's bool is the 1-bit unsigned integer, and prints as bool
    if scalable is not None:
        return DataType(code, nbits, -int(scalable))
    return DataType(code, nbits, int(lanes) if lanes is not None else 1)


_NORMAL_NAMES: dict = {}  # dtype string -> its canonical string (every node constructor normalizes its dtype)


def normalize(dtype) -> str:
    """Canonical string of a dtype given as a string, numpy dtype, DataType or ``PrimType``."""
    if type(dtype) is str:
        name = _NORMAL_NAMES.get(dtype)
        if name is None:
            name = _NORMAL_NAMES[dtype] = str(DataType.parse(dtype))
        return name
    if hasattr(dtype, "dtype") and not isinstance(dtype, np.dtype | str):
        dtype = dtype.dtype  # a PrimType
    if isinstance(dtype, np.dtype) or isinstance(dtype, type) and issubclass(dtype, np.generic):
        dtype = np.dtype(dtype).name
    return str(DataType.parse(dtype))


def lanes(dtype) -> int:
    """The lane count of ``dtype``."""
    return DataType.parse(dtype).lanes


def element(dtype) -> str:
    """The scalar element dtype of ``dtype`` (``float32x4`` -> ``float32``)."""
    return str(DataType.parse(dtype).element_of())


def with_lanes(dtype, n: int) -> str:
    """``dtype`` with ``n`` lanes (``with_lanes("float32", 4)`` -> ``float32x4``)."""
    return str(DataType.parse(dtype).with_lanes(n))


def is_float(dtype) -> bool:
    return DataType.parse(dtype).is_float()


def is_integer(dtype) -> bool:
    return DataType.parse(dtype).is_integer()


def is_bool(dtype) -> bool:
    return DataType.parse(dtype).is_bool()


def binary_result(lhs: str, rhs: str, what: str = "binary operator") -> str:
    """The dtype both operands are converted to before a binary operation (TVM's ``BinaryOpMatchTypes``).

    Raises TIRError when the lane counts differ and neither operand is a scalar, or when one side is a handle.
    """
    if lhs == rhs:
        return lhs
    a, b = DataType.parse(lhs), DataType.parse(rhs)
    if a.lanes != b.lanes and a.lanes != 1 and b.lanes != 1:
        raise TIRError(f"{what}: cannot combine vectors of different lanes ({lhs} and {rhs})")
    n = a.lanes if a.lanes != 1 else b.lanes
    a, b = a.element_of(), b.element_of()
    if a.is_handle() or b.is_handle():
        raise TIRError(f"{what}: cannot combine {lhs} and {rhs}")
    if a == b:
        result = a
    elif a.is_float() != b.is_float():
        result = a if a.is_float() else b
    elif a.is_float():
        result = a if a.bits >= b.bits else b
    elif a.is_bool() or b.is_bool():
        result = b if a.is_bool() else a
    elif a.bits != b.bits:
        result = a if a.bits > b.bits else b
    else:
        result = a if a.is_uint() else b  # int32 with uint32 -> uint32, as TVM does
    return str(result.with_lanes(n))
