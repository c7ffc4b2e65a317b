"""Rewrite rules for ``*``, truncated ``/`` and truncated ``%`` (TVM's ``RewriteSimplifier`` for Mul, Div and Mod).

Truncated division rounds toward zero, so most identities need operands known to be non-negative: the conditions ask
the simplifier (``s.can_prove_ge``), which asks the analyzer's bounds.
"""

from ...tir import expr as E
from ..pattern import (
    broadcast,
    floordiv,
    floormod,
    make_const,
    max_,
    min_,
    one_like,
    ramp,
    rewrite,
    rewrite_rec,
    truncdiv,
    truncmod,
    zero_like,
)
from .common import always, b1, c1, c2, c3, c4, check_divisor, index, lanes, s1, v, vector, x, y, z


def _ge0(*names):
    return lambda m, s: all(s.can_prove_ge(m[n], 0) for n in names)


def mul_zero_float_broadcast(node, s):
    """``broadcast(0.0) * x -> broadcast(0.0)``."""
    m = (broadcast(c4, lanes) * x).match(node)
    return node.a if m is not None and m.c4.value == 0.0 else None


MUL = (
    (vector, (
        rewrite(broadcast(x, lanes) * broadcast(y, lanes), broadcast(x * y, lanes)),
        rewrite([ramp(b1, s1, lanes) * broadcast(x, lanes), broadcast(x, lanes) * ramp(b1, s1, lanes)],
                ramp(b1 * x, s1 * x, lanes)),
        mul_zero_float_broadcast,
    )),
    (index, (
        rewrite((x + c1) * c2, x * c2 + c1 * c2),
        rewrite((x * c1) * c2, x * (c1 * c2)),
        rewrite([min_(x, y) * max_(x, y), max_(x, y) * min_(x, y)], x * y),
        rewrite(floordiv(x - floormod(x, c2), c1) * c1, x - floormod(x, c2), lambda m, s: v(m.c1) == -v(m.c2)),
        rewrite_rec(x * (c1 * y), (x * y) * c1),
        rewrite_rec(c1 * x, x * c1),
        rewrite_rec((x - y) * c1, (y - x) * (0 - c1), lambda m, s: v(m.c1) < 0),
    )),
)
"""Rules for ``Mul`` nodes."""


def div_by_float(node, s):
    """``x / c -> x * (1 / c)`` for a float constant ``c``."""
    if type(node.b) is E.FloatImm:
        return E.Mul(node.a, make_const(1.0 / node.b.value, node.b.dtype))
    return None


def _ramp_block(s, base, stride, divisor, n, floor):
    """Whether every lane of ``ramp(base, stride, n)`` falls in the same block of ``divisor`` (from the base's modular
    set)."""
    mod = s.modular(base)
    div = (lambda a, b: a // b) if floor else (lambda a, b: int(a / b))
    return mod, div(mod.base, divisor) == div(mod.base + (n - 1) * stride, divisor)


def div_ramp(node, s):
    """``ramp(b, c1, n) / broadcast(c2)``: a ramp when ``c2`` divides ``c1``, a broadcast when all lanes agree."""
    m = truncdiv(ramp(b1, c1, lanes), broadcast(c2, lanes)).match(node)
    if m is None:
        return None
    check_divisor(m.c2, node)
    k1, k2 = v(m.c1), v(m.c2)
    if k1 % k2 == 0:
        return ramp(truncdiv(b1, c2), truncdiv(c1, c2), lanes).eval(m)
    if s.can_prove_ge(m.b1, 0) and isinstance(m.lanes, int):
        mod, same = _ramp_block(s, m.b1, k1, k2, m.lanes, floor=False)
        if mod.coeff % k2 == 0 and same:
            return broadcast(truncdiv(b1, c2), lanes).eval(m)
    return None


def truncdiv_scaled(node, s):
    """``truncdiv(x * c1, c2)``: ``x * (c1 / c2)`` or ``truncdiv(x, c2 / c1)`` when one constant divides the other."""
    m = truncdiv(x * c1, c2).match(node)
    if m is None:
        return None
    k1, k2 = v(m.c1), v(m.c2)
    if k1 > 0 and k2 > 0:
        if k1 % k2 == 0:
            return (x * truncdiv(c1, c2)).eval(m)
        if k2 % k1 == 0:
            return truncdiv(x, truncdiv(c2, c1)).eval(m)
    return None


def _div_cond(*names, strict=False):
    def cond(m, s):
        ok = v(m.c1) > 0 if strict else v(m.c1) >= 0
        return ok and v(m.c2) > 0 and v(m.c1) % v(m.c2) == 0 and all(s.can_prove_ge(n(m), 0) for n in names)
    return cond


def _m(name):
    return lambda m: m[name]


def _sum(a, b, sign=1):
    return lambda m: E.Add(m[a], m[b]) if sign > 0 else E.Sub(m[a], m[b])


DIV = (
    (always, (div_by_float,)),
    (vector, (
        rewrite(truncdiv(broadcast(x, lanes), broadcast(y, lanes)), broadcast(truncdiv(x, y), lanes)),
        div_ramp,
    )),
    (index, (
        rewrite(truncdiv(truncdiv(x, c1), c2), truncdiv(x, c1 * c2), lambda m, s: v(m.c1) > 0 and v(m.c2) > 0),
        rewrite(truncdiv(truncdiv(x, c1) + c2, c3), truncdiv(x + c1 * c2, c1 * c3),
                lambda m, s: v(m.c1) > 0 and v(m.c2) >= 0 and v(m.c3) > 0 and s.can_prove_ge(m.x, 0)),
        truncdiv_scaled,
        rewrite(truncdiv(x, x), one_like(x)),
        rewrite([truncdiv(x * c1, x), truncdiv(c1 * x, x)], c1),
        rewrite(truncdiv(x * c1 + y, c2), x * truncdiv(c1, c2) + truncdiv(y, c2), _div_cond(_m("x"), _m("y"))),
        rewrite(truncdiv(min_(x * c1, y), c2), min_(x * truncdiv(c1, c2), truncdiv(y, c2)),
                _div_cond(_m("x"), _m("y"))),
        rewrite(truncdiv(max_(x * c1, y), c2), max_(x * truncdiv(c1, c2), truncdiv(y, c2)),
                _div_cond(_m("x"), _m("y"))),
        rewrite(truncdiv(y + x * c1, c2), truncdiv(y, c2) + x * truncdiv(c1, c2), _div_cond(_m("x"), _m("y"))),
        rewrite(truncdiv(min_(y, x * c1), c2), min_(truncdiv(y, c2), x * truncdiv(c1, c2)),
                _div_cond(_m("x"), _m("y"))),
        rewrite(truncdiv(max_(y, x * c1), c2), max_(truncdiv(y, c2), x * truncdiv(c1, c2)),
                _div_cond(_m("x"), _m("y"))),
        rewrite(truncdiv(x * c1 + y + z, c2), x * truncdiv(c1, c2) + truncdiv(y + z, c2),
                _div_cond(_m("x"), _sum("y", "z"))),
        rewrite(truncdiv(x * c1 - y + z, c2), x * truncdiv(c1, c2) + truncdiv(z - y, c2),
                _div_cond(_m("x"), _sum("z", "y", -1))),
        rewrite(truncdiv(x * c1 + y - z, c2), x * truncdiv(c1, c2) + truncdiv(y - z, c2),
                _div_cond(_m("x"), _sum("y", "z", -1))),
        rewrite(truncdiv(y + x * c1 + z, c2), x * truncdiv(c1, c2) + truncdiv(y + z, c2),
                _div_cond(_m("x"), _sum("y", "z"), strict=True)),
        rewrite(truncdiv(x + c1, c2), truncdiv(x, c2) + truncdiv(c1, c2), _div_cond(_m("x"), strict=True)),
        rewrite([truncdiv(x + y, x), truncdiv(y + x, x)], truncdiv(y, x) + 1, _ge0("x", "y")),
        rewrite([truncdiv((x + y) + z, x), truncdiv((y + x) + z, x), truncdiv(y + (z + x), x),
                 truncdiv(y + (x + z), x)], truncdiv(y + z, x) + 1,
                lambda m, s: s.can_prove_ge(m.x, 0) and s.can_prove_ge(E.Add(m.y, m.z), 0)),
        rewrite([truncdiv(x * y, y), truncdiv(y * x, y)], x, _ge0("x", "y")),
        rewrite([truncdiv(x * z + y, z), truncdiv(z * x + y, z)], x + truncdiv(y, z), _ge0("x", "y", "z")),
        rewrite([truncdiv(y + x * z, z), truncdiv(y + z * x, z)], truncdiv(y, z) + x, _ge0("x", "y", "z")),
    )),
)
"""Rules for truncated ``Div`` nodes (and float division)."""


def mod_ramp(node, s):
    """``ramp(b, c1, n) % broadcast(c2)``: from ``b``'s modular set when ``b >= 0``."""
    m = truncmod(ramp(b1, c1, lanes), broadcast(c2, lanes)).match(node)
    if m is None:
        return None
    check_divisor(m.c2, node)
    k1, k2 = v(m.c1), v(m.c2)
    if k1 % k2 == 0:
        return broadcast(truncmod(b1, c2), lanes).eval(m)
    if s.can_prove_ge(m.b1, 0):
        scalable = not isinstance(m.lanes, int)
        mod, same = _ramp_block(s, m.b1, k1, k2, 1 if scalable else m.lanes, floor=False)
        if mod.coeff % k2 == 0:
            r = E.Ramp(make_const(_tmod(mod.base, k2), m.b1.dtype), m.c1, m.lanes)
            return r if same and not scalable else E.Mod(r, E.Broadcast(m.c2, m.lanes))
    return None


def _tmod(a, b):
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def truncmod_negative_divisor(node, s):
    """``x % c -> x % -c`` for a negative constant (truncated remainder takes the sign of ``x``)."""
    m = truncmod(x, c1).match(node)
    if m is None or v(m.c1) >= 0:
        return None
    return s.recursive_rewrite(E.Mod(m.x, make_const(-v(m.c1), node.dtype)))


def truncmod_modular(node, s):
    """``x % c`` is a constant when ``x >= 0`` and its modular set fixes the residue."""
    m = truncmod(x, c1).match(node)
    if m is None or v(m.c1) <= 0:
        return None
    mod = s.modular(m.x)
    if mod.coeff % v(m.c1) == 0 and s.can_prove_ge(m.x, 0):
        return make_const(mod.base % v(m.c1), node.dtype)
    return None


MOD = (
    (vector, (
        rewrite(truncmod(broadcast(x, lanes), broadcast(y, lanes)), broadcast(truncmod(x, y), lanes)),
        mod_ramp,
    )),
    (index, (
        rewrite(truncmod(x * c1, c2), zero_like(x), lambda m, s: v(m.c2) != 0 and v(m.c1) % v(m.c2) == 0),
        rewrite(truncmod(x * c1 + y, c2), truncmod(y, c2),
                lambda m, s: v(m.c2) > 0 and v(m.c1) % v(m.c2) == 0 and s.can_prove_ge(E.Mul(m.x, m.c1), 0)
                and s.can_prove_ge(m.y, 0)),
        rewrite(truncmod(x + c1, c2), truncmod(x, c2),
                lambda m, s: v(m.c2) > 0 and v(m.c1) >= 0 and v(m.c1) % v(m.c2) == 0 and s.can_prove_ge(m.x, 0)),
        rewrite(truncmod(x + y * c1, c2), truncmod(x, c2),
                lambda m, s: v(m.c2) > 0 and v(m.c1) % v(m.c2) == 0 and s.can_prove_ge(m.x, 0)
                and s.can_prove_ge(E.Mul(m.y, m.c1), 0)),
        truncmod_negative_divisor,
        truncmod_modular,
    )),
)
"""Rules for truncated ``Mod`` nodes."""
