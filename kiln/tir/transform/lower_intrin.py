"""``tir.LowerIntrin``: rewrite intrinsics and operators into what both native backends emit directly (TVM's
``tir.transform.LowerIntrin``).

After this pass a code generator meets only (besides ``Let`` expressions, which the expansions use to share a
value):

* math intrinsics with an LLVM intrinsic and a C99 ``<math.h>`` function: ``exp`` (float64) ``exp2 log log2 log10
  sqrt fabs floor ceil trunc nearbyint pow fma sin cos copysign`` (on scalars or vectors), plus ``if_then_else``, the
  bitwise ones, ``reinterpret``, ``call_extern``/``call_pure_extern`` and the packed-API helpers (``tvm_struct_get``,
  ``isnullptr``);
* integer division only as C's truncating ``Div``/``Mod``: ``FloorDiv``/``FloorMod`` become ``Div``/``Mod`` when the
  dividend is provably non-negative and the divisor positive, else ``Div``/``Mod`` with a sign correction (a
  ``Select``); on floats ``floordiv(a, b) = floor(a / b)``.

Expansions (each a named rule in :data:`RULES`): ``exp`` of float32 is Cephes' polynomial with an exact
power-of-two scaling, within 2 ulp over the whole range (LLVM would otherwise call libm's ``expf`` once per vector
lane: 6x slower on a sigmoid); ``sigmoid(x) = 1 / (1 + exp(-x))``; ``tanh`` and ``erf`` are odd
rational approximations on a clamped input (Eigen's, also used by TVM's ``fast_tanh``/``fast_erf``), accurate to a
few float32 ulps; ``rsqrt(x) = 1 / sqrt(x)``; ``log1p(x) = log(1 + x)``; ``exp10(x) = exp(x * ln 10)``; ``tan = sin /
cos``; ``sinh``, ``cosh`` through ``exp``; ``round`` becomes ``nearbyint`` (round half to even, as numpy);
``isnan(x) = x != x``; ``isinf(x) = fabs(x) == inf``; ``isfinite`` the negation of both; ``likely(c) = c``. The
``exp``, ``tanh`` and ``erf`` expansions are float32-accurate, so float64 calls libm's.
An expansion of a float16 value computes in float32 and rounds once at the end.
Other intrinsics (``atan``, ``asin`` ...) are left for the backend to call from libm.
"""

import math
from dataclasses import dataclass

from ...arith import Analyzer
from ...ir.transform import PassInfo, register_pass
from .. import dtype as _dt
from .. import expr as E
from .. import op as _op
from ..dtype_semantics import compute_dtype
from ..functor import StmtExprMutator
from ..intrin import MATH_INTRINSICS, call_intrin, call_llvm_pure_intrin
from .function_pass import PrimFuncPass


def _c(value, like):
    return _op.const(value, like.dtype)


def _call(name, x):
    return call_intrin(x.dtype, f"tir.{name}", x)


def _poly(x2, coeffs):
    """Horner evaluation of ``coeffs`` (highest degree first) at ``x2``."""
    acc = _c(coeffs[0], x2)
    for c in coeffs[1:]:
        acc = _op.add(_op.multiply(acc, x2), _c(c, x2))
    return acc


def _clamp(x, lo, hi):
    return _op.maximum(_op.minimum(x, _c(hi, x)), _c(lo, x))


def _let(value, name, body):
    """``body(v)`` with ``v`` bound to ``value`` (a ``Let``, so a value used several times is computed once)."""
    var = E.Var(name, value.dtype)
    return E.Let(var, value, body(var))


_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
_EXP_MAX, _EXP_MIN = 88.72283935546875, -103.97208404541016  # expf overflows above, is 0 below


def lower_exp(x):
    """``exp(x)`` of float32 in vector arithmetic (Cephes' ``expf``), within 2 ulp of libm where libm's ``expf``
    would be called once per lane: ``x = n ln2 + r`` with ``n = round(x / ln2)`` (Cody-Waite: ``ln2`` in two parts,
    so ``r`` is exact), ``exp(r)`` by a degree-7 polynomial on ``|r| <= ln2 / 2``, and ``2^n`` as the product of two
    powers of two made from their exponent bits (two, so that ``n`` from -150 to 128 stays in range and subnormal
    results are rounded once). Above ``log(FLT_MAX)`` the result is inf, below the smallest subnormal 0; NaN stays
    NaN."""
    lanes = _dt.lanes(x.dtype)
    int_type = _dt.with_lanes("int32", lanes)

    def power_of_two(k):  # 2^k for k in [-126, 127], from its exponent bits
        biased = _op.add(k, _op.const(127, int_type))
        return call_intrin(x.dtype, "tir.reinterpret", call_intrin(int_type, "tir.shift_left", biased,
                                                                   _op.const(23, int_type)))

    def from_n(xc, n):
        def from_r(r):
            poly = _poly(r, _EXP_POLY)
            expr = _op.add(_op.add(_op.multiply(poly, _op.multiply(r, r)), r), _c(1.0, x))
            half = E.Div(n, _op.const(2, int_type))  # n = half + (n - half), both in [-75, 64]
            return _op.multiply(_op.multiply(expr, power_of_two(half)), power_of_two(_op.subtract(n, half)))

        nf = _op.cast(n, x.dtype)
        r = _op.subtract(_op.subtract(xc, _op.multiply(nf, _c(0.693359375, x))), _op.multiply(nf, _c(-2.12194440e-4,
                                                                                                     x)))
        return _let(r, "exp_r", from_r)

    def from_clamped(xc):
        n = _op.cast(_call("floor", _op.add(_op.multiply(xc, _c(1.44269504088896341, x)), _c(0.5, x))), int_type)
        return _let(n, "exp_n", lambda n: from_n(xc, n))

    def from_x(v):
        value = _let(_clamp(v, _EXP_MIN, _EXP_MAX), "exp_x", from_clamped)
        value = E.Select(E.LT(v, _c(_EXP_MIN, x)), _c(0.0, x), value)
        value = E.Select(E.GT(v, _c(_EXP_MAX, x)), _c(float("inf"), x), value)
        return E.Select(lower_isnan(v), v, value)

    return _let(x, "exp_in", from_x)


def lower_sigmoid(x):
    """``sigmoid(x) = 1 / (1 + exp(-x))``."""
    return _op.div(_c(1.0, x), _op.add(_c(1.0, x), _call("exp", _op.multiply(x, _c(-1.0, x)))))


_TANH_P = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
           1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03)
_TANH_Q = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03)


def _odd_rational(x, bound, p, q):
    """``xc * P(xc^2) / Q(xc^2)`` with ``xc = clamp(x, -bound, bound)`` (NaN stays NaN); ``xc`` and ``xc^2`` are
    ``Let``-bound so the expression stays a tree of linear size."""
    xc = E.Var("x_clamped", x.dtype)
    x2 = E.Var("x_squared", x.dtype)
    ratio = _op.div(_op.multiply(xc, _poly(x2, p)), _poly(x2, q))
    clamped = E.Select(lower_isnan(x), x, _clamp(x, -bound, bound))  # min/max would turn a NaN into a bound
    return E.Let(xc, clamped, E.Let(x2, _op.multiply(xc, xc), ratio))


def lower_tanh(x):
    """``tanh(x)``: x * P(x^2) / Q(x^2) on ``x`` clamped to [-9, 9] (beyond, tanh is +-1 in float32)."""
    return _odd_rational(x, 9.0, _TANH_P, _TANH_Q)


_ERF_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
          -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)
_ERF_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
          -1.42647390514189e-02)


def lower_erf(x):
    """``erf(x)``: x * P(x^2) / Q(x^2) on ``x`` clamped to [-4, 4] (beyond, erf is +-1 in float32)."""
    return _odd_rational(x, 4.0, _ERF_P, _ERF_Q)


def lower_rsqrt(x):
    """``rsqrt(x) = 1 / sqrt(x)``."""
    return _op.div(_c(1.0, x), _call("sqrt", x))


def lower_log1p(x):
    """``log1p(x) = log(1 + x)``."""
    return _call("log", _op.add(_c(1.0, x), x))


def lower_exp10(x):
    """``exp10(x) = exp(x * ln 10)``."""
    return _call("exp", _op.multiply(x, _c(math.log(10.0), x)))


def lower_tan(x):
    """``tan(x) = sin(x) / cos(x)``."""
    return _op.div(_call("sin", x), _call("cos", x))


def lower_sinh(x):
    """``sinh(x) = (exp(x) - exp(-x)) / 2``."""
    return _op.multiply(_op.subtract(_call("exp", x), _call("exp", _op.multiply(x, _c(-1.0, x)))), _c(0.5, x))


def lower_cosh(x):
    """``cosh(x) = (exp(x) + exp(-x)) / 2``."""
    return _op.multiply(_op.add(_call("exp", x), _call("exp", _op.multiply(x, _c(-1.0, x)))), _c(0.5, x))


def lower_round(x):
    """``round(x) = nearbyint(x)`` (round half to even, numpy's rule)."""
    return _call("nearbyint", x)


def lower_isnan(x):
    """``isnan(x) = x != x``."""
    return E.NE(x, x)


def lower_isinf(x):
    """``isinf(x) = fabs(x) == inf``."""
    return E.EQ(_call("fabs", x), _c(float("inf"), x))


def lower_isfinite(x):
    """``isfinite(x) = !isnan(x) && !isinf(x)``."""
    return E.And(E.Not(lower_isnan(x)), E.Not(lower_isinf(x)))


RULES = {
    "tir.exp": lower_exp, "tir.sigmoid": lower_sigmoid, "tir.tanh": lower_tanh, "tir.erf": lower_erf,
    "tir.rsqrt": lower_rsqrt, "tir.log1p": lower_log1p, "tir.exp10": lower_exp10, "tir.tan": lower_tan,
    "tir.sinh": lower_sinh, "tir.cosh": lower_cosh, "tir.round": lower_round, "tir.isnan": lower_isnan,
    "tir.isinf": lower_isinf, "tir.isfinite": lower_isfinite, "tir.likely": lambda x: x,
}
"""Intrinsic name -> expansion of its single argument."""

FLOAT32_APPROXIMATIONS = {"tir.exp", "tir.tanh", "tir.erf"}
"""Expansions accurate to float32 only: float64 calls libm instead."""

FLOAT32_ONLY = {"tir.exp"}
"""Expansions that float16 skips too: ``expf`` rounded once to half is the correctly rounded result, which an
expansion within 2 float32 ulp only nearly always is."""


def _expand(rule, x):
    """``rule(x)``; of a float16 ``x`` computed in float32 and rounded once, since the expansion is one operation
    and its constants and intermediate values need float32 (:mod:`kiln.tir.dtype_semantics`)."""
    wide = compute_dtype(x.dtype)
    if wide == x.dtype:
        return rule(x)
    out = rule(_op.cast(x, wide))
    return _op.cast(out, x.dtype) if out.dtype == wide else out


class IntrinLowerer(StmtExprMutator):
    """Applies :data:`RULES` and lowers floor division; tracks loop ranges to prove dividends non-negative. For a
    function whose ``target`` attribute is LLVM, a math intrinsic left with an LLVM intrinsic becomes the
    ``call_llvm_pure_intrin`` of it at the operand's type, as TVM's LLVM lowering rules do."""

    def __init__(self, llvm=False):
        self.analyzer = Analyzer()
        self.llvm = llvm

    def visit_for(self, op):
        self.analyzer.bind(op.loop_var, E.Range.from_min_extent(op.min, op.extent), allow_override=True)
        return super().visit_for(op)

    def visit_call(self, op):
        op = super().visit_call(op)
        rule = RULES.get(op.op.name)
        bits = _dt.DataType.parse(op.dtype).bits
        if op.op.name in FLOAT32_APPROXIMATIONS and bits == 64 or op.op.name in FLOAT32_ONLY and bits == 16:
            return op  # libm is exact to float64 (and expf, rounded, to float16); the expansions only to float32
        if rule is not None and len(op.args) == 1:
            return self.visit_expr(_expand(rule, op.args[0]))
        record = MATH_INTRINSICS.get(op.op.name)
        if self.llvm and record is not None and record.llvm and _dt.is_float(op.dtype):
            return call_llvm_pure_intrin(op.dtype, f"{record.llvm}.{_llvm_suffix(op.dtype)}", *op.args)
        return op

    def visit_add(self, op):
        """For LLVM, ``a * b + c`` of floats is one ``fma`` (as TVM's LowerIntrin contracts it for targets with an
        fma rule)."""
        if self.llvm and _dt.is_float(op.dtype):
            for mul, addend in ((op.b, op.a), (op.a, op.b)):
                if isinstance(mul, E.Mul):
                    return self.visit_expr(E.Call(op.dtype, "tir.fma", (mul.a, mul.b, addend)))
        return super().visit_add(op)

    def visit_floor_div(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if _dt.is_float(op.dtype):
            return _call("floor", E.Div(a, b))
        if self._nonneg_dividend(a, b):
            return E.Div(a, b)
        q, r = E.Div(a, b), E.Mod(a, b)
        return E.Select(self._needs_fix(r, b), E.Sub(q, _one(q)), q)

    def visit_floor_mod(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if _dt.is_float(op.dtype):
            return E.Sub(a, E.Mul(_call("floor", E.Div(a, b)), b))
        if self._nonneg_dividend(a, b):
            return E.Mod(a, b)
        r = E.Mod(a, b)
        return E.Select(self._needs_fix(r, b), E.Add(r, b), r)

    def _nonneg_dividend(self, a, b):
        return self.analyzer.const_int_bound(a).min_value >= 0 and self.analyzer.const_int_bound(b).min_value > 0

    def _needs_fix(self, r, b):
        """Truncated and floored results differ when the remainder is non-zero with the sign opposite to ``b``'s."""
        zero = _zero(r)
        if self.analyzer.const_int_bound(b).min_value > 0:
            return E.LT(r, zero)
        return E.And(E.NE(r, zero), E.NE(E.LT(r, zero), E.LT(b, _zero(b))))


def _zero(e):
    return E.Broadcast(E.IntImm(_dt.element(e.dtype), 0), _dt.lanes(e.dtype)) if _dt.lanes(e.dtype) > 1 \
        else E.IntImm(e.dtype, 0)


def _one(e):
    return E.Broadcast(E.IntImm(_dt.element(e.dtype), 1), _dt.lanes(e.dtype)) if _dt.lanes(e.dtype) > 1 \
        else E.IntImm(e.dtype, 1)


def _llvm_suffix(dtype):
    """The type suffix of an overloaded LLVM intrinsic: ``f32``, ``v4f64``."""
    t = _dt.DataType.parse(dtype)
    return f"{'' if t.lanes == 1 else f'v{t.lanes}'}f{t.bits}"


def _targets_llvm(func):
    target = func.attrs.get("target") if func.attrs else None
    kind = getattr(getattr(target, "kind", None), "name", None) or str(target or "").split(" ")[0]
    return kind == "llvm"


def lower_intrin(func):
    """Return ``func`` with intrinsics expanded and floor division lowered (see the module docstring)."""
    return func.with_body(IntrinLowerer(llvm=_targets_llvm(func)).visit_stmt(func.body))


@register_pass("tir.LowerIntrin")
@dataclass(frozen=True)
class LowerIntrin(PrimFuncPass):
    """Lower intrinsics to what the C and LLVM backends emit (TVM's ``tir.transform.LowerIntrin``)."""

    info = PassInfo(0, "tir.LowerIntrin")

    def transform_function(self, func, mod, ctx):
        return lower_intrin(func)
