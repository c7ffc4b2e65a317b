"""Rewrites of intrinsic calls (TVM's ``RewriteSimplifier`` for Call nodes): constant ``likely``, shifts, ``ceil``
and ``clz`` fold; ``likely(c)`` is decided by a constraint in scope; a nested ``if_then_else`` with the same constant
``else`` value merges its conditions."""

import math

from ...tir import expr as E
from ...tir import op as _op
from ..pattern import make_const


def _name(call):
    return call.op.name


def _fold(call):
    name, args = _name(call), call.args
    if name == "tir.likely" and type(args[0]) is E.IntImm:
        return args[0]
    if name in ("tir.shift_right", "tir.shift_left") and all(type(a) is E.IntImm for a in args):
        return args[0] >> args[1] if name == "tir.shift_right" else args[0] << args[1]
    if name == "tir.ceil":
        arg = args[0]
        if type(arg) is E.IntImm:
            return _op.cast(arg, call.dtype)
        if type(arg) is E.FloatImm:
            return _op.cast(E.FloatImm(arg.dtype, float(math.ceil(arg.value))), call.dtype)
        if type(arg) is E.Call and _name(arg) == "tir.log2" and type(arg.args[0]) is E.FloatImm \
                and arg.args[0].value > 0:
            return E.FloatImm(call.dtype, float(math.ceil(math.log2(arg.args[0].value))))
    if name == "tir.clz" and type(args[0]) is E.IntImm:
        bits = int("".join(ch for ch in args[0].dtype if ch.isdigit()) or 32)
        value = args[0].value & ((1 << bits) - 1)
        return make_const(bits - value.bit_length(), call.dtype)
    return None


def simplify_call(call, s):
    """The rewritten call, or ``call`` itself."""
    folded = _fold(call)
    if folded is not None:
        return folded
    name = _name(call)
    if name == "tir.likely":
        known = s.known_literal(call.args[0])
        if known is not None:
            return known
    if name == "tir.if_then_else":
        cond, then_value, else_value = call.args
        if type(then_value) is E.Call and _name(then_value) == "tir.if_then_else":
            inner_cond, inner_then, inner_else = then_value.args
            if _is_number(inner_else) and _is_number(else_value) and \
                    s.analyzer.can_prove(_op.equal(inner_else, else_value)):
                return call.with_fields(args=(_op.logical_and(cond, inner_cond), inner_then, else_value))
    return call


def _is_number(e):
    if type(e) is E.Broadcast:
        e = e.value
    return type(e) in (E.IntImm, E.FloatImm)
