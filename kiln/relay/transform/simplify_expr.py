"""SimplifyExpr: local algebraic simplifications, each a rule function in one table.

Rules (each applies only when the result keeps the call's type):

* reshape-like chains (``reshape``, ``contrib_reverse_reshape``, ``squeeze``, ``expand_dims``, ``batch_flatten``)
  of static shapes collapse into one ``reshape`` to the final shape, and disappear when the final shape is the input
  shape;
* consecutive ``transpose``s and ``layout_transform``s compose, and identities disappear (``simplify_transpose.py``);
* ``cast`` to the input's dtype disappears; ``cast(cast(x, wide), t)`` becomes ``cast(x, t)`` when ``wide`` loses
  nothing of ``x``;
* ``x * 1``, ``1 * x``, ``x + 0``, ``0 + x``, ``x - 0``, ``x / 1`` become ``x`` (constants, ``ones``/``zeros`` or
  ``full`` of a constant); ``x + x`` becomes ``x * 2``;
* ``1 / sqrt(x)`` becomes ``rsqrt(x)``, ``c / sqrt(x)`` ``c * rsqrt(x)``; ``-(-x)`` becomes ``x``;
* constants in arithmetic, casts around a ``clip``, a ``clip`` its dtype cannot leave, and arg-reductions of
  dequantized tensors (``simplify_arith.py``);
* operators that read only the type of a ``like`` argument take it as attributes (``simplify_like.py``).
"""

from dataclasses import dataclass

import numpy as np

from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from .. import op as _op
from ..expr import Call, Constant, const
from .function_pass import FunctionPass
from .rewrite import RuleTable, rewrite

RULES = RuleTable()
_RESHAPE_LIKE = ("reshape", "contrib_reverse_reshape", "squeeze", "expand_dims", "nn.batch_flatten")


def _is_op(expr, *names) -> bool:
    return isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name in names


def _same_type(a, b) -> bool:
    return a.checked_type_ == b.checked_type_


@RULES.register(*_RESHAPE_LIKE)
def simplify_reshape(call):
    """A chain of reshape-like ops -> one reshape to the final shape (or nothing when the shape is unchanged)."""
    source = call.args[0]
    while _is_op(source, *_RESHAPE_LIKE):
        source = source.args[0]
    if _same_type(source, call):
        return source
    if source is call.args[0] or call.checked_type.is_dynamic:  # a dynamic target shape is not a newshape
        return None
    return _op.reshape(source, call.checked_type.shape)


def _widens(src: str, mid: str) -> bool:
    """Whether every value of dtype ``src`` survives a round trip through ``mid``."""
    try:
        return np.can_cast(np.dtype(src), np.dtype(mid), casting="safe")
    except TypeError:
        return False


@RULES.register("cast")
def simplify_cast(call):
    """cast to the same dtype -> x; cast(cast(x, wider), t) -> cast(x, t)."""
    data = call.args[0]
    if _same_type(data, call):
        return data
    if _is_op(data, "cast") and _widens(data.args[0].checked_type.dtype, data.attrs.dtype):
        return _op.cast(data.args[0], call.attrs.dtype)
    return None


def _is_constant_value(expr, value) -> bool:
    if isinstance(expr, Constant):
        arr = expr.data.handle
        return arr.size > 0 and bool(np.all(arr == value))
    if _is_op(expr, "ones"):
        return value == 1
    if _is_op(expr, "zeros"):
        return value == 0
    if _is_op(expr, "full") and isinstance(expr.args[0], Constant):  # full(c, shape): c everywhere
        return _is_constant_value(expr.args[0], value)
    return False


def _identity_operand(call, identity, commutative):
    lhs, rhs = call.args
    if _is_constant_value(rhs, identity) and _same_type(lhs, call):
        return lhs
    if commutative and _is_constant_value(lhs, identity) and _same_type(rhs, call):
        return rhs
    return None


@RULES.register("multiply")
def simplify_multiply_one(call):
    """x * 1 -> x, 1 * x -> x."""
    return _identity_operand(call, 1, True)


@RULES.register("add")
def simplify_add(call):
    """x + 0 -> x, 0 + x -> x; x + x -> x * 2."""
    lhs, rhs = call.args
    if lhs is rhs and _same_type(lhs, call):
        dtype = call.checked_type.dtype
        return _op.multiply(lhs, const(np.array(2, dtype=dtype), dtype=dtype))
    return _identity_operand(call, 0, True)


@RULES.register("subtract")
def simplify_subtract_zero(call):
    """x - 0 -> x."""
    return _identity_operand(call, 0, False)


@RULES.register("divide")
def simplify_divide(call):
    """x / 1 -> x; 1 / sqrt(x) -> rsqrt(x); c / sqrt(x) -> c * rsqrt(x) for a scalar constant c."""
    lhs, rhs = call.args
    if _is_op(rhs, "sqrt") and _same_type(rhs, call):
        if _is_constant_value(lhs, 1):
            return _op.rsqrt(rhs.args[0])
        if isinstance(lhs, Constant) and lhs.data.handle.size == 1:
            return _op.multiply(lhs, _op.rsqrt(rhs.args[0]))
    return _identity_operand(call, 1, False)


@RULES.register("negative")
def simplify_double_negative(call):
    """-(-x) -> x."""
    data = call.args[0]
    return data.args[0] if _is_op(data, "negative") else None


# the rule families kept in their own modules register into RULES when imported
from . import simplify_arith, simplify_like, simplify_transpose  # noqa: E402, F401


def simplify_expr(expr, mod=None):
    """Apply SimplifyExpr's rules to ``expr``; returns a typed expression."""
    return rewrite(expr, RULES, mod=mod)


@register_pass("SimplifyExpr")
@dataclass(frozen=True)
class SimplifyExpr(FunctionPass):
    """Apply the algebraic simplifications of the module docstring."""

    info = PassInfo(0, "SimplifyExpr", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return simplify_expr(func, mod)
