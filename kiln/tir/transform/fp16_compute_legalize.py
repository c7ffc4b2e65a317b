"""``tir.FP16ComputeLegalize``: float16 arithmetic rewritten to compute in float32 and round back after every
operation (TVM's ``BF16ComputeLegalize`` idea, for float16).

float16 is a storage and rounding format (:mod:`kiln.tir.dtype_semantics`): each operation rounds its result to
float16. A target without float16 arithmetic, and C, whose compilers may keep ``_Float16`` expressions in float
(excess precision) or contract ``a * b + c`` into one float16 FMA, get that rule spelled out in TIR instead:

* arithmetic (``+ - * / % min max``, floor division) on float16 operands becomes the float32 operation on the
  operands converted to float32, converted back: ``Cast(float16, Add(Cast(float32, a), Cast(float32, b)))``;
* comparisons compare the float32 conversions (exact);
* pure math intrinsics (``exp``, ``fabs``, ``floor`` ...) of float16 arguments call the float32 intrinsic and
  convert a float16 result back.

Loads, stores, selects, lets and casts move float16 values unchanged. Each conversion back to float16 is a rounding
the compiler must keep, so no two float16 operations fuse.
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from .. import expr as E
from ..dtype_semantics import compute_dtype
from ..functor import StmtExprMutator
from ..intrin import BINARY_MATH, PREDICATES, TERNARY_MATH, UNARY_MATH
from .function_pass import PrimFuncPass

_MATH = {f"tir.{name}" for name in (*UNARY_MATH, *BINARY_MATH, *TERNARY_MATH, *PREDICATES)}
_ARITHMETIC = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max)


def _widened(x):
    wide = compute_dtype(x.dtype)
    return x if wide == x.dtype else E.Cast(wide, x)


class _Legalizer(StmtExprMutator):
    def _binary(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if compute_dtype(a.dtype) == a.dtype:
            return op if a is op.a and b is op.b else type(op)(a, b, span=op.span)
        result = type(op)(_widened(a), _widened(b), span=op.span)
        return E.Cast(op.dtype, result) if isinstance(op, _ARITHMETIC) else result

    visit_add = visit_sub = visit_mul = visit_div = visit_mod = visit_floor_div = visit_floor_mod = _binary
    visit_min = visit_max = visit_eq = visit_ne = visit_lt = visit_le = visit_gt = visit_ge = _binary

    def visit_call(self, op):
        op = super().visit_call(op)
        if op.op.name not in _MATH or all(compute_dtype(a.dtype) == a.dtype for a in op.args):
            return op
        wide = E.Call(compute_dtype(op.dtype), op.op, tuple(_widened(a) for a in op.args), span=op.span)
        return wide if wide.dtype == op.dtype else E.Cast(op.dtype, wide)


def fp16_compute_legalize(func):
    """Return ``func`` with float16 arithmetic computed in float32 and rounded after every operation."""
    return func.with_body(_Legalizer().visit_stmt(func.body))


@register_pass("tir.FP16ComputeLegalize")
@dataclass(frozen=True)
class FP16ComputeLegalize(PrimFuncPass):
    """Compute float16 operations in float32, rounding back after each (see the module docstring)."""

    info = PassInfo(0, "tir.FP16ComputeLegalize")

    def transform_function(self, func, mod, ctx):
        return fp16_compute_legalize(func)
