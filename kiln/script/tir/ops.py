"""What ``T.<name>`` means in TVMScript for TIR (TVM's ``tvm.script.ir_builder.tir.ir``), except blocks.

Expression builders return TIR expressions and can be called outside a parsed function too (``T.int32(3)``,
``T.max(a, b)``); the ones that open a scope (``T.serial``, ``T.allocate``, ``T.attr`` ...) return a frame that the
parser enters (see :mod:`.frames`); ``T.func_attr`` and ``T.match_buffer`` record into the function being parsed.
"""

from ...error import TIRError
from ...ir.type import PrimType
from ...tir import expr as E
from ...tir import op as _op
from ...tir import stmt as S
from ...tir.buffer import Buffer as _Buffer
from ...tir.buffer import decl_buffer as _decl_buffer
from ...tir.expr_reduce import IterVar, IterVarType, Range
from . import frames as F


class DType:
    """A dtype name usable three ways: ``T.int32(3)`` (a constant or cast), ``x = T.int32()`` (a new variable) and
    ``n: T.int32`` (an annotation)."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.__name__ = dtype

    def __call__(self, value=None, is_size_var=False):
        if value is None:
            cls = E.SizeVar if is_size_var else E.Var
            return cls(F.take_name("v"), self.dtype)
        if isinstance(value, E.PrimExpr):
            return value if value.dtype == self.dtype else _op.cast(value, self.dtype)
        if isinstance(value, str):
            value = float(value)  # "inf", "nan", "-inf": how the printer writes non-finite constants
        return _op.const(value, self.dtype)

    def __repr__(self):
        return f"T.{self.dtype}"


def _dtype_names():
    names = ["bool", "handle"]
    for code, widths in (("int", (8, 16, 32, 64)), ("uint", (8, 16, 32, 64)), ("float", (16, 32, 64)),
                         ("bfloat", (16,))):
        for bits in widths:
            names.append(f"{code}{bits}")
            names.extend(f"{code}{bits}x{lanes}" for lanes in (2, 4, 8, 16, 32, 64))
    return names


DTYPES = {name: DType(name) for name in _dtype_names() if name != "handle"}
globals().update(DTYPES)


class meta_var:  # noqa: N801  (TVM's name)
    """A Python value bound by name as it is (``n = T.meta_var(100)``), never as a TIR let binding."""

    def __init__(self, value):
        self.value = value


def handle(dtype=None, storage_scope="global", is_size_var=False):
    """A handle variable: ``a: T.handle`` (a parameter) or ``T.handle("float32", "global")`` (a typed pointer)."""
    ann = E.PointerType(PrimType(dtype), storage_scope) if dtype not in (None, "void") else None
    return E.Var(F.take_name("handle"), ann or "handle")


def _shape(shape):
    if isinstance(shape, E.PrimExpr | int):
        return (shape,)
    return tuple(shape)


def _make_buffer(name, shape, dtype, data, strides, elem_offset, scope, align, offset_factor, buffer_type,
                 axis_separators):
    shape = _shape(shape)
    if isinstance(data, E.Var) and data.dtype == "handle" and not isinstance(data.type_annotation, E.PointerType):
        data = E.Var(data.name_hint, E.PointerType(PrimType(dtype), scope or "global"))
    return _decl_buffer(shape, dtype, name, data, strides, elem_offset, scope, align, offset_factor,
                        "auto_broadcast" if buffer_type == "auto" else buffer_type, axis_separators)


def Buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global", align=0,  # noqa: N802
           offset_factor=0, buffer_type="", axis_separators=None):
    """A buffer: the annotation of a buffer parameter, or a view of existing memory (``data=``) in the body."""
    return _make_buffer(F.take_name("buffer"), shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                        buffer_type, axis_separators)


def match_buffer(param, shape=None, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
                 align=-1, offset_factor=0, buffer_type="default", axis_separators=None):
    """Bind a handle parameter to a buffer (``A = T.match_buffer(a, (128,), "float32")``): an entry of the
    function's buffer map. Inside a block, ``param`` may be a buffer region (see ``T.block``)."""
    name = F.take_name("buffer")
    if shape is None and hasattr(param, "region"):
        shape = [r.extent for r in param.region]
    buf = _make_buffer(name, shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                       "" if buffer_type == "default" else buffer_type, axis_separators)
    if isinstance(param, E.Var):
        func = F.current(F.PrimFuncFrame, "T.match_buffer of a parameter")
        if not any(p is param for p in func.params):
            raise TIRError(f"T.match_buffer: {param.name_hint} is not a parameter of {func.name}")
        func.buffer_map[param] = buf
        return buf
    from .block import record_match_buffer

    return record_match_buffer(buf, param)


def func_attr(attrs):
    """Set attributes of the function being parsed (``T.func_attr({"global_symbol": "main"})``)."""
    F.current(F.PrimFuncFrame, "T.func_attr").attrs.update(attrs)


def func_name(name):
    """Name the function being parsed."""
    F.current(F.PrimFuncFrame, "T.func_name").name = name


def func_ret(ret_type):
    """Set the return type of the function being parsed."""
    F.current(F.PrimFuncFrame, "T.func_ret").ret_type = ret_type


# ---- loops
def serial(start, stop=None, *, annotations=None):
    """A sequential loop over ``[start, stop)`` (or ``[0, start)``)."""
    return F.ForFrame(S.ForKind.SERIAL, start, stop, annotations=annotations)


def parallel(start, stop=None, *, annotations=None):
    """A loop whose iterations run in parallel."""
    return F.ForFrame(S.ForKind.PARALLEL, start, stop, annotations=annotations)


def vectorized(start, stop=None, *, annotations=None):
    """A loop to vectorize."""
    return F.ForFrame(S.ForKind.VECTORIZED, start, stop, annotations=annotations)


def unroll(start, stop=None, *, annotations=None):
    """A loop to unroll."""
    return F.ForFrame(S.ForKind.UNROLLED, start, stop, annotations=annotations)


def thread_binding(start, stop=None, thread=None, *, annotations=None):
    """A loop bound to a GPU thread axis (``thread="threadIdx.x"``)."""
    if thread is None:
        if not isinstance(stop, str):
            raise TIRError("T.thread_binding needs thread=")
        start, stop, thread = 0, start, stop
    return F.ForFrame(S.ForKind.THREAD_BINDING, start, stop, thread=thread, annotations=annotations)


def grid(*extents):
    """Nested serial loops over ``extents`` (``for i, j in T.grid(4, 8)``)."""
    return F.GridFrame(extents)


# ---- scopes
def allocate(extents, dtype, scope="global", condition=True, annotations=None):
    """Allocate memory for the rest of the body; the bound name is the data handle."""
    return F.AllocateFrame(tuple(extents), dtype, scope, condition, annotations)


def decl_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global", align=0,
                offset_factor=0, buffer_type="", axis_separators=None):
    """Declare a buffer for the rest of the body; without ``data`` its memory is allocated too."""
    def make(name):
        return _make_buffer(name, shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                            buffer_type, axis_separators)

    return F.DeclBufferFrame(make, data is None)


def let(var=None, value=None, body=None):
    """``T.let(v, value, body)``: a Let expression (with a body), else a LetStmt scope binding ``var``."""
    if body is not None:
        return E.Let(var, value, body)
    if value is None:
        var, value = None, var
    return F.LetFrame(value, var)


def LetStmt(value, type_annotation=None, *, var=None):  # noqa: N802
    """A LetStmt scope binding a new variable to ``value``."""
    return F.LetFrame(value, var)


def Let(var, value, body):  # noqa: N802
    """The Let expression."""
    return E.Let(var, value, body)


def attr(node, attr_key, value):
    """An AttrStmt over the body (``with T.attr(node, "pragma_x", 1):``)."""
    if isinstance(value, str):
        value = E.StringImm(value)
    return F.AttrFrame(node, attr_key, value)


def env_thread(thread_tag, dtype="int32"):
    """The iteration variable of a GPU thread axis (``threadIdx.x``), for ``T.launch_thread``."""
    return IterVar(None, E.Var(thread_tag, dtype), IterVarType.ThreadIndex, thread_tag)


def launch_thread(thread, extent):
    """Launch ``extent`` threads of the axis ``thread`` (an env_thread or its tag) for the rest of the body."""
    if isinstance(thread, str):
        thread = env_thread(thread)
    extent = E.convert(extent, thread.var.dtype)
    iv = IterVar(Range.from_min_extent(0, extent), thread.var, IterVarType.ThreadIndex, thread.thread_tag)
    return F.AttrFrame(iv, "thread_extent", extent, bound=thread.var)


def While(condition):  # noqa: N802
    """A while loop (``with T.While(cond):``)."""
    return F.WhileFrame(condition)


def Assert(condition, message):  # noqa: N802
    """An assertion over the rest of the body."""
    return F.AssertFrame(condition, message)


def evaluate(value):
    """Evaluate an expression for its effect."""
    return S.Evaluate(value)


def buffer_store(buffer, value, indices):
    """``buffer[indices] = value``."""
    return S.BufferStore(buffer, value, tuple(indices))


def prefetch(buffer, bounds):
    raise TIRError("T.prefetch: kiln's TIR has no Prefetch statement")


# ---- expressions
def Cast(dtype, value):  # noqa: N802
    """Cast ``value`` to ``dtype`` (a Cast node)."""
    return E.Cast(dtype, value)


def Select(condition, true_value, false_value):  # noqa: N802
    """Both operands evaluated, one kept."""
    return E.Select(condition, true_value, false_value)


def Ramp(base, stride, lanes):  # noqa: N802
    return E.Ramp(base, stride, lanes)


def Broadcast(value, lanes):  # noqa: N802
    return E.Broadcast(value, lanes)


def min(a, b, *rest):  # noqa: A001
    """The minimum (a Min node unless both are constants)."""
    out = _op.minimum(a, b)
    for x in rest:
        out = _op.minimum(out, x)
    return out


def max(a, b, *rest):  # noqa: A001
    """The maximum."""
    out = _op.maximum(a, b)
    for x in rest:
        out = _op.maximum(out, x)
    return out


def truncdiv(a, b):
    return _op.truncdiv(a, b)


def truncmod(a, b):
    return _op.truncmod(a, b)


def floordiv(a, b):
    return _op.floordiv(a, b)


def floormod(a, b):
    return _op.floormod(a, b)


def Div(a, b):  # noqa: N802
    return E.Div(a, b)


def Mod(a, b):  # noqa: N802
    return E.Mod(a, b)


def FloorDiv(a, b):  # noqa: N802
    return E.FloorDiv(a, b)


def FloorMod(a, b):  # noqa: N802
    return E.FloorMod(a, b)


def Min(a, b):  # noqa: N802
    return E.Min(a, b)


def Max(a, b):  # noqa: N802
    return E.Max(a, b)


def _dtype_first(args, dtype):
    """TVMScript prints ``T.call_extern("f", x, dtype="float32")``: the dtype keyword is the builder's first
    argument (TVM's ``_dtype_forward``)."""
    return args if dtype is None else (dtype, *args)


def call_extern(*args, dtype=None):
    """Call an external C function: ``T.call_extern(dtype, name, *args)`` or ``(name, *args, dtype=...)``."""
    from ...tir.intrin import call_extern as _ce

    return _ce(*_dtype_first(args, dtype))


def call_pure_extern(*args, dtype=None):
    """Call a pure external C function (argument forms as :func:`call_extern`)."""
    from ...tir.intrin import call_pure_extern as _cpe

    return _cpe(*_dtype_first(args, dtype))


def call_intrin(*args, dtype=None):
    """Call a TIR intrinsic: ``T.call_intrin(dtype, op_name, *args)`` or ``(op_name, *args, dtype=...)``."""
    from ...tir.intrin import call_intrin as _ci

    return _ci(*_dtype_first(args, dtype))


def call_llvm_intrin(*args, dtype=None):
    """Call an LLVM intrinsic: ``T.call_llvm_intrin(dtype, "llvm.name", *args)`` (or ``dtype=`` last)."""
    from ...tir.intrin import call_llvm_intrin as _cli

    return _cli(*_dtype_first(args, dtype))


def call_llvm_pure_intrin(*args, dtype=None):
    """Call a pure LLVM intrinsic (argument forms as :func:`call_llvm_intrin`)."""
    from ...tir.intrin import call_llvm_pure_intrin as _clpi

    return _clpi(*_dtype_first(args, dtype))


def ret(value, dtype=None):
    """Return ``value`` from the function (``T.evaluate(T.ret(x))``)."""
    from ...tir.intrin import ret as _ret

    if dtype is not None:
        value = E.convert(value, dtype)
    return _ret(value)


def if_then_else(cond, t, f, dtype=None):
    """``cond ? t : f`` where only the chosen operand is evaluated; ``dtype`` casts Python operands."""
    from ...tir.intrin import if_then_else as _ite

    if dtype is not None:
        t, f = E.convert(t, dtype), E.convert(f, dtype)
    return _ite(cond, t, f)


def tvm_call_packed(name, *args, dtype="int32"):
    """Call the packed function registered as ``name`` (TVM's ``T.tvm_call_packed``; the call's type is int32)."""
    from ...tir.intrin import call_packed

    return call_packed(name, *args)


def tvm_stack_make_shape(*args, dtype="handle"):
    """A shape array for a packed call (TVM's ``T.tvm_stack_make_shape``; ``dtype`` is always handle)."""
    from ...tir.builtin import tvm_stack_make_shape as make

    return make(*args)


def tvm_stack_make_array(data, shape, strides, ndim, arr_dtype, elem_offset, dtype="handle"):
    """A DLTensor for a packed call (TVM's ``T.tvm_stack_make_array``; ``dtype`` is always handle)."""
    from ...tir.builtin import tvm_stack_make_array as make

    return make(data, shape, strides, ndim, arr_dtype, elem_offset)


def target(target, host=None):
    """A compilation target, for ``T.func_attr({"target": T.target("llvm")})``."""
    from ...target.target import Target

    return Target(target, host) if host is not None else Target(target)


def assume(condition):
    """A hint that ``condition`` holds (TVM's ``tir.assume``)."""
    from ...tir.intrin import call_intrin as _ci

    return _ci("bool", "tir.assume", condition)


def iter_var(var, dom, iter_type, thread_tag):
    """An IterVar (``T.iter_var(v, T.Range(0, 4), "DataPar", "")``)."""
    dom = dom if dom is None or isinstance(dom, Range) else Range(*dom)
    if isinstance(iter_type, str):
        iter_type = IterVarType[iter_type]
    return IterVar(dom, var, iter_type, thread_tag)


def type_annotation(dtype):
    """A typed null value, used as the type of a call argument."""
    return E.Call(dtype, "tir.type_annotation", ())


def _check(buffer):
    if not isinstance(buffer, _Buffer):
        raise TIRError(f"expected a buffer, got {type(buffer).__name__}")
    return buffer
