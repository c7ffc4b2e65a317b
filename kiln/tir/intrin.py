"""TIR intrinsics: the ``tir.*`` operators a ``Call`` names, their builders (``tir.exp(x)``), and reducers.

Every intrinsic is an :class:`kiln.ir.Op` named ``tir.<name>`` with the attribute ``TCallEffectKind`` (pure math is
``PURE``; ``call_extern`` is ``OPAQUE``). Math builders fold constant arguments with numpy, so ``tir.exp(0.0)`` is a
constant. ``LowerIntrin`` (``kiln.tir.transform``) rewrites the intrinsics a backend cannot emit directly.

``comm_reducer`` builds reducers such as :data:`sum`: called with an expression and reduction axes it builds a
``Reduce`` (what ``te.sum(A[i, k], axis=k)`` is); called with two expressions it combines them (so ``tir.min(a, b)``
is the binary minimum, as in TVM).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..error import TIRError
from ..ir.op import Op, register_op, register_op_attr
from . import dtype as _dt
from .dtype_semantics import wrap_int
from .expr import Call, CallEffectKind, CommReducer, FloatImm, IntImm, IterVar, PrimExpr, Reduce, StringImm, Var
from .expr_op import convert
from .op import (
    _operand_pair,
    add,
    cast,
    const,
    const_value,
    logical_not,
    max_value,
    maximum,
    min_value,
    minimum,
)


@dataclass(frozen=True)
class MathIntrinsic:
    """A math intrinsic ``tir.<name>``: its numpy implementation (constant folding, the TIR evaluator), the C math
    library function that computes it (the float64 name; float32 adds ``f``), and the LLVM intrinsic overloaded on
    the operand type (None: the LLVM backend calls the C function too). Neither is given for intrinsics
    ``tir.LowerIntrin`` rewrites into others before code generation (``sigmoid``, ``rsqrt``...)."""

    name: str
    arity: int
    numpy: Callable
    libm: str | None = None
    llvm: str | None = None


MATH_INTRINSICS = {f"tir.{r.name}": r for r in (
    MathIntrinsic("exp", 1, np.exp, "exp", "llvm.exp"),
    MathIntrinsic("exp2", 1, np.exp2, "exp2", "llvm.exp2"),
    MathIntrinsic("exp10", 1, lambda x: np.power(10.0, x)),
    MathIntrinsic("expm1", 1, np.expm1, "expm1"),
    MathIntrinsic("log", 1, np.log, "log", "llvm.log"),
    MathIntrinsic("log2", 1, np.log2, "log2", "llvm.log2"),
    MathIntrinsic("log10", 1, np.log10, "log10", "llvm.log10"),
    MathIntrinsic("log1p", 1, np.log1p, "log1p"),
    MathIntrinsic("sqrt", 1, np.sqrt, "sqrt", "llvm.sqrt"),
    MathIntrinsic("rsqrt", 1, lambda x: 1.0 / np.sqrt(x)),
    MathIntrinsic("sin", 1, np.sin, "sin", "llvm.sin"),
    MathIntrinsic("cos", 1, np.cos, "cos", "llvm.cos"),
    MathIntrinsic("tan", 1, np.tan, "tan"),
    MathIntrinsic("sinh", 1, np.sinh, "sinh"),
    MathIntrinsic("cosh", 1, np.cosh, "cosh"),
    MathIntrinsic("tanh", 1, np.tanh, "tanh"),
    MathIntrinsic("asin", 1, np.arcsin, "asin"),
    MathIntrinsic("acos", 1, np.arccos, "acos"),
    MathIntrinsic("atan", 1, np.arctan, "atan"),
    MathIntrinsic("asinh", 1, np.arcsinh, "asinh"),
    MathIntrinsic("acosh", 1, np.arccosh, "acosh"),
    MathIntrinsic("atanh", 1, np.arctanh, "atanh"),
    MathIntrinsic("erf", 1, np.vectorize(math.erf, otypes=[np.float64]), "erf"),
    MathIntrinsic("sigmoid", 1, lambda x: 1.0 / (1.0 + np.exp(-x))),
    MathIntrinsic("fabs", 1, np.abs, "fabs", "llvm.fabs"),
    MathIntrinsic("floor", 1, np.floor, "floor", "llvm.floor"),
    MathIntrinsic("ceil", 1, np.ceil, "ceil", "llvm.ceil"),
    MathIntrinsic("trunc", 1, np.trunc, "trunc", "llvm.trunc"),
    MathIntrinsic("nearbyint", 1, np.rint, "nearbyint", "llvm.nearbyint"),
    # half to even, as numpy (C's round() goes away from zero)
    MathIntrinsic("round", 1, np.rint, "nearbyint", "llvm.roundeven"),
    MathIntrinsic("pow", 2, np.power, "pow", "llvm.pow"),
    MathIntrinsic("atan2", 2, np.arctan2, "atan2"),
    MathIntrinsic("fmod", 2, np.fmod, "fmod"),
    MathIntrinsic("copysign", 2, np.copysign, "copysign", "llvm.copysign"),
    MathIntrinsic("hypot", 2, np.hypot, "hypot"),
    MathIntrinsic("nextafter", 2, np.nextafter, "nextafter"),
    MathIntrinsic("ldexp", 2, lambda x, e: np.ldexp(x, np.asarray(e, dtype=np.int32)), "ldexp"),
    MathIntrinsic("fma", 3, lambda a, b, c: a * b + c, "fma", "llvm.fma"),
)}
"""``tir.<name>`` -> its record: the one place an intrinsic's numpy, C and LLVM forms are named."""

# name (without ``tir.``) -> numpy implementation, by arity (constant folding, the evaluator, the vectorizer)
UNARY_MATH = {r.name: r.numpy for r in MATH_INTRINSICS.values() if r.arity == 1}
BINARY_MATH = {r.name: r.numpy for r in MATH_INTRINSICS.values() if r.arity == 2}
TERNARY_MATH = {r.name: r.numpy for r in MATH_INTRINSICS.values() if r.arity == 3}
PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}

_OTHER_PURE = (
    "if_then_else", "likely", "reinterpret", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left",
    "shift_right", "popcount", "clz", "call_pure_extern", "call_llvm_pure_intrin", "isnullptr", "tvm_struct_get",
    "assume", "undef", "vscale",
)
_OTHER_OPAQUE = ("call_extern", "call_llvm_intrin", "tvm_call_packed", "tvm_struct_set", "ret", "address_of",
                 "tvm_access_ptr")


def _register():
    for name in (*UNARY_MATH, *BINARY_MATH, *TERNARY_MATH, *PREDICATES, *_OTHER_PURE):
        register_op(f"tir.{name}")
        if Op.get(f"tir.{name}").get_attr("TCallEffectKind") is None:
            register_op_attr(f"tir.{name}", "TCallEffectKind", CallEffectKind.PURE)
    for name in _OTHER_OPAQUE:
        register_op(f"tir.{name}")
        if Op.get(f"tir.{name}").get_attr("TCallEffectKind") is None:
            register_op_attr(f"tir.{name}", "TCallEffectKind", CallEffectKind.OPAQUE)


_register()


def call_intrin(dtype, func_name, *args, span=None) -> Call:
    """Call the intrinsic ``func_name`` (``"tir.exp"`` or ``"exp"``) returning ``dtype``."""
    name = func_name if "." in func_name else f"tir.{func_name}"
    return Call(dtype, Op.get(name), args, span=span)


def call_extern(dtype, func_name, *args, span=None) -> Call:
    """Call the external C function ``func_name`` (may have side effects)."""
    return Call(dtype, Op.get("tir.call_extern"), (StringImm(func_name), *args), span=span)


def call_pure_extern(dtype, func_name, *args, span=None) -> Call:
    """Call the external C function ``func_name``, known to be pure."""
    return Call(dtype, Op.get("tir.call_pure_extern"), (StringImm(func_name), *args), span=span)


def call_llvm_pure_intrin(dtype, name, *args, span=None) -> Call:
    """Call the LLVM intrinsic ``name`` (``"llvm.x86.avx512.vpdpbusd.512"``) returning ``dtype``, known to be pure
    (TVM's ``tir.call_llvm_pure_intrin``). Only the LLVM backend emits it; its argument and result types are the
    LLVM types of the arguments' and ``dtype``'s TIR types, which must be the intrinsic's."""
    return Call(dtype, Op.get("tir.call_llvm_pure_intrin"), (StringImm(name), *args), span=span)


def call_llvm_intrin(dtype, name, *args, span=None) -> Call:
    """Call the LLVM intrinsic ``name`` returning ``dtype`` (may have side effects; TVM's ``tir.call_llvm_intrin``).
    """
    return Call(dtype, Op.get("tir.call_llvm_intrin"), (StringImm(name), *args), span=span)


def call_packed(*args, span=None) -> Call:
    """Call a packed function by name (``tvm_call_packed``); the first argument is the name. A Buffer argument is
    passed as a DLTensor describing it (``tvm_stack_make_array``), other arguments by value."""
    from .buffer import Buffer
    from .builtin import pack_buffer

    name, *rest = args
    rest = [pack_buffer(x, span=span) if isinstance(x, Buffer) else x for x in rest]
    return Call("int32", Op.get("tir.tvm_call_packed"), (StringImm(str(name)), *rest), span=span)


def _float_operand(x, what):
    x = convert(x)
    if not _dt.is_float(x.dtype):
        raise TIRError(f"tir.{what}: expects a float argument, got {x.dtype} (cast it first)")
    return x


def _fold(fn, dtype, *values):
    with np.errstate(all="ignore"):
        out = fn(*(np.asarray(v, dtype=np.float64) for v in values))
    return const(float(np.asarray(out, dtype=_dt.DataType.parse(dtype).numpy())), dtype)


def _unary_builder(name):
    impl = UNARY_MATH[name]

    def build(x, span=None):
        x = _float_operand(x, name)
        if isinstance(x, FloatImm):
            return _fold(impl, x.dtype, x.value)
        return Call(x.dtype, Op.get(f"tir.{name}"), (x,), span=span)

    build.__name__ = name
    build.__doc__ = f"``{name}(x)`` of a float expression (TVM's ``tir.{name}``); a constant folds."
    return build


def _binary_builder(name):
    impl = BINARY_MATH[name]

    def build(x, y, span=None):
        x, y = _operand_pair(x, y)
        _float_operand(x, name)
        if isinstance(x, FloatImm) and isinstance(y, FloatImm):
            return _fold(impl, x.dtype, x.value, y.value)
        return Call(x.dtype, Op.get(f"tir.{name}"), (x, y), span=span)

    build.__name__ = name
    build.__doc__ = f"``{name}(x, y)`` of float expressions (TVM's ``tir.{name}``)."
    return build


for _name in UNARY_MATH:
    globals()[_name] = _unary_builder(_name)
for _name in BINARY_MATH:
    globals()[_name] = _binary_builder(_name)
power = globals()["pow"]


def ldexp(x, e, span=None) -> PrimExpr:
    """``x * 2**e`` of a float ``x`` and an integer exponent ``e``, which keeps its integer dtype (TVM's
    ``tir.ldexp``); constants fold."""
    x = _float_operand(x, "ldexp")
    e = convert(e)
    if not _dt.is_integer(e.dtype):
        raise TIRError(f"tir.ldexp: the exponent must be an integer, got {e.dtype}")
    if _dt.lanes(x.dtype) != _dt.lanes(e.dtype):
        if _dt.lanes(e.dtype) != 1:
            raise TIRError(f"tir.ldexp: {e.dtype} exponent for a {x.dtype} value")
        e = cast(e, _dt.with_lanes(e.dtype, _dt.lanes(x.dtype)))
    if isinstance(x, FloatImm) and isinstance(e, IntImm):
        return _fold(BINARY_MATH["ldexp"], x.dtype, x.value, e.value)
    return Call(x.dtype, Op.get("tir.ldexp"), (x, e), span=span)


def _rounding_builder(name):
    """A rounding intrinsic: the identity on integers and bools, as TVM's."""
    on_floats = globals()[name]

    def build(x, span=None):
        x = convert(x)
        if not _dt.is_float(x.dtype):
            return x
        return on_floats(x, span=span)

    build.__name__, build.__doc__ = name, on_floats.__doc__ + " An integer is returned as is."
    return build


for _name in ("floor", "ceil", "trunc", "round", "nearbyint"):
    globals()[_name] = _rounding_builder(_name)


def fma(a, b, c, span=None) -> PrimExpr:
    """Fused multiply-add ``a * b + c`` (one rounding)."""
    a, b = _operand_pair(a, b)
    a, c = _operand_pair(a, c)
    b = cast(b, a.dtype)
    _float_operand(a, "fma")
    if all(isinstance(v, FloatImm) for v in (a, b, c)):
        return _fold(TERNARY_MATH["fma"], a.dtype, a.value, b.value, c.value)
    return Call(a.dtype, Op.get("tir.fma"), (a, b, c), span=span)


def _predicate(name):
    def build(x, span=None):
        x = convert(x)
        out = _dt.with_lanes("bool", _dt.lanes(x.dtype))
        if not _dt.is_float(x.dtype):
            return const(name == "isfinite", out)
        if isinstance(x, FloatImm):
            return const(bool(PREDICATES[name](x.value)), out)
        if name == "isnan" and _dt.element(x.dtype) == "float16":
            x = cast(x, _dt.with_lanes("float32", _dt.lanes(x.dtype)))  # as TVM: a half NaN test runs in float
        return Call(out, Op.get(f"tir.{name}"), (x,), span=span)

    build.__name__ = name
    build.__doc__ = f"Whether ``x`` {name[2:]} (per lane)."
    return build


isnan, isinf, isfinite = _predicate("isnan"), _predicate("isinf"), _predicate("isfinite")


def if_then_else(cond, t, f, span=None) -> PrimExpr:
    """``cond ? t : f`` evaluating only the taken branch (guards out-of-bounds loads); a constant condition folds."""
    t, f = _operand_pair(t, f)
    cond = convert(cond)
    if not _dt.is_bool(cond.dtype):
        raise TIRError(f"tir.if_then_else: the condition must be a bool, got {cond.dtype} ({cond})")
    v = const_value(cond)
    if v is not None and _dt.lanes(cond.dtype) == 1:
        return t if v else f
    return Call(t.dtype, Op.get("tir.if_then_else"), (cond, t, f), span=span)


def likely(cond, span=None) -> PrimExpr:
    """Mark ``cond`` as likely true (a hint for branch layout)."""
    cond = convert(cond)
    if isinstance(cond, IntImm):
        return cond
    return Call(cond.dtype, Op.get("tir.likely"), (cond,), span=span)


def _bitwise(name):
    def build(a, b=None, span=None):
        if name == "bitwise_not":
            a = convert(a)
            if not (_dt.is_integer(a.dtype) or _dt.is_bool(a.dtype)):
                raise TIRError(f"tir.bitwise_not: operand must be an integer, got {a.dtype}")
            if _dt.is_bool(a.dtype):  # the complement of a 1-bit value (C's ~ would turn true into -2)
                return logical_not(a, span=span)
            if isinstance(a, IntImm):
                return const(wrap_int(~a.value, a.dtype), a.dtype)
            return Call(a.dtype, Op.get("tir.bitwise_not"), (a,), span=span)
        a, b = _operand_pair(a, b)
        if not (_dt.is_integer(a.dtype) or _dt.is_bool(a.dtype)):
            raise TIRError(f"tir.{name}: operands must be integers, got {a.dtype}")
        bits = _dt.DataType.parse(a.dtype).bits
        if name.startswith("shift") and isinstance(b, IntImm) and not 0 <= b.value < bits:
            raise TIRError(f"tir.{name}: shift amount {b.value} is outside [0, {bits}) for {a.dtype}")
        if isinstance(a, IntImm) and isinstance(b, IntImm):  # two constants fold, as TVM's builders do
            x, y = a.value, b.value
            folded = {"bitwise_and": x & y, "bitwise_or": x | y, "bitwise_xor": x ^ y, "shift_left": x << y,
                      "shift_right": x >> y}[name]
            return const(wrap_int(folded, a.dtype), a.dtype)
        return Call(a.dtype, Op.get(f"tir.{name}"), (a, b), span=span)

    build.__name__ = name
    return build


bitwise_and, bitwise_or, bitwise_xor = _bitwise("bitwise_and"), _bitwise("bitwise_or"), _bitwise("bitwise_xor")
bitwise_not, shift_left, shift_right = _bitwise("bitwise_not"), _bitwise("shift_left"), _bitwise("shift_right")


def vscale(span=None) -> PrimExpr:
    """The target's ``vscale``: a scalable vector (``int32xvscalex4``) has ``vscale() * 4`` lanes."""
    return call_intrin("int32", "tir.vscale")


def popcount(x, span=None) -> PrimExpr:
    """Number of set bits."""
    x = convert(x)
    return Call(x.dtype, Op.get("tir.popcount"), (x,), span=span)


def clz(x, span=None) -> PrimExpr:
    """Number of leading zero bits of an integer (an ``int32``, as TVM's)."""
    x = convert(x)
    if not _dt.is_integer(x.dtype):
        raise TIRError(f"tir.clz: expects an integer argument, got {x.dtype}")
    return Call(_dt.with_lanes("int32", _dt.lanes(x.dtype)), Op.get("tir.clz"), (x,), span=span)


def ret(value, span=None) -> PrimExpr:
    """Return ``value`` from the function."""
    value = convert(value)
    return Call(value.dtype, Op.get("tir.ret"), (value,), span=span)


def isnullptr(x, span=None) -> PrimExpr:
    """Whether the handle ``x`` is NULL."""
    return Call("bool", Op.get("tir.isnullptr"), (convert(x),), span=span)


def comm_reducer(fcombine, fidentity, name="reduce"):
    """Build a commutative reducer (TVM's ``tir.comm_reducer``).

    Parameters
    ----------
    fcombine : callable
        ``(x, y) -> value`` combining two values.
    fidentity : callable
        ``(dtype) -> value``: the identity element.
    name : str
        The reducer's name.

    Returns
    -------
    reducer : callable
        ``reducer(expr, axis, where=None, init=None)`` builds a ``Reduce``; ``reducer(a, b)`` applies ``fcombine``.
    """

    def reducer(expr, axis=None, where=None, init=None, *args):
        if axis is not None and not isinstance(axis, IterVar | list | tuple):
            # the direct form over all arguments: tir.max(a, b, c, ...) folds them left to right
            result = fcombine(expr, axis)
            for value in (where, init, *args) if where is not None else ():
                if value is None:
                    break
                result = fcombine(result, value)
            return result
        if axis is None:
            raise TIRError(f"tir.{name}: needs reduction axes (IterVars made by te.reduce_axis)")
        expr = convert(expr)
        axes = (axis,) if isinstance(axis, IterVar) else tuple(axis)
        lhs, rhs = Var("x", expr.dtype), Var("y", expr.dtype)
        combiner = CommReducer((lhs,), (rhs,), (fcombine(lhs, rhs),), (fidentity(expr.dtype),))
        init_values = () if init is None else (convert(init, expr.dtype),)
        return Reduce(combiner, (expr,), axes, where, 0, init_values)

    reducer.__name__ = name
    reducer.__doc__ = f"The ``{name}`` reducer: ``{name}(expr, axis, where=None, init=None)``, or ``{name}(a, b)``."
    return reducer


sum = comm_reducer(lambda x, y: add(x, y), lambda t: const(0, t), name="sum")
min = comm_reducer(lambda x, y: minimum(x, y), lambda t: max_value(t), name="min")
max = comm_reducer(lambda x, y: maximum(x, y), lambda t: min_value(t), name="max")
