"""``T`` of TVMScript (``from kiln.script import tir as T``): the decorator ``T.prim_func`` and every ``T.<name>``
a script may use (dtypes, buffers, loops, scopes, blocks, expression builders and TIR's intrinsics)."""

# ruff: noqa: F401, F403  (the namespace is the re-exports)

import inspect

from ...tir import (
    Range,
    abs,
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    call_packed,
    ceil,
    clz,
    comm_reducer,
    copysign,
    cos,
    cosh,
    erf,
    exp,
    exp2,
    exp10,
    fabs,
    floor,
    fma,
    fmod,
    hypot,
    isfinite,
    isinf,
    isnan,
    isnullptr,
    ldexp,
    likely,
    log,
    log1p,
    log2,
    log10,
    max_value,
    min_value,
    nearbyint,
    nextafter,
    popcount,
    pow,
    reinterpret,
    round,
    rsqrt,
    shift_left,
    shift_right,
    sigmoid,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
)
from ...tir.expr import FloatImm, IntImm, StringImm
from . import frames
from .block import alloc_buffer, axis, block, block_attr, init, reads, where, writes
from .ops import *
from .ops import DTYPES, Buffer, handle


def _drop_dtype(func):
    """TVMScript's ``T.round(x, dtype="float32")``: the printer writes the call's dtype, the builder infers it (TVM's
    ``_op_wrapper``)."""

    def wrapped(*args, dtype=None, **kwargs):
        return func(*args, **kwargs)

    wrapped.__name__, wrapped.__doc__ = func.__name__, func.__doc__
    return wrapped


for _name in ("abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_not",
              "bitwise_or", "bitwise_xor", "ceil", "clz", "copysign", "cos", "cosh", "erf", "exp", "exp2", "exp10",
              "fabs", "floor", "fma", "fmod", "hypot", "isfinite", "isinf", "isnan", "ldexp", "log", "log1p",
              "log2", "log10", "nearbyint", "nextafter", "popcount", "pow", "round", "rsqrt", "shift_left",
              "shift_right", "sigmoid", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"):
    globals()[_name] = _drop_dtype(globals()[_name])

float = DTYPES["float32"]  # noqa: A001  (TVM's T.float is float32)
int = DTYPES["int32"]  # noqa: A001


def prim_func(func=None, *, private=False, check_well_formed=True):
    """Parse the decorated Python function as TIR: the result is a ``tir.PrimFunc``.

    Inside an ``@I.ir_module`` class the function is left for the module decorator, which parses the whole class.

    Examples
    --------
    >>> @T.prim_func                                                   # doctest: +SKIP
    ... def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    ...     for i in range(8):
    ...         B[i] = A[i] + T.float32(1)
    """
    caller = inspect.currentframe().f_back
    caller_locals = dict(caller.f_locals) if caller is not None else {}
    in_class = "__module__" in caller_locals and "__qualname__" in caller_locals

    def parse(f):
        if in_class:
            return f
        from ..function import parse_decorated_function

        return parse_decorated_function(f, caller_locals)

    return parse if func is None else parse(func)
