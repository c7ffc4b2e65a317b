"""What a value of each dtype means when kiln computes with it: the one statement of kiln's dtype semantics.

Every layer that computes follows these rules and takes the shared ones from here: the TIR builders
(:mod:`kiln.tir.op`), the mutators that rebuild index arithmetic (:mod:`kiln.tir.functor`), the bound analysis,
topi's computes, both code generators (C and LLVM), the TIR evaluator and the Relay reference interpreter (numpy,
which agrees with each rule below where the rule is defined). Which dtypes each Relay operator computes on is
registered with the operator (``register_relay_op``'s ``dtypes``), and its type relation refuses the others.

Integers
    Unsigned types and signed types narrower than 32 bits wrap around (two's complement) after every operation, in
    the type of the operation: ``~x`` of a uint8 is a uint8, ``int8(100) + int8(100)`` is ``-56``. C computes
    integers narrower than ``int`` in ``int``, so the C backend converts each such result back
    (:func:`promoted_by_c`); LLVM works at the type's width. Signed int32/int64 overflow is undefined, as in TVM and
    C (numpy wraps), which lets the simplifier treat them as index types (:func:`overflow_is_undefined`).
    ``Div``/``Mod`` truncate toward zero (C), ``FloorDiv``/``FloorMod`` floor; division by zero, ``MIN / -1`` and
    shifts by a negative amount or by the type's width or more are undefined.

Mixed-width index arithmetic
    When an index of one width meets one of another (an int64 ``take`` index inlined into a producer whose loop
    variables are int32), both are converted to the wider type, TVM's ``BinaryOpMatchTypes``
    (:func:`kiln.tir.dtype.binary_result`): the TIR builders apply it to new expressions and the mutators to
    expressions they rebuild, so no pass narrows an index (an int64 index beyond 2^31 stays correct).

bool
    A 1-bit value, stored as a byte holding 0 or 1. Comparisons give bool; a cast to bool is ``x != 0`` (NaN gives
    true); a cast from bool gives 0 or 1. Arithmetic saturates at 1 (:data:`BOOL_ARITHMETIC`): ``a + b`` is ``a or
    b`` and ``a * b`` is ``a and b``, so ``sum`` over bool is ``any`` and ``prod`` is ``all``, as numpy and Relay
    define them; ``max``/``min`` are ``or``/``and``. In vector registers the C backend holds bool lanes as -1/0 masks
    (what GCC's vector comparisons produce), converted to and from bytes at every load, store and cast.

float16
    A storage and rounding format: every operation on float16 rounds its result to float16 and computes as if in
    float32 (:func:`compute_dtype`). For ``+ - * /`` and ``sqrt`` the float32 result rounded to float16 is the
    correctly rounded float16 result (float32 has more than twice float16's precision), so this equals native
    float16 arithmetic where a CPU has it and numpy's float16 ufuncs; math functions are the float32 libm result
    rounded. Two float16 operations are never fused into one rounding (no FMA contraction of float16), while float32
    and float64 ``a * b + c`` may contract into an FMA (the GEMM and convolution kernels rely on it). Sums, means and
    products over float16 accumulate in float32 and round once at the end.

NaN
    Arithmetic, math functions and comparisons follow IEEE (a comparison with NaN is false, ``!=`` true). NaN
    reaching ``min``/``max`` (element-wise, reductions, pooling), ``clip``, ``relu``, ``sign``, ``argmax``/``argmin``
    or a sort is undefined: kiln's select-based forms, like TVM's, and numpy's propagating ones differ.

Conversions
    Float to integer truncates toward zero; NaN and values outside the integer type's range are undefined (C, LLVM
    and numpy disagree there). Integer to float rounds to nearest; float64 to float32/float16 rounds to nearest even.
    A float *attribute* meant for an integer tensor (``clip``'s bounds) saturates instead (:func:`saturate_int`), so
    ``inf`` means no bound.
"""

import math

from . import dtype as _dt

__all__ = ["BOOL_ARITHMETIC", "C_INT_BITS", "compute_dtype", "overflow_is_undefined", "promoted_by_c", "saturate_int",
           "wrap_int"]

BOOL_ARITHMETIC = {"add": "or", "multiply": "and", "maximum": "or", "minimum": "and"}
"""Arithmetic on bool operands and the logical operation it is (1-bit values saturate)."""

C_INT_BITS = 32
"""The width of C's ``int``: C computes narrower integer (and bool) operands in ``int``."""


def compute_dtype(dtype) -> str:
    """The dtype an operation on ``dtype`` computes in before rounding back: float32 for float16 (with the same
    lanes), else ``dtype`` itself.

    Examples
    --------
    >>> compute_dtype("float16x8")
    'float32x8'
    """
    t = _dt.DataType.parse(dtype)
    if t.code == "float" and t.bits == 16:
        return str(_dt.DataType("float", 32, t.lanes))
    return str(t)


def overflow_is_undefined(dtype) -> bool:
    """Whether arithmetic on scalar or vector ``dtype`` may assume it never overflows: int32 and int64, the index
    types (as TVM and C assume). Every other integer type wraps, so the simplifier and the bound analysis must not
    reason as if values stayed in an interval beyond the type's range."""
    t = _dt.DataType.parse(dtype)
    return t.is_int() and t.bits >= C_INT_BITS


def promoted_by_c(dtype) -> bool:
    """Whether C computes scalar ``dtype`` values in ``int`` (integers and bool narrower than 32 bits), so that an
    arithmetic result must be converted back to ``dtype`` to wrap (or saturate, for bool) as kiln defines it."""
    t = _dt.DataType.parse(dtype)
    return t.lanes == 1 and (t.is_integer() or t.is_bool()) and t.bits < C_INT_BITS


def wrap_int(value: int, dtype) -> int:
    """``value`` wrapped into the two's-complement range of integer ``dtype`` (0 or 1 for bool, which saturates).

    Examples
    --------
    >>> wrap_int(200, "int8"), wrap_int(-1, "uint8"), wrap_int(2, "bool")
    (-56, 255, 1)
    """
    t = _dt.DataType.parse(dtype).element_of()
    if t.is_bool():
        return int(bool(value))
    value &= (1 << t.bits) - 1
    if t.is_int() and value >= 1 << (t.bits - 1):
        value -= 1 << t.bits
    return value


def saturate_int(value: float, dtype) -> int:
    """A float truncated toward zero and clamped into integer ``dtype``'s range (``inf`` gives its maximum),
    computed on Python integers: ``float(2**63 - 1)`` is ``2**63``, outside int64.

    Examples
    --------
    >>> saturate_int(-2.7, "int8"), saturate_int(float("inf"), "int64"), saturate_int(1e30, "uint8")
    (-2, 9223372036854775807, 255)
    """
    t = _dt.DataType.parse(dtype).element_of()
    if math.isinf(value):
        return t.max_value() if value > 0 else t.min_value()
    return min(max(math.trunc(value), t.min_value()), t.max_value())
