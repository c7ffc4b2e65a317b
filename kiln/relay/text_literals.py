"""Lexical pieces of the Relay text format shared by the printer and the parser.

Everything here is a small pure function: how a type, an attribute value, a scalar constant or a variable name is
spelled, and how a numeric literal with a dtype suffix (``1f``, ``2i64``, ``1e-05f``, ``-inff``) is read back.

Spelling follows TVM's printer: scalar tensor types print as their dtype, ``Tensor[(64), float32]`` has no trailing
comma for one dimension, float attributes print with six significant digits and an ``f`` suffix, int64 scalars carry
``i64``. Where six digits would not read back to the same value, the shortest exact form is printed instead, so that
``parse(str(mod))`` recovers every value bit for bit.
"""

import json
import math
import re
from enum import Enum

import numpy as np

from ..ir.type import IncompleteType, PrimType, TensorType, TupleType
from ..ir.type_poly import FuncType, RelayRefType, TypeCall

VERSION = "0.0.5"

# Constants of these dtypes and rank 0 print inline (TVM's IsSimpleScalar); the rest go to the metadata section.
SCALAR_SUFFIX = {"int16": "i16", "int32": "", "int64": "i64", "float16": "f16", "float32": "f", "float64": "f64",
                 "bool": ""}

# A local name printed bare: TVM's identifier letters, plus '.' segments (ONNX names such as ``input.1``).
BARE_LOCAL = re.compile(r"[A-Za-z][A-Za-z0-9_/]*(?:\.[A-Za-z0-9_/]+)*")
BARE_GLOBAL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DIGITS = re.compile(r"\d+")


def type_text(ttype) -> str:
    """Spell a type as TVM does: ``float32``, ``Tensor[(1, 3), float32]``, ``(t1, t2)``, ``fn [A](t1) -> t2``,
    ``List[A]``, ``ref(float32)``."""
    if isinstance(ttype, TensorType):
        if not ttype.shape:
            return ttype.dtype
        return f"Tensor[({', '.join(str(d) for d in ttype.shape)}), {ttype.dtype}]"
    if isinstance(ttype, TupleType):
        inner = ", ".join(type_text(f) for f in ttype.fields)
        return f"({inner},)" if len(ttype.fields) == 1 else f"({inner})"
    if isinstance(ttype, FuncType):
        params = getattr(ttype, "type_params", ())
        head = f"fn [{', '.join(str(t) for t in params)}](" if params else "fn ("
        return f"{head}{', '.join(type_text(a) for a in ttype.arg_types)}) -> {type_text(ttype.ret_type)}"
    if isinstance(ttype, PrimType):
        return ttype.dtype
    if isinstance(ttype, TypeCall):
        return f"{type_text(ttype.func)}[{', '.join(type_text(a) for a in ttype.args)}]" if ttype.args else \
            type_text(ttype.func)
    if isinstance(ttype, RelayRefType):
        return f"ref({type_text(ttype.value)})"
    if isinstance(ttype, IncompleteType):
        return "_"
    return str(ttype)  # type variables, data type names


def _exact_float(value: float, narrow) -> str:
    """Six significant digits (C++ stream default, as TVM) when they read back exactly, else the shortest exact form."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    short = f"{value:g}"
    if narrow(float(short)) == narrow(value):
        return short
    return str(narrow(value)) if narrow is not float else repr(value)


def float_text(value) -> str:
    """A float64 attribute value with TVM's ``f`` suffix: ``1e-05f``, ``0.75f``, ``2f``."""
    return _exact_float(float(value), float) + "f"


def attr_text(value, meta_ref) -> str:
    """Spell an attribute value: ``1``, ``1e-05f``, ``"NHWC"``, ``True``, ``[1, 1]``, ``None``.

    ``meta_ref(node)`` spells an IR node (such as a GlobalVar held in function attributes) as a metadata reference.
    """
    if value is None:
        return "None"
    if isinstance(value, bool | np.bool_):
        return "True" if value else "False"
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return float_text(value)
    if isinstance(value, str):
        return string_text(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(attr_text(v, meta_ref) for v in value) + "]"
    from ..ir.node import Node

    if isinstance(value, Node):
        return meta_ref(value)
    return string_text(str(value))  # not representable: keep the text readable rather than fail to print


def string_text(value: str) -> str:
    """A double-quoted string literal (JSON escapes)."""
    return json.dumps(value, ensure_ascii=False)


def scalar_text(array: np.ndarray) -> str:
    """An inline scalar constant: ``1f``, ``1``, ``1i64``, ``1f64``, ``1f16``, ``1i16``, ``True``."""
    dtype = array.dtype.name
    value = array.item()
    if dtype == "bool":
        return "True" if value else "False"
    if dtype.startswith("int"):
        return f"{value}{SCALAR_SUFFIX[dtype]}"
    narrow = {"float16": np.float16, "float32": np.float32, "float64": float}[dtype]
    return _exact_float(float(value), narrow) + SCALAR_SUFFIX[dtype]


def is_inline_scalar(array: np.ndarray) -> bool:
    """Whether a constant prints inline (rank 0, dtype in :data:`SCALAR_SUFFIX`) rather than in the metadata."""
    return array.ndim == 0 and array.dtype.name in SCALAR_SUFFIX


def local_name_candidate(name: str) -> tuple[str, bool]:
    """``(name, bare)``: the name to print for a local variable and whether it prints bare (``%x``) or quoted.

    TVM prefixes ``v`` to a name that does not start with a letter (``%v0``), so it cannot be read as a temporary.
    Names with characters outside identifiers print quoted (``%"conv1/W:0"``) to stay readable back.
    """
    if BARE_LOCAL.fullmatch(name):
        return name, True
    if BARE_LOCAL.fullmatch("v" + name):
        return "v" + name, True
    return name, False


def index_prefixes(name: str) -> list[str]:
    """The names ``%name`` could also be read as before tuple projections: ``a.0.1`` -> ``["a.0", "a"]``."""
    out = []
    while True:
        head, dot, tail = name.rpartition(".")
        if not dot or not _DIGITS.fullmatch(tail):
            return out
        out.append(head)
        name = head


_NUMBER_DTYPES = {"f": "float32", "f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8",
                  "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
                  "u64": "uint64", "i": "int32", "u": "uint32"}


def split_number(text: str) -> tuple[str, str]:
    """Split a numeric literal into its digits and its suffix: ``1e-05f`` -> ``("1e-05", "f")``."""
    match = re.fullmatch(r"(inf|nan|[0-9][0-9.eE+\-]*?)([fiu][0-9]*)?", text)
    if match is None:
        return text, ""
    return match.group(1), match.group(2) or ""


def number_value(text: str, negative=False):
    """Read a numeric literal as ``(python_value, dtype)``; dtype is None for an unsuffixed literal.

    Raises ValueError when the text is not a number or the suffix is unknown.
    """
    digits, suffix = split_number(text)
    dtype = None
    if suffix:
        if suffix not in _NUMBER_DTYPES:
            raise ValueError(f"unknown numeric suffix {suffix!r} (use f, f16, f64, i64, ...)")
        dtype = _NUMBER_DTYPES[suffix]
    is_float = dtype.startswith("float") if dtype else any(c in digits for c in ".eEn")
    value = float(digits) if is_float else int(digits)
    if negative:
        value = -value
    if dtype is not None and not dtype.startswith("float") and isinstance(value, float):
        raise ValueError(f"{text} is not an integer but has suffix {suffix!r}")
    return value, dtype


def literal_array(value, dtype) -> np.ndarray:
    """The rank-0 array of a literal in an expression: unsuffixed ints are int32 (int64 when too large), floats
    float32."""
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, float):
            dtype = "float32"
        else:
            dtype = "int32" if -(2**31) <= value < 2**31 else "int64"
    info = np.iinfo(dtype) if not dtype.startswith(("float", "bool")) else None
    if info is not None and not info.min <= value <= info.max:
        raise ValueError(f"{value} does not fit in {dtype}")
    if dtype.startswith("float") and math.isfinite(value) and abs(value) > float(np.finfo(dtype).max):
        raise ValueError(f"{value} does not fit in {dtype} (its largest value is {float(np.finfo(dtype).max):g})")
    return np.array(value, dtype=dtype)
