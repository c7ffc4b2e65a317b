"""Constants and intrinsic calls in the C backend: literals of every dtype, and the handlers of the intrinsics that
need more than a function call (``if_then_else``, the packed-API struct accessors, ``reinterpret``, external calls).

Handlers take the generator and the ``Call`` and return C expression text; :data:`CALLS` maps intrinsic names to them.
"""

import math

from ..error import CodegenError
from ..tir import dtype as _dt
from ..tir import expr as E
from .codegen_c_helpers import scalar_ctype
from .codegen_common import flat_offset

# TVM's TVMStructFieldKind -> DLTensor member
_ARRAY_FIELDS = {1: "data", 2: "shape", 3: "strides", 4: "ndim", 5: "dtype.code", 6: "dtype.bits", 7: "dtype.lanes",
                 8: "byte_offset", 9: "device.device_id", 10: "device.device_type"}
_TVM_VALUE_CONTENT = 12

def libm_name(name, t) -> str:
    if t.bits == 32:
        return f"{name}f"
    if t.bits == 64:
        return name
    raise CodegenError(f"C codegen: {name} is not available for {t}")


def int_literal(value: int, dtype: str) -> str:
    """A C literal of an integer (or bool) constant of ``dtype``."""
    t = _dt.DataType.parse(dtype)
    if t.is_bool():
        return "true" if value else "false"
    if t.code == "int" and t.bits == 64 or t.code == "int" and value == t.min_value():
        text = f"INT64_C({value})" if value != t.min_value() else f"(INT64_C({value + 1}) - 1)"
        return text if t.bits == 64 else f"(({scalar_ctype(dtype)}){text})"
    if t.code == "uint":
        suffix = "ULL" if t.bits == 64 else "U"
        return f"(({scalar_ctype(dtype)}){value}{suffix})" if t.bits < 32 else f"{value}{suffix}"
    text = str(value) if value >= 0 else f"({value})"
    return text if t.bits == 32 else f"(({scalar_ctype(dtype)}){text})"


def float_literal(value: float, dtype: str) -> str:
    """A C literal of a float constant of ``dtype`` (exact: float32 printed with 9 significant digits)."""
    t = _dt.DataType.parse(dtype)
    ctype = scalar_ctype(dtype)
    if math.isnan(value):
        return f"(({ctype})NAN)"
    if math.isinf(value):
        return f"(({ctype}){'-' if value < 0 else ''}INFINITY)"
    if t.bits == 64:
        text = repr(value)
        return text if value >= 0 else f"({text})"
    text = f"{value:.9g}"
    if "e" not in text and "." not in text:
        text += ".0"
    text += "f"
    if t.bits == 16:
        text = f"(({ctype}){text})"
    return text if value >= 0 else f"({text})"


def _call_if_then_else(gen, e):
    c, t, f = (gen.visit_expr(a) for a in e.args)
    if _dt.lanes(e.dtype) > 1:
        if _dt.lanes(e.args[0].dtype) == 1:  # both sides in the one vector type (loads have aligned variants)
            vtype = gen.ctype(e.dtype)
            return f"({c} ? ({vtype})({t}) : ({vtype})({f}))"
        return gen.helpers.select(_dt.DataType.parse(e.dtype), c, t, f)
    return f"({c} ? {t} : {f})"


def _call_struct_get(gen, e):
    handle, index, kind = e.args
    h, i, k = gen.visit_expr(handle), gen.visit_expr(index), int(kind.value)
    if k == _TVM_VALUE_CONTENT:
        t = _dt.DataType.parse(e.dtype)
        member = "v_handle" if t.is_handle() else "v_float64" if t.is_float() else "v_int64"
        value = f"(((TVMValue*)({h}))[{i}].{member})"
        return value if t.is_handle() else f"(({gen.ctype(e.dtype)}){value})"
    if k == 0:
        return f"((void*)&((DLTensor*)({h}))[{i}])"
    member = _ARRAY_FIELDS.get(k)
    if member is None:
        raise CodegenError(f"C codegen: tvm_struct_get of unknown field kind {k}")
    value = f"(((DLTensor*)({h}))[{i}].{member})"
    return value if e.dtype == "handle" else f"(({gen.ctype(e.dtype)}){value})"


def _call_reinterpret(gen, e):
    value = gen.visit_expr(e.args[0])
    src, dst = e.args[0].dtype, e.dtype
    if _dt.lanes(dst) > 1:
        return f"(({gen.ctype(dst)})({value}))"
    return (f"({{ {gen.ctype(src)} kiln_in_ = {value}; {gen.ctype(dst)} kiln_out_; "
            f"memcpy(&kiln_out_, &kiln_in_, sizeof(kiln_out_)); kiln_out_; }})")


def _call_extern(gen, e):
    fname = e.args[0].value
    args = [gen.visit_expr(a) for a in e.args[1:]]
    if fname not in gen.math_functions.values() and fname.rstrip("f") not in gen.math_functions.values():
        types = ", ".join(gen.ctype(a.dtype) for a in e.args[1:]) or "void"
        ret = "void" if e.dtype == "void" else gen.ctype(e.dtype)
        gen.prototypes.setdefault(f"extern:{fname}", f"extern {ret} {fname}({types});")
    return f"{fname}({', '.join(args)})"


def _call_address_of(gen, e):
    load = e.args[0]
    if not isinstance(load, E.BufferLoad):
        raise CodegenError("C codegen: address_of needs a buffer load")
    return f"(&{gen.pointer(load.buffer)}[{gen.visit_expr(flat_offset(load.buffer, load.indices))}])"


def _call_struct_set(gen, e):
    handle, index, kind, value = e.args
    h, i, v, k = gen.visit_expr(handle), gen.visit_expr(index), gen.visit_expr(value), int(kind.value)
    if k == _TVM_VALUE_CONTENT:
        t = _dt.DataType.parse(value.dtype)
        member = "v_handle" if t.is_handle() else "v_float64" if t.is_float() else "v_int64"
        return f"((((TVMValue*)({h}))[{i}].{member} = {v}), 0)"
    member = _ARRAY_FIELDS.get(k)
    if member is None:
        raise CodegenError(f"C codegen: tvm_struct_set of unknown field kind {k}")
    return f"((((DLTensor*)({h}))[{i}].{member} = {v}), 0)"


CALLS = {
    "tir.if_then_else": _call_if_then_else,
    "tir.tvm_struct_get": _call_struct_get,
    "tir.tvm_struct_set": _call_struct_set,
    "tir.isnullptr": lambda gen, e: f"({gen.visit_expr(e.args[0])} == NULL)",
    "tir.reinterpret": _call_reinterpret,
    "tir.call_extern": _call_extern,
    "tir.call_pure_extern": _call_extern,
    "tir.likely": lambda gen, e: f"__builtin_expect(!!({gen.visit_expr(e.args[0])}), 1)",
    "tir.address_of": _call_address_of,
    "tir.popcount": lambda gen, e: gen.helpers.popcount(_dt.DataType.parse(e.dtype), gen.visit_expr(e.args[0])),
    "tir.ret": lambda gen, e: gen.visit_expr(e.args[0]),
    "tir.assume": lambda gen, e: "0",
}
