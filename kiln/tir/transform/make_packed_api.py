"""``tir.MakePackedAPI``: give a PrimFunc the packed calling convention of the runtime, with argument checks.

The convention (TVM's ``TVMBackendPackedCFunc``), which the C and LLVM code generators implement::

    int32_t name(void* args, int32_t* arg_type_ids, int32_t num_args,
                 void* out_ret_value, int32_t* out_ret_tcode, void* resource_handle);

* ``args`` is an array of ``num_args`` 8-byte values (TVM's ``TVMValue`` union: ``int64_t v_int64`` / ``double
  v_float64`` / ``void* v_handle``), ``arg_type_ids[i]`` says which member is set, with TVM's type codes:
  ``0`` int, ``1`` uint, ``2`` float, ``3`` opaque handle, ``4`` null, ``7`` DLTensor*, ``13`` NDArray handle
  (treated as a DLTensor*).
* A tensor argument is a pointer to a DLPack ``DLTensor``: ``{void* data; DLDevice device {int32 device_type, int32
  device_id}; int32 ndim; DLDataType dtype {uint8 code, uint8 bits, uint16 lanes}; int64* shape; int64* strides
  (NULL = compact row-major); uint64 byte_offset}``.
* The body reads them through ``tvm_struct_get(handle, index, kind)`` calls with TVM's field kinds: on a DLTensor*
  (index 0) ``1`` data, ``2`` shape, ``3`` strides, ``4`` ndim, ``5`` dtype code, ``6`` dtype bits, ``7`` dtype lanes,
  ``8`` byte_offset, ``9`` device_id, ``10`` device_type; on ``args`` (index i) ``12`` the i-th value itself, typed by
  the Call's dtype (``int64``, ``float64`` or ``handle``). Shapes and strides are read as ``int64`` buffers over those
  pointers; type codes as an ``int32`` buffer over ``arg_type_ids``.
* The function returns 0 on success. Each check is an ``AssertStmt``: a code generator emits it as ``if (!cond) {
  <record message>; return -1; }``, storing the message where the runtime can read it (a module-level
  ``const char* kiln_last_error`` read back through an exported ``const char* KilnGetLastError(void)`` in kiln's
  generated libraries). The runtime raises :class:`kiln.error.RuntimeArgumentError` with that message.

Checks, in argument order, each message starting with ``"<function>: "`` and naming the argument: the argument count;
for a tensor: its type code, non-NULL, ndim, dtype (code, bits, lanes), CPU device, every dimension of the shape
(a symbolic dimension is bound to the first argument that has it, later ones must agree), compact strides when the
strides pointer is not NULL, ``byte_offset == 0`` and ``data_alignment``-byte alignment of ``data``; for a scalar: its
type code. Then the buffer data handles, symbolic dimensions and scalar parameters are bound with ``LetStmt`` and the
original body runs. ``buffer_map`` becomes empty; ``calling_conv`` is ``CallingConv.C_PACKED_FUNC`` (1).
:func:`kiln.tir.evaluator.call_packed` runs such a function the way the runtime does.
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from ...ir.type import PrimType
from .. import dtype as _dt
from .. import expr as E
from .. import stmt as S
from ..buffer import decl_buffer
from ..function import CallingConv
from ..functor import StmtExprMutator
from ..intrin import call_intrin, if_then_else, isnullptr
from .function_pass import PrimFuncPass

K_ARR_DATA, K_ARR_SHAPE, K_ARR_STRIDES, K_ARR_NDIM = 1, 2, 3, 4
K_ARR_TYPE_CODE, K_ARR_TYPE_BITS, K_ARR_TYPE_LANES, K_ARR_BYTE_OFFSET = 5, 6, 7, 8
K_ARR_DEVICE_ID, K_ARR_DEVICE_TYPE, K_TVM_VALUE_CONTENT = 9, 10, 12
TYPE_INT, TYPE_UINT, TYPE_FLOAT, TYPE_HANDLE, TYPE_NULL, TYPE_DLTENSOR, TYPE_NDARRAY = 0, 1, 2, 3, 4, 7, 13
TYPE_BOOL = 15  # TVM's kTVMArgBool: a returned bool
DL_CODES = {"int": 0, "uint": 1, "float": 2, "bfloat": 4, "bool": 6}
KDL_CPU = 1


def struct_get(dtype, handle, index, kind):
    """``tvm_struct_get(handle, index, kind)`` read as ``dtype``."""
    return call_intrin(dtype, "tir.tvm_struct_get", handle, E.IntImm("int32", index), E.IntImm("int32", kind))


class _Builder:
    """Collects the prologue as (kind, ...) items, folded around the body at the end."""

    def __init__(self, name):
        self.name = name
        self.items = []
        self.bound: dict = {}  # id(var) -> description of where it was bound

    def let(self, var, value):
        self.items.append(("let", var, value))

    def check(self, cond, message):
        self.items.append(("assert", cond, f"{self.name}: {message}"))

    def stmt(self, stmt):
        self.items.append(("stmt", stmt))

    def wrap(self, body):
        for item in reversed(self.items):
            if item[0] == "let":
                body = S.LetStmt(item[1], item[2], body)
            elif item[0] == "assert":
                body = S.AssertStmt(item[1], E.StringImm(item[2]), body)
            else:
                body = S.stmt_seq(item[1], body)
        return body


def _i(v):
    return E.IntImm("int32", v)


def _tensor_checks(b, arg_name, index, handle, buf, args, codes):
    tcode = codes[index]
    b.check(E.Or(E.EQ(tcode, _i(TYPE_DLTENSOR)), E.EQ(tcode, _i(TYPE_NDARRAY))),
            f"argument {arg_name} (#{index}) must be a tensor (NDArray)")
    b.let(handle, struct_get("handle", args, index, K_TVM_VALUE_CONTENT))
    b.check(E.Not(isnullptr(handle)), f"argument {arg_name} is NULL")
    ndim = len(buf.shape)
    b.check(E.EQ(struct_get("int32", handle, 0, K_ARR_NDIM), _i(ndim)),
            f"argument {arg_name} must have {ndim} dimension{'s' if ndim != 1 else ''}")
    t = _dt.DataType.parse(buf.dtype)
    code, bits = DL_CODES[t.code], (8 if t.is_bool() else t.bits)
    b.check(E.And(E.And(E.EQ(struct_get("uint8", handle, 0, K_ARR_TYPE_CODE), E.IntImm("uint8", code)),
                        E.EQ(struct_get("uint8", handle, 0, K_ARR_TYPE_BITS), E.IntImm("uint8", bits))),
                  E.EQ(struct_get("uint16", handle, 0, K_ARR_TYPE_LANES), E.IntImm("uint16", t.lanes))),
            f"argument {arg_name} must have dtype {buf.dtype}")
    b.check(E.EQ(struct_get("int32", handle, 0, K_ARR_DEVICE_TYPE), _i(KDL_CPU)),
            f"argument {arg_name} must be on the CPU device")
    shape_var = E.Var(f"{arg_name}_shape", "handle")
    b.let(shape_var, struct_get("handle", handle, 0, K_ARR_SHAPE))
    shape = decl_buffer((ndim,), "int64", f"{arg_name}_shape", data=shape_var) if ndim else None
    for k, dim in enumerate(buf.shape):
        loaded = E.BufferLoad(shape, [_i(k)])
        wide = dim if dim.dtype == "int64" else E.Cast("int64", dim)  # compared in 64 bits: 2**32 + 8 is not 8
        if isinstance(dim, E.Var) and id(dim) not in b.bound:
            b.let(dim, loaded if dim.dtype == "int64" else E.Cast(dim.dtype, loaded))
            b.bound[id(dim)] = f"{arg_name}.shape[{k}]"
            if dim.dtype != "int64":
                b.check(E.EQ(wide, loaded), f"argument {arg_name}.shape[{k}] does not fit the {dim.dtype} of "
                        f"{dim.name_hint}")
        elif isinstance(dim, E.Var):
            bound = b.bound[id(dim)]
            b.check(E.EQ(wide, loaded), f"argument {arg_name}.shape[{k}] must equal {bound} ({dim.name_hint})")
        else:
            b.check(E.EQ(loaded, wide), f"argument {arg_name}.shape[{k}] must be {dim}")
    if ndim:
        strides_var = E.Var(f"{arg_name}_strides", "handle")
        b.let(strides_var, struct_get("handle", handle, 0, K_ARR_STRIDES))
        strides = decl_buffer((ndim,), "int64", f"{arg_name}_strides", data=strides_var)
        if buf.strides:
            _bind_strides(b, arg_name, buf, shape, strides, strides_var)
        else:
            _check_compact(b, arg_name, ndim, shape, strides, strides_var)
    _bind_offset(b, arg_name, handle, buf)
    b.let(buf.data, struct_get("handle", handle, 0, K_ARR_DATA))
    if buf.data_alignment > 1:
        b.check(E.EQ(E.Mod(E.Cast("uint64", buf.data), E.IntImm("uint64", buf.data_alignment)), E.IntImm("uint64", 0)),
                f"argument {arg_name} must be {buf.data_alignment}-byte aligned")


def _check_compact(b, arg_name, ndim, shape, strides, strides_var):
    """A buffer without strides is compact: a strides array, when given, must hold the row-major strides."""
    inner = S.Evaluate(_i(0))
    expected = E.IntImm("int64", 1)
    for k in reversed(range(ndim)):
        inner = S.AssertStmt(E.EQ(E.BufferLoad(strides, [_i(k)]), expected),
                             E.StringImm(f"{b.name}: argument {arg_name} must be a compact (C-contiguous) array"),
                             inner)
        expected = E.Mul(expected, E.BufferLoad(shape, [_i(k)]))
    b.stmt(S.IfThenElse(E.Not(isnullptr(strides_var)), inner))


def _bind_strides(b, arg_name, buf, shape, strides, strides_var):
    """A buffer with strides takes the array's (row-major ones when its strides pointer is NULL): a stride that is
    a variable is bound to it, any other is checked. An ``auto_broadcast`` buffer's stride is 0 along a dimension
    of extent 1, so one array broadcasts against a larger one (TVM's ArgBinder)."""
    compact = E.IntImm(buf.shape[-1].dtype, 1)
    is_null = isnullptr(strides_var)
    for k in reversed(range(len(buf.shape))):
        dim, stride = buf.shape[k], buf.strides[k]
        given = E.BufferLoad(strides, [_i(k)])
        given = given if stride.dtype == "int64" else E.Cast(stride.dtype, given)
        value = if_then_else(is_null, compact if compact.dtype == stride.dtype else E.Cast(stride.dtype, compact),
                             given)
        if buf.buffer_type == 2:
            value = if_then_else(E.EQ(dim, E.IntImm(dim.dtype, 1)), E.IntImm(stride.dtype, 0), value)
        if isinstance(stride, E.Var) and id(stride) not in b.bound:
            b.let(stride, value)
            b.bound[id(stride)] = f"{arg_name}.strides[{k}]"
        else:
            b.check(E.EQ(stride, value), f"argument {arg_name}.strides[{k}] must be {stride}")
        extent = E.BufferLoad(shape, [_i(k)])
        compact = E.Mul(compact, extent if compact.dtype == "int64" else E.Cast(compact.dtype, extent))


def _bind_offset(b, arg_name, handle, buf):
    """A buffer whose ``elem_offset`` is a variable takes the array's ``byte_offset`` in elements (a multiple of
    ``offset_factor``); any other requires the array's offset to equal it."""
    byte_offset = struct_get("uint64", handle, 0, K_ARR_BYTE_OFFSET)
    offset = buf.elem_offset
    t = _dt.DataType.parse(buf.dtype)
    size = max(1, (8 if t.is_bool() else t.bits) * max(t.lanes, 1) // 8)
    if isinstance(offset, E.Var) and id(offset) not in b.bound:
        b.let(offset, E.Cast(offset.dtype, E.FloorDiv(byte_offset, E.IntImm("uint64", size))))
        b.bound[id(offset)] = f"{arg_name}.elem_offset"
        if buf.offset_factor > 1:
            b.check(E.EQ(E.FloorMod(offset, E.IntImm(offset.dtype, buf.offset_factor)), E.IntImm(offset.dtype, 0)),
                    f"argument {arg_name} must have an element offset that is a multiple of {buf.offset_factor}")
    else:
        expected = E.Mul(E.Cast("uint64", offset), E.IntImm("uint64", size))
        b.check(E.EQ(byte_offset, expected), f"argument {arg_name} must have byte_offset "
                f"{'0' if isinstance(offset, E.IntImm) and offset.value == 0 else f'{offset} * {size}'}")


def _scalar_binding(b, arg_name, index, param, args, codes):
    t = _dt.DataType.parse(param.dtype)
    tcode = codes[index]
    if t.is_handle():
        b.check(E.Or(E.Or(E.EQ(tcode, _i(TYPE_HANDLE)), E.EQ(tcode, _i(TYPE_NULL))),
                     E.Or(E.EQ(tcode, _i(TYPE_DLTENSOR)), E.EQ(tcode, _i(TYPE_NDARRAY)))),
                f"argument {arg_name} (#{index}) must be a handle")
        b.let(param, struct_get("handle", args, index, K_TVM_VALUE_CONTENT))
    elif t.is_float():
        b.check(E.Or(E.EQ(tcode, _i(TYPE_FLOAT)), E.EQ(tcode, _i(TYPE_INT))),
                f"argument {arg_name} (#{index}) must be a float")
        raw_f = struct_get("float64", args, index, K_TVM_VALUE_CONTENT)
        raw_i = E.Cast("float64", struct_get("int64", args, index, K_TVM_VALUE_CONTENT))
        value = E.Select(E.EQ(tcode, _i(TYPE_FLOAT)), raw_f, raw_i)
        b.let(param, value if param.dtype == "float64" else E.Cast(param.dtype, value))
    else:
        b.check(E.Or(E.EQ(tcode, _i(TYPE_INT)), E.EQ(tcode, _i(TYPE_UINT))),
                f"argument {arg_name} (#{index}) must be an integer")
        raw = struct_get("int64", args, index, K_TVM_VALUE_CONTENT)
        b.let(param, raw if param.dtype == "int64" else E.Cast(param.dtype, raw))


def make_packed_api(func):
    """Return ``func`` in the packed calling convention (see the module docstring)."""
    if func.attrs.get("calling_conv", 0) == CallingConv.C_PACKED_FUNC:
        return func
    name = str(func.attrs.get("global_symbol", "main"))
    args = E.Var("args", "handle")
    type_ids = E.Var("arg_type_ids", "handle")
    num_args = E.Var("num_args", "int32")
    out_value, out_code, resource = E.Var("out_ret_value", "handle"), E.Var("out_ret_tcode", "handle"), \
        E.Var("resource_handle", "handle")
    n = len(func.params)
    b = _Builder(name)
    names = [func.buffer_map[p].name if p in func.buffer_map else p.name_hint for p in func.params]
    b.check(E.EQ(num_args, _i(n)), f"expected {n} argument{'s' if n != 1 else ''} ({', '.join(names)})")
    codes_buf = decl_buffer((max(n, 1),), "int32", "arg_type_ids", data=type_ids)
    codes = [E.BufferLoad(codes_buf, [_i(i)]) for i in range(n)]
    # scalars first, as TVM binds them: a buffer's shape may be an expression of a scalar parameter listed after
    # it (B of shape (m, n // x) with x last), and a dimension that is also a parameter is checked against it
    for i, param in enumerate(func.params):
        if param not in func.buffer_map:
            _scalar_binding(b, names[i], i, param, args, codes)
            b.bound[id(param)] = f"argument {names[i]}"
    for i, param in enumerate(func.params):
        buf = func.buffer_map.get(param)
        if buf is not None:
            _tensor_checks(b, names[i], i, param, buf, args, codes)
    body = b.wrap(_ReturnRewriter(out_value, out_code).visit_stmt(func.body))
    attrs = dict(func.attrs.items())
    attrs["calling_conv"] = int(CallingConv.C_PACKED_FUNC)
    attrs.setdefault("global_symbol", name)
    return type(func)((args, type_ids, num_args, out_value, out_code, resource), body, PrimType("int32"), {}, attrs)


class _ReturnRewriter(StmtExprMutator):
    """``T.ret(v)`` of a function returning a value becomes: store ``v`` (widened to 64 bits) in the caller's
    ``out_ret_value``, its type code in ``out_ret_tcode``, and return 0 (success), as TVM's MakePackedAPI does."""

    def __init__(self, out_value, out_code):
        self.out_value = out_value
        self.codes = decl_buffer((1,), "int32", "out_ret_tcode", data=out_code)

    def visit_evaluate(self, op):
        call = op.value
        if not (isinstance(call, E.Call) and call.op.name == "tir.ret" and call.args):
            return op
        value = call.args[0]
        t = _dt.DataType.parse(value.dtype)
        if t.is_float():
            wide, code = "float64", TYPE_FLOAT
        elif t.is_handle():
            wide, code = "handle", TYPE_HANDLE
        else:
            wide, code = "int64", TYPE_BOOL if t.is_bool() else TYPE_INT
        wide_value = value if value.dtype == wide else E.Cast(wide, value)
        return S.stmt_seq(
            S.Evaluate(call_intrin("int32", "tir.tvm_struct_set", self.out_value, _i(0),
                                   E.IntImm("int32", K_TVM_VALUE_CONTENT), wide_value)),
            S.BufferStore(self.codes, _i(code), [_i(0)]),
            S.Evaluate(call_intrin("int32", "tir.ret", _i(0))))


@register_pass("tir.MakePackedAPI")
@dataclass(frozen=True)
class MakePackedAPI(PrimFuncPass):
    """Give every PrimFunc the packed calling convention with argument checks (TVM's
    ``tir.transform.MakePackedAPI``)."""

    info = PassInfo(0, "tir.MakePackedAPI")

    def transform_function(self, func, mod, ctx):
        return make_packed_api(func)
