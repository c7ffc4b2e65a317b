"""LLVM types, constants and intrinsic tables for the LLVM backend (llvmlite's ``ir`` layer).

TIR dtypes map to LLVM types one to one (``float32x16`` -> ``<16 x float>``, ``bool`` -> ``i1``, ``handle`` ->
``i8*``); in memory a bool is a byte. The runtime structs the packed calling convention reads (DLPack's
``DLTensor``, TVM's ``TVMValue``) are declared here with their field indices, and :data:`LLVM_INTRINSICS` lists
the TIR intrinsics with an LLVM intrinsic; other math functions are called from libm (lane by lane on vectors).
"""

import llvmlite.ir as ir

from ..error import CodegenError
from ..tir import dtype as _dt
from ..tir.intrin import MATH_INTRINSICS
from .codegen_common import alignment_of, elem_bytes  # noqa: F401  (re-exported for the generator)

I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
I8P = I8.as_pointer()
DLDEVICE = ir.LiteralStructType([I32, I32])
DLDATATYPE = ir.LiteralStructType([I8, I8, I16])
DLTENSOR = ir.LiteralStructType([I8P, DLDEVICE, I32, DLDATATYPE, I64.as_pointer(), I64.as_pointer(), I64])
# TVM's TVMStructFieldKind -> GEP path inside DLTensor
ARRAY_FIELDS = {1: (0,), 2: (4,), 3: (5,), 4: (2,), 5: (3, 0), 6: (3, 1), 7: (3, 2), 8: (6,), 9: (1, 1), 10: (1, 0)}
TVM_VALUE_CONTENT = 12

LLVM_INTRINSICS = {op: r.llvm for op, r in MATH_INTRINSICS.items() if r.llvm}
"""TIR intrinsic -> LLVM intrinsic (overloaded on the operand type), from the intrinsics' records."""

LIBM_FUNCTIONS = {op: r.libm for op, r in MATH_INTRINSICS.items() if r.libm and not r.llvm and r.name != "ldexp"}
"""TIR intrinsic -> libm function (float64 name; float32 adds "f") where LLVM has no intrinsic (not ``ldexp``:
these calls pass float operands only, and its exponent is an integer)."""

FLOAT_CMP = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def scalar_type(dtype) -> ir.Type:
    t = _dt.DataType.parse(dtype)
    if t.is_handle():
        return I8P
    if t.is_bool():
        return I1
    if t.is_integer():
        return ir.IntType(t.bits)
    if t.code == "float":
        return {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}[t.bits]
    raise CodegenError(f"LLVM codegen: no LLVM type for dtype {dtype}")


def llvm_type(dtype) -> ir.Type:
    """The LLVM type of a value of ``dtype``."""
    t = _dt.DataType.parse(dtype)
    elem = scalar_type(str(t.element_of()))
    return ir.VectorType(elem, t.lanes) if t.lanes > 1 else elem


def memory_type(dtype) -> ir.Type:
    """The LLVM type of one element of ``dtype`` in memory (a bool is a byte)."""
    t = _dt.DataType.parse(dtype).element_of()
    return I8 if t.is_bool() else scalar_type(str(t))


def type_suffix(ty) -> str:
    """The overload suffix of an intrinsic name (``f32``, ``v16f32``)."""
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{type_suffix(ty.element)}"
    if isinstance(ty, ir.FloatType):
        return "f32"
    if isinstance(ty, ir.DoubleType):
        return "f64"
    if isinstance(ty, ir.HalfType):
        return "f16"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    raise CodegenError(f"LLVM codegen: no intrinsic suffix for {ty}")


def constant(dtype, value) -> ir.Constant:
    """An LLVM constant of scalar ``dtype``."""
    t = _dt.DataType.parse(dtype)
    ty = scalar_type(dtype)
    if t.is_float():
        return ir.Constant(ty, float(value))
    if t.is_bool():
        return ir.Constant(I1, 1 if value else 0)
    return ir.Constant(ty, int(value) & ((1 << t.bits) - 1) if t.is_uint() else int(value))


def splat(ty, value) -> ir.Constant:
    """A constant vector of ``ty`` (a VectorType) holding ``value`` in every lane."""
    return ir.Constant(ty, [ir.Constant(ty.element, value)] * ty.count)
