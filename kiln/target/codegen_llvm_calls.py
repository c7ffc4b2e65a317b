"""Intrinsic calls in the LLVM backend: math intrinsics, libm functions, the packed-API struct accessors,
``if_then_else`` and external calls (a mixin of :class:`kiln.target.codegen_llvm.LLVMGenerator`).

A TIR intrinsic with an LLVM intrinsic (:data:`kiln.target.llvm_types.LLVM_INTRINSICS`) becomes a call of the
overloaded intrinsic at the operand's type (``llvm.exp.v16f32``), which LLVM expands or lowers to libm itself. Other
math functions call libm (``tanhf``), lane by lane on vectors. ``if_then_else`` with a scalar condition branches, so
the untaken side (typically a guarded out-of-bounds load) is never executed; with a vector condition it is a select.
"""

import llvmlite.ir as ir

from ..error import CodegenError
from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir.dtype_semantics import compute_dtype
from . import llvm_types as T
from .codegen_common import flat_offset


class CallLowering:
    """``visit_call`` and its helpers."""

    def call_intrinsic(self, name, *args):
        """Call the overloaded LLVM intrinsic ``name`` at the type of the first argument."""
        ty = args[0].type
        fn = self.declare(f"{name}.{T.type_suffix(ty)}", ty, [a.type for a in args])
        return self.builder.call(fn, list(args))

    def visit_call(self, e):
        name = e.op.name
        handler = _CALL_HANDLERS.get(name)
        if handler is not None:
            return handler(self, e)
        args = [self.visit_expr(a) for a in e.args]
        b = self.builder
        if name in T.LLVM_INTRINSICS:
            return self.call_intrinsic(T.LLVM_INTRINSICS[name], *args)
        if name in T.LIBM_FUNCTIONS:
            return self.call_libm(T.LIBM_FUNCTIONS[name], e.dtype, args)
        if name in _BITWISE:
            return getattr(b, _BITWISE[name])(*args)
        if name == "tir.shift_right":
            return b.ashr(*args) if _dt.DataType.parse(e.dtype).is_int() else b.lshr(*args)
        if name == "tir.bitwise_not":
            return b.not_(args[0])
        raise CodegenError(f"LLVM codegen: no LLVM form for the intrinsic {name} (dtype {e.dtype})")

    def call_libm(self, fname, dtype, args):
        """Call the libm function ``fname`` (``f`` suffix for float32), per lane on vectors; float16 calls the
        float32 function and rounds its result (:mod:`kiln.tir.dtype_semantics`)."""
        t = _dt.DataType.parse(dtype)
        wide = compute_dtype(dtype)
        if wide != dtype:
            widened = [self.cast(a, dtype, wide) if a.type == T.llvm_type(dtype) else a for a in args]
            return self.cast(self.call_libm(fname, wide, widened), wide, dtype)
        if t.bits not in (32, 64) or not t.is_float():
            raise CodegenError(f"LLVM codegen: {fname} is not available for {dtype}")
        elem = T.scalar_type(str(t.element_of()))
        fn = self.declare(fname + ("f" if t.bits == 32 else ""), elem, [elem] * len(args))
        b = self.builder
        if t.lanes == 1:
            return b.call(fn, args)
        out = ir.Constant(T.llvm_type(dtype), ir.Undefined)
        for k in range(t.lanes):
            lane = T.constant("int32", k)
            lane_args = [b.extract_element(a, lane) if isinstance(a.type, ir.VectorType) else a for a in args]
            out = b.insert_element(out, b.call(fn, lane_args), lane)
        return out


def _if_then_else(gen, e):
    cond_expr, t_expr, f_expr = e.args
    if _dt.lanes(cond_expr.dtype) > 1:
        return gen.builder.select(gen.visit_expr(cond_expr), gen.visit_expr(t_expr), gen.visit_expr(f_expr))
    fn, b = gen.state.function, gen.builder
    cond = gen.visit_expr(cond_expr)
    then_block, else_block, done = (fn.append_basic_block(n) for n in ("ite_then", "ite_else", "ite_end"))
    b.cbranch(cond, then_block, else_block)
    b.position_at_end(then_block)
    with gen.nested_region():
        t_value = gen.visit_expr(t_expr)
    t_end = b.block
    b.branch(done)
    b.position_at_end(else_block)
    with gen.nested_region():
        f_value = gen.visit_expr(f_expr)
    f_end = b.block
    b.branch(done)
    b.position_at_end(done)
    phi = b.phi(t_value.type)
    phi.add_incoming(t_value, t_end)
    phi.add_incoming(f_value, f_end)
    return phi


def _struct_field_pointer(gen, e):
    """The pointer to a field of a struct (a packed argument, a DLTensor) and the field's type. Address arithmetic
    only, so emitted once per handle, index and field where the code sees it: a prologue reads every field of each
    tensor argument."""
    handle, index, kind = e.args[:3]
    k = int(kind.value)
    b = gen.builder
    keys = (gen.value_key(handle), gen.value_key(index))

    def reuse(what, make):
        return gen.reuse((*what, *keys), make) if None not in keys else make()

    def element(pointer_type):
        """The address of element ``index`` of ``handle`` read as an array of ``pointer_type`` (emitted only when
        no reusable address exists)."""
        i = T.constant("int64", index.value) if isinstance(index, E.IntImm) else \
            gen.cast(gen.visit_expr(index), index.dtype, "int64")
        return b.gep(b.bitcast(gen.visit_expr(handle), pointer_type), [i])

    if k == T.TVM_VALUE_CONTENT:
        value_dtype = e.args[3].dtype if len(e.args) > 3 else e.dtype
        t = _dt.DataType.parse(value_dtype)
        slot = T.I8P if t.is_handle() else ir.DoubleType() if t.is_float() else T.I64
        return reuse(("value", str(slot)), lambda: element(slot.as_pointer())), slot
    tensor = reuse(("tensor",), lambda: element(T.DLTENSOR.as_pointer()))
    if k == 0:
        return tensor, None
    path = T.ARRAY_FIELDS.get(k)
    if path is None:
        raise CodegenError(f"LLVM codegen: tvm_struct_get of unknown field kind {k}")
    ptr = reuse(("field", k), lambda: b.gep(tensor, [T.constant("int32", 0), *(T.constant("int32", p) for p in path)]))
    return ptr, ptr.type.pointee


def _struct_get(gen, e):
    ptr, slot = _struct_field_pointer(gen, e)
    b = gen.builder
    if slot is None:  # the address of the DLTensor itself
        return b.bitcast(ptr, T.I8P)
    value = b.load(ptr)
    if slot == T.I8P or isinstance(slot, ir.PointerType):
        return b.bitcast(value, T.I8P)
    src = "float64" if isinstance(slot, ir.DoubleType) else f"int{slot.width}"
    if src.startswith("int") and _dt.DataType.parse(e.dtype).is_integer() and slot.width < 32:
        src = f"u{src}"  # the DLDataType members are unsigned
    return gen.cast(value, src, e.dtype)


def _struct_set(gen, e):
    ptr, slot = _struct_field_pointer(gen, e)
    value_expr = e.args[3]
    value = gen.visit_expr(value_expr)
    b = gen.builder
    if slot == T.I8P or isinstance(slot, ir.PointerType):
        value = b.bitcast(value, slot)
    else:
        dst = "float64" if isinstance(slot, ir.DoubleType) else f"int{slot.width}"
        value = gen.cast(value, value_expr.dtype, dst)
    b.store(value, ptr)
    return T.constant("int32", 0)


def _extern(gen, e):
    fname = e.args[0].value
    args = [gen.visit_expr(a) for a in e.args[1:]]
    ret = ir.VoidType() if e.dtype == "void" else T.llvm_type(e.dtype)
    fn = gen.declare(fname, ret, [a.type for a in args])
    return gen.builder.call(fn, args)


def _llvm_intrin(gen, e):
    """``call_llvm_pure_intrin(dtype, name, *args)``: the intrinsic declared at the argument types and ``dtype``."""
    args = [gen.visit_expr(a) for a in e.args[1:]]
    fn = gen.declare(e.args[0].value, T.llvm_type(e.dtype), [a.type for a in args])
    return gen.builder.call(fn, args)


def _reinterpret(gen, e):
    value = gen.visit_expr(e.args[0])
    return gen.builder.bitcast(value, T.llvm_type(e.dtype))


def _address_of(gen, e):
    load = e.args[0]
    if not isinstance(load, E.BufferLoad):
        raise CodegenError("LLVM codegen: address_of needs a buffer load")
    index = gen.visit_expr(flat_offset(load.buffer, load.indices))
    return gen.builder.bitcast(gen.builder.gep(gen.element_pointer(load.buffer), [index]), T.I8P)


def _isnullptr(gen, e):
    value = gen.visit_expr(e.args[0])
    return gen.builder.icmp_unsigned("==", value, ir.Constant(value.type, None))


def _popcount(gen, e):
    return gen.call_intrinsic("llvm.ctpop", gen.visit_expr(e.args[0]))


def _clz(gen, e):
    value = gen.visit_expr(e.args[0])
    fn = gen.declare(f"llvm.ctlz.{T.type_suffix(value.type)}", value.type, [value.type, T.I1])
    return gen.cast(gen.builder.call(fn, [value, ir.Constant(T.I1, 0)]), e.args[0].dtype, e.dtype)


def _ldexp(gen, e):
    """libm's ``ldexp``/``ldexpf`` (float, int) per lane; float16 runs in float32."""
    dtype, wide = e.dtype, compute_dtype(e.dtype)
    t = _dt.DataType.parse(wide)
    x = gen.cast(gen.visit_expr(e.args[0]), dtype, wide)
    exponent = gen.cast(gen.visit_expr(e.args[1]), e.args[1].dtype, _dt.with_lanes("int32", t.lanes))
    elem = T.scalar_type(str(t.element_of()))
    fn = gen.declare("ldexp" + ("f" if t.bits == 32 else ""), elem, [elem, T.I32])
    b = gen.builder
    if t.lanes == 1:
        out = b.call(fn, [x, exponent])
    else:
        out = ir.Constant(T.llvm_type(wide), ir.Undefined)
        for k in range(t.lanes):
            lane = T.constant("int32", k)
            out = b.insert_element(out, b.call(fn, [b.extract_element(x, lane), b.extract_element(exponent, lane)]),
                                   lane)
    return gen.cast(out, wide, dtype)


_BITWISE = {"tir.bitwise_and": "and_", "tir.bitwise_or": "or_", "tir.bitwise_xor": "xor", "tir.shift_left": "shl"}
_CALL_HANDLERS = {
    "tir.if_then_else": _if_then_else,
    "tir.tvm_struct_get": _struct_get,
    "tir.tvm_struct_set": _struct_set,
    "tir.call_extern": _extern,
    "tir.call_pure_extern": _extern,
    "tir.reinterpret": _reinterpret,
    "tir.call_llvm_intrin": _llvm_intrin,
    "tir.call_llvm_pure_intrin": _llvm_intrin,
    "tir.address_of": _address_of,
    "tir.isnullptr": _isnullptr,
    "tir.likely": lambda gen, e: gen.visit_expr(e.args[0]),
    "tir.popcount": _popcount,
    "tir.clz": _clz,
    "tir.ldexp": _ldexp,
    "tir.assume": lambda gen, e: T.constant("int32", 0),
}
