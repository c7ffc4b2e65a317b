"""Rewrite rules for floored division and remainder (TVM's ``RewriteSimplifier`` for FloorDiv and FloorMod).

Floored division needs no sign conditions for most identities: ``floordiv(x * c1 + y, c1) == x + floordiv(y, c1)``
holds for every integer ``x`` and ``y`` when ``c1 > 0``.
"""

from ...tir import expr as E
from ...tir import op as _op
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
    zero_like,
)
from .common import b1, c1, c2, c3, check_divisor, index, lanes, v, vector, x, y, z


def _ramp_lanes_agree(s, m):
    """``(modular set of the base, whether all lanes of the ramp share one block of c2)``."""
    mod = s.modular(m.b1)
    k1, k2 = v(m.c1), v(m.c2)
    return mod, mod.base // k2 == (mod.base + (m.lanes - 1) * k1) // k2


def floordiv_ramp(node, s):
    """``floordiv(ramp(b, c1, n), broadcast(c2))``: a ramp when ``c2 | c1``, a broadcast when all lanes agree."""
    m = floordiv(ramp(b1, c1, lanes), broadcast(c2, lanes)).match(node)
    if m is None:
        return None
    check_divisor(m.c2, node)
    k1, k2 = v(m.c1), v(m.c2)
    if k1 % k2 == 0:
        return ramp(floordiv(b1, c2), floordiv(c1, c2), lanes).eval(m)
    if isinstance(m.lanes, int):
        mod, same = _ramp_lanes_agree(s, m)
        if same and (mod.coeff % k2 == 0 or (k2 % mod.coeff == 0 and mod.base + (m.lanes - 1) * k1 < mod.coeff)):
            return broadcast(floordiv(b1, c2), lanes).eval(m)
    return None


def floormod_ramp(node, s):
    """``floormod(ramp(b, c1, n), broadcast(c2))`` from ``b``'s modular set."""
    m = floormod(ramp(b1, c1, lanes), broadcast(c2, lanes)).match(node)
    if m is None:
        return None
    check_divisor(m.c2, node)
    k1, k2 = v(m.c1), v(m.c2)
    if k1 % k2 == 0:
        return broadcast(floormod(b1, c2), lanes).eval(m)
    base = make_const(s.modular(m.b1).base % k2, m.b1.dtype)
    if not isinstance(m.lanes, int):  # scalable: only the modular set of the base helps
        if s.modular(m.b1).coeff % k2 == 0:
            return E.FloorMod(E.Ramp(base, m.c1, m.lanes), E.Broadcast(m.c2, m.lanes))
        return None
    mod, same = _ramp_lanes_agree(s, m)
    if same:
        if mod.coeff % k2 == 0:
            return E.Ramp(base, m.c1, m.lanes)
        if k2 % mod.coeff == 0 and mod.base + (m.lanes - 1) * k1 < mod.coeff:
            return E.Ramp(floormod(b1, c2).eval(m), m.c1, m.lanes)
    if mod.coeff % k2 == 0:
        return E.FloorMod(E.Ramp(base, m.c1, m.lanes), E.Broadcast(m.c2, m.lanes))
    return None


_SCALED = (floordiv(x * c1 + y, c2), floordiv(x * c1, c2), floordiv(y + x * c1, c2))


def floordiv_scaled(node, s):
    """``floordiv(x * c1 + y, c2)``: the residue part dropped when its bounds fix it, or the divisor simplified to
    ``c2 / c1`` when ``c1 | c2`` and ``y % c2 < c1`` (built with the folding builders, as TVM's operators)."""
    for pat in _SCALED:
        m = pat.match(node)
        if m is not None:
            break
    else:
        return None
    k1, k2 = v(m.c1), v(m.c2)
    if k2 == 0:
        return None
    dtype = node.dtype
    yval = m.get("y", make_const(0, dtype))
    y_div = _op.floordiv(yval, k2)
    if s.can_prove_equal(y_div, 0):
        y_div = make_const(0, dtype)
    residue = _op.floordiv(_op.add(_op.multiply(m.x, k1 % k2), _op.floormod(yval, k2)), k2)
    bound = s.bound(residue)
    if bound.min_value == bound.max_value:
        return _op.add(_op.multiply(m.x, k1 // k2), _op.add(y_div, make_const(bound.max_value, dtype)))
    if k1 > 0 and k2 > 0 and k2 % k1 == 0 and s.can_prove_less(_op.floormod(yval, k2), k1):
        return _op.add(_op.floordiv(m.x, k2 // k1), y_div)
    return None


def _div_ok(m, s):
    return v(m.c2) > 0 and v(m.c1) % v(m.c2) == 0


FLOORDIV = (
    (vector, (
        rewrite(floordiv(broadcast(x, lanes), broadcast(y, lanes)), broadcast(floordiv(x, y), lanes)),
        floordiv_ramp,
    )),
    (index, (
        rewrite(floordiv(floordiv(x, c1), c2), floordiv(x, c1 * c2), lambda m, s: v(m.c1) > 0 and v(m.c2) > 0),
        rewrite(floordiv(floordiv(x, c1) + c2, c3), floordiv(x + c1 * c2, c1 * c3),
                lambda m, s: v(m.c1) > 0 and v(m.c3) > 0),
        floordiv_scaled,
        rewrite(floordiv(x, x), one_like(x)),
        rewrite([floordiv(x * c1, x), floordiv(c1 * x, x)], c1),
        rewrite(floordiv(floormod(x, 2) + 1, 2), floormod(x, 2)),
        rewrite(floordiv(min_(x * c1, y), c2), min_(x * floordiv(c1, c2), floordiv(y, c2)), _div_ok),
        rewrite(floordiv(max_(x * c1, y), c2), max_(x * floordiv(c1, c2), floordiv(y, c2)), _div_ok),
        rewrite(floordiv(min_(y, x * c1), c2), min_(floordiv(y, c2), x * floordiv(c1, c2)), _div_ok),
        rewrite(floordiv(max_(y, x * c1), c2), max_(floordiv(y, c2), x * floordiv(c1, c2)), _div_ok),
        rewrite(floordiv(x * c1 + y + z, c2), x * floordiv(c1, c2) + floordiv(y + z, c2), _div_ok),
        rewrite(floordiv(x * c1 + y + z, c2), floordiv(x, floordiv(c2, c1)),
                lambda m, s: v(m.c1) > 0 and v(m.c2) > 0 and v(m.c2) % v(m.c1) == 0
                and s.can_prove_equal(floordiv(y + z, c1).eval(m), 0)),
        rewrite([floordiv(x * c1 - y + z, c2), floordiv(x * c1 + z - y, c2)],
                x * floordiv(c1, c2) + floordiv(z - y, c2), _div_ok),
        rewrite(floordiv(y + x * c1 + z, c2), x * floordiv(c1, c2) + floordiv(y + z, c2), _div_ok),
        rewrite(floordiv(x + c1, c2), floordiv(x, c2) + floordiv(c1, c2), _div_ok),
        rewrite(floordiv(x * c1, x * c2), floordiv(c1, c2), lambda m, s: v(m.c2) > 0),
        rewrite([floordiv(x + y, x), floordiv(y + x, x)], floordiv(y, x) + 1, lambda m, s: s.can_prove_ge(m.x, 0)),
        rewrite([floordiv((x + y) + z, x), floordiv((y + x) + z, x), floordiv(y + (z + x), x),
                 floordiv(y + (x + z), x)], floordiv(y + z, x) + 1, lambda m, s: s.can_prove_ge(m.x, 0)),
        rewrite([floordiv(x * y, y), floordiv(y * x, y)], x, lambda m, s: s.can_prove_ge(m.y, 0)),
        rewrite([floordiv(x * z + y, z), floordiv(z * x + y, z)], x + floordiv(y, z),
                lambda m, s: s.can_prove_ge(m.z, 0)),
        rewrite([floordiv(y + x * z, z), floordiv(y + z * x, z)], floordiv(y, z) + x,
                lambda m, s: s.can_prove_ge(m.z, 0)),
        rewrite(floordiv(x - floormod(x, c1), c1), floordiv(x, c1), lambda m, s: v(m.c1) != 0),
    )),
)
"""Rules for ``FloorDiv`` nodes."""


def floormod_known(node, s):
    """``floormod(x, c)``: a constant when ``x``'s modular set fixes the residue, ``x`` when ``0 <= x < c``."""
    m = floormod(x, c1).match(node)
    if m is None or v(m.c1) <= 0:
        return None
    mod = s.modular(m.x)
    if mod.coeff % v(m.c1) == 0:
        return make_const(mod.base % v(m.c1), node.dtype)
    bound = s.bound(m.x)
    if bound.min_value >= 0 and bound.max_value < v(m.c1):
        return m.x
    return None


FLOORMOD = (
    (vector, (
        rewrite(floormod(broadcast(x, lanes), broadcast(y, lanes)), broadcast(floormod(x, y), lanes)),
        floormod_ramp,
    )),
    (index, (
        rewrite(floormod(x * c1, c2), floormod(x * floormod(c1, c2), c2), lambda m, s: v(m.c2) != 0),
        rewrite(floormod(x * c1 + y, c2), floormod(x, floordiv(c2, c1)) * c1 + y,
                lambda m, s: v(m.c1) > 0 and v(m.c2) > 0 and v(m.c2) % v(m.c1) == 0
                and s.can_prove_equal(floordiv(y, c1).eval(m), 0)),
        rewrite(floormod(x * c1 + y, c2), floormod(x * floormod(c1, c2) + y, c2), lambda m, s: v(m.c2) > 0),
        rewrite(floormod(x + c1, c2), floormod(x + floormod(c1, c2), c2),
                lambda m, s: v(m.c2) > 0 and (v(m.c1) >= v(m.c2) or v(m.c1) < 0)),
        rewrite(floormod(x + y * c1, c2), floormod(x + y * floormod(c1, c2), c2), lambda m, s: v(m.c2) > 0),
        rewrite(floormod(x * c1, x * c2), x * floormod(c1, c2), lambda m, s: v(m.c2) != 0),
        rewrite([floormod(x * y, y), floormod(y * x, y)], zero_like(y)),
        rewrite([floormod(x + floormod(z, y), y), floormod(floormod(z, y) + x, y)], zero_like(x),
                lambda m, s: s.can_prove_equal(floormod(x + z, y).eval(m), 0)),
        rewrite([floormod(x - floormod(x, z), y), floormod(floormod(x, z) - x, y)], zero_like(x),
                lambda m, s: s.can_prove_equal((y - z).eval(m), 0) or s.can_prove_equal((y + z).eval(m), 0)),
        floormod_known,
    )),
)
"""Rules for ``FloorMod`` nodes."""
