"""The rewrite rules of the TIR simplifier: one named function per identity, grouped by node kind in :data:`RULES`.

Each rule takes a node whose operands are already simplified and the simplifier ``s`` (for bounds, modular sets and
keys), and returns the rewritten expression or ``None`` when it does not apply. Rules on integers rely on index
arithmetic not overflowing, as TVM's do. The driver (:mod:`kiln.arith.rewrite_simplify`) re-simplifies each result and
applies the rules to a fixpoint.
"""

from math import gcd

from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir import op as _op
from ..tir.stmt_functor import post_order_visit
from .const_int_bound import NEG_INF, POS_INF
from .linear import LinearForm, from_linear, is_index_dtype, linear_form
from .rewrite_min_max import absorb_min_max, factor_min_max


def _const_int(e):
    return e.value if type(e) is E.IntImm else None


def _finite(b):
    return b.min_value != NEG_INF and b.max_value != POS_INF


def _form_bound(s, form):
    """Bound of a linear form from the bounds of its atoms."""
    lo = hi = form.const
    for atom, coeff in form.terms.values():
        b = s.bound(atom)
        if not _finite(b):
            return None
        x, y = coeff * b.min_value, coeff * b.max_value
        lo += min(x, y)
        hi += max(x, y)
    return lo, hi


# ---- sums and products ------------------------------------------------------------------------------------------
def canonicalize_linear(node, s):
    """Collect a sum/difference/product-by-constant into canonical linear form: like terms combine
    (``x*4 + x*2 -> x*6``, ``x - x -> 0``), constants gather at the end, and
    ``floordiv(e, c)*c + floormod(e, c) -> e``."""
    if not is_index_dtype(node.dtype):
        return None
    if type(node) is E.Mul and _const_int(node.a) is None and _const_int(node.b) is None:
        return None
    return s.rebuilt_if_changed(node, from_linear(linear_form(node, s.key_memo)))


def fold_vector_arith(node, s):
    """Broadcast/Ramp arithmetic: ``Broadcast(a) + Broadcast(b) -> Broadcast(a + b)``,
    ``Ramp(b1, s1) + Ramp(b2, s2) -> Ramp(b1 + b2, s1 + s2)``, ``Ramp(b, s) * Broadcast(c) -> Ramp(b*c, s*c)``."""
    a, b = node.a, node.b
    kind = type(node)
    build = {E.Add: _op.add, E.Sub: _op.subtract, E.Mul: _op.multiply}.get(kind)
    if build is None:
        return None
    if type(a) is E.Broadcast and type(b) is E.Broadcast:
        return E.Broadcast(build(a.value, b.value), a.lanes)
    if kind in (E.Add, E.Sub):
        if type(a) is E.Ramp and type(b) is E.Ramp:
            return E.Ramp(build(a.base, b.base), build(a.stride, b.stride), a.lanes)
        if type(a) is E.Ramp and type(b) is E.Broadcast:
            return E.Ramp(build(a.base, b.value), a.stride, a.lanes)
        if type(a) is E.Broadcast and type(b) is E.Ramp:
            stride = b.stride if kind is E.Add else _op.multiply(b.stride, -1)
            return E.Ramp(build(a.value, b.base), stride, a.lanes)
    if kind is E.Mul and _dt.is_integer(node.dtype):
        if type(a) is E.Ramp and type(b) is E.Broadcast:
            return E.Ramp(_op.multiply(a.base, b.value), _op.multiply(a.stride, b.value), a.lanes)
        if type(a) is E.Broadcast and type(b) is E.Ramp:
            return E.Ramp(_op.multiply(b.base, a.value), _op.multiply(b.stride, a.value), a.lanes)
    return None


# ---- division ---------------------------------------------------------------------------------------------------
def _split_by(form, c):
    """Split a linear form into ``q * c + r``: q holds terms whose coefficient ``c`` divides (and ``const // c``)."""
    q, r = LinearForm(form.dtype), LinearForm(form.dtype)
    for key, (atom, coeff) in form.terms.items():
        if coeff % c == 0:
            q.add_term(key, atom, coeff // c)
        else:
            r.add_term(key, atom, coeff)
    q.const, r.const = form.const // c, form.const % c
    return q, r


def trunc_to_floor(node, s):
    """Exact division (``truncdiv(x*8 + 8, 4) -> x*2 + 2``, ``truncmod(x*8, 4) -> 0``), and ``truncdiv(a, b) ->
    floordiv(a, b)``, ``truncmod -> floormod`` when ``a >= 0`` and ``b > 0`` (they agree)."""
    if not is_index_dtype(node.dtype):
        return None
    c = _const_int(node.b)
    if c is not None and c != 0:
        m = s.modular(node.a)
        if m.coeff % c == 0 and m.base % c == 0:  # exact: both divisions agree
            if type(node) is E.Mod:
                return _op.const(0, node.dtype)
            form = linear_form(node.a, s.key_memo)
            if all(co % c == 0 for _, co in form.terms.values()) and form.const % c == 0:
                return from_linear(LinearForm(form.dtype, {k: [a_, co // c] for k, (a_, co) in form.terms.items()},
                                              form.const // c))
    if s.bound(node.a).min_value >= 0 and s.bound(node.b).min_value > 0:
        return (E.FloorDiv if type(node) is E.Div else E.FloorMod)(node.a, node.b)
    return None


def simplify_floordiv(node, s):
    """``floordiv(a, c)`` for a constant ``c > 0``: decided by bounds when ``a`` stays in one block of ``c``;
    ``floordiv(floordiv(x, c1), c2) -> floordiv(x, c1*c2)``; ``floordiv(q*c + r, c) -> q + floordiv(r, c)``;
    ``floordiv(g*t + k, c) -> floordiv(t + k//g, c//g)`` for ``g = gcd(coefficients, c)``."""
    c = _const_int(node.b)
    if c is None or c <= 0 or not is_index_dtype(node.dtype):
        return None
    a = node.a
    b = s.bound(a)
    if _finite(b) and b.min_value // c == b.max_value // c:
        return _op.const(b.min_value // c, node.dtype)
    if type(a) is E.FloorDiv and (c1 := _const_int(a.b)) is not None and c1 > 0:
        return E.FloorDiv(a.a, E.IntImm(node.dtype, c1 * c))
    form = linear_form(a, s.key_memo)
    q, r = _split_by(form, c)
    if q.terms or (q.const and r.terms):
        return _op.add(from_linear(q), E.FloorDiv(from_linear(r), node.b))
    g = gcd(r.coeff_gcd(), c)
    if g > 1 and r.terms:
        k1 = r.const // g
        t = LinearForm(r.dtype, {k: [a_, co // g] for k, (a_, co) in r.terms.items()}, k1)
        return E.FloorDiv(from_linear(t), E.IntImm(node.dtype, c // g))
    return None


def simplify_floormod(node, s):
    """``floormod(a, c)`` for a constant ``c > 0``: ``a - k*c`` when bounds put ``a`` in block ``k``; the constant of
    a modular set ``a = m*c*j + base``; ``floormod(floormod(x, c1), c) -> floormod(x, c)`` when ``c | c1``;
    ``floormod(q*c + r, c) -> floormod(r, c)``; ``floormod(g*t + k, c) -> floormod(t + k//g, c//g)*g + k%g``."""
    c = _const_int(node.b)
    if c is None or c <= 0 or not is_index_dtype(node.dtype):
        return None
    if c == 1:
        return _op.const(0, node.dtype)
    a = node.a
    b = s.bound(a)
    if _finite(b) and b.min_value // c == b.max_value // c:
        return _op.subtract(a, _op.const((b.min_value // c) * c, node.dtype))
    m = s.modular(a)
    if m.coeff % c == 0:
        return _op.const(m.base % c, node.dtype)
    if type(a) is E.FloorMod and (c1 := _const_int(a.b)) is not None and c1 > 0 and c1 % c == 0:
        return E.FloorMod(a.a, node.b)
    form = linear_form(a, s.key_memo)
    q, r = _split_by(form, c)
    if q.terms or q.const:
        return E.FloorMod(from_linear(r), node.b)
    g = gcd(r.coeff_gcd(), c)
    if g > 1 and r.terms:
        k1, k2 = r.const // g, r.const % g
        t = LinearForm(r.dtype, {k: [a_, co // g] for k, (a_, co) in r.terms.items()}, k1)
        inner = E.FloorMod(from_linear(t), E.IntImm(node.dtype, c // g))
        return _op.add(E.Mul(inner, E.IntImm(node.dtype, g)), k2)
    return None


def simplify_vector_div_mod(node, s):
    """``floordiv(Ramp(b, st, n), Broadcast(c)) -> Broadcast(floordiv(b, c))`` and the matching
    ``floormod -> Ramp(floormod(b, c), st, n)`` when the ramp stays inside one block of ``c`` (known from b's
    modular set); ``Broadcast`` by ``Broadcast`` becomes a Broadcast."""
    a, b = node.a, node.b
    build = _op.floordiv if type(node) is E.FloorDiv else _op.floormod
    if type(a) is E.Broadcast and type(b) is E.Broadcast:
        return E.Broadcast(build(a.value, b.value), a.lanes)
    if type(a) is not E.Ramp or type(b) is not E.Broadcast:
        return None
    c, st = _const_int(b.value), _const_int(a.stride)
    if c is None or st is None or c <= 0 or st < 0:
        return None
    m = s.modular(a.base)
    if m.coeff % c != 0 or m.base % c + st * (a.lanes - 1) >= c:
        return None
    if type(node) is E.FloorDiv:
        return E.Broadcast(_op.floordiv(a.base, b.value), a.lanes)
    return E.Ramp(_op.floormod(a.base, b.value), a.stride, a.lanes)


# ---- min / max --------------------------------------------------------------------------------------------------
def simplify_min_max(node, s):
    """``min(a, a) -> a``; ``min(a, b) -> a`` when bounds prove ``a <= b`` (so ``min(x + 1, x + 3) -> x + 1``);
    ``min(min(x, c1), c2) -> min(x, min(c1, c2))``; Broadcasts combine. ``max`` likewise."""
    a, b = node.a, node.b
    is_min = type(node) is E.Min
    if s.key(a) == s.key(b):
        return a
    if type(a) is E.Broadcast and type(b) is E.Broadcast:
        return E.Broadcast((_op.minimum if is_min else _op.maximum)(a.value, b.value), a.lanes)
    if _dt.is_integer(node.dtype) and (found := absorb_min_max(node, s)) is not None:
        return found
    if is_index_dtype(node.dtype) and (found := factor_min_max(node, s)) is not None:
        return found
    if is_index_dtype(node.dtype):
        diff = LinearForm(node.dtype)
        diff.add(linear_form(a, s.key_memo))
        diff.add(linear_form(b, s.key_memo), -1)
        bound = _form_bound(s, diff)
        if bound is not None:
            if bound[1] <= 0:
                return a if is_min else b
            if bound[0] >= 0:
                return b if is_min else a
    if type(a) is type(node) and _const_int(a.b) is not None and _const_int(b) is not None:
        pick = min if is_min else max
        return type(node)(a.a, E.IntImm(node.dtype, pick(a.b.value, b.value)))
    return None


# ---- comparisons ------------------------------------------------------------------------------------------------
def _reads_data(node) -> bool:
    """Whether a comparison involves values read from memory or computed by calls: tensor data, whose arithmetic
    wraps, rather than index arithmetic over variables, which (as in TVM) is assumed not to overflow."""
    found = []
    post_order_visit(node, lambda e: found.append(e) if isinstance(e, E.BufferLoad | E.Call) else None)
    return bool(found)


def _exact_in(dtype, s, a, b, diff):
    """Whether ``a``, ``b`` and any rearrangement of ``a - b`` (``diff``) into two sides are computed without
    wrapping around ``dtype``: moving terms across a comparison of data values is exact only then
    (``x * y > -z`` over loaded int32 values is not ``0 < z + x * y``, which overflows)."""
    bits = _dt.DataType.parse(dtype).bits
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    forms = [linear_form(a, s.key_memo), linear_form(b, s.key_memo),
             LinearForm(diff.dtype, {k: v for k, v in diff.terms.items() if v[1] > 0}, diff.const),
             LinearForm(diff.dtype, {k: [t, -c] for k, (t, c) in diff.terms.items() if c < 0}, -diff.const)]
    for form in forms:
        bound = _form_bound(s, form)
        if bound is None or bound[0] < low or bound[1] > high:
            return False
    return True


def _split_min_max_compare(node):
    """A comparison with a min or max side is one of its operands each (TVM's rules; order only, nothing wraps):
    ``z < min(x, y) -> z < x && z < y``, ``z < max(x, y) -> z < x || z < y``, ``min(x, y) < z -> x < z || y < z``,
    ``max(x, y) < z -> x < z && y < z`` (and the same for ``<=``)."""
    kind, a, b = type(node), node.a, node.b
    if type(b) in (E.Min, E.Max):
        join = _op.logical_and if type(b) is E.Min else _op.logical_or
        return join(kind(a, b.a), kind(a, b.b))
    if type(a) in (E.Min, E.Max):
        join = _op.logical_or if type(a) is E.Min else _op.logical_and
        return join(kind(a.a, b), kind(a.b, b))
    return None


def simplify_compare(node, s):
    """Integer comparisons: ``a > b -> b < a``, ``a >= b -> b <= a``; decided when the bounds of ``a - b`` settle it
    or a constraint in scope states it; otherwise normalized to ``P < N + k`` (terms with positive coefficients left,
    the rest right, common factors divided out, e.g. ``x*4 < 8 -> x < 2``)."""
    kind = type(node)
    if kind is E.GT:
        return E.LT(node.b, node.a)
    if kind is E.GE:
        return E.LE(node.b, node.a)
    if type(node.a) is E.Broadcast and type(node.b) is E.Broadcast:
        return E.Broadcast(kind(node.a.value, node.b.value), node.a.lanes)
    known = s.known_fact(node)
    if known is not None:
        return _op.const(known, node.dtype)
    if not is_index_dtype(node.a.dtype):
        return None
    # index arithmetic only: a bound that reads tensor data (a data-dependent reduction extent) stays one comparison,
    # which the loop it guards proves true
    if kind in (E.LT, E.LE) and not _reads_data(node) and (split := _split_min_max_compare(node)) is not None:
        return split
    d = LinearForm(node.a.dtype)
    d.add(linear_form(node.a, s.key_memo))
    d.add(linear_form(node.b, s.key_memo), -1)
    bound = _form_bound(s, d)
    if bound is not None:
        lo, hi = bound
        verdict = {
            E.LT: True if hi < 0 else False if lo >= 0 else None,
            E.LE: True if hi <= 0 else False if lo > 0 else None,
            E.EQ: True if lo == hi == 0 else False if lo > 0 or hi < 0 else None,
            E.NE: False if lo == hi == 0 else True if lo > 0 or hi < 0 else None,
        }[kind]
        if verdict is not None:
            return _op.const(verdict, node.dtype)
    if _dt.DataType.parse(node.a.dtype).is_uint():
        return None
    if _reads_data(node) and not _exact_in(node.a.dtype, s, node.a, node.b, d):
        return None
    g = d.coeff_gcd()
    c = d.const
    if g > 1:
        if kind is E.LT:
            c = d.const // g  # g*t + c < 0  <=>  t + floor(c/g) < 0
        elif kind is E.LE:
            c = -(-d.const // g)  # g*t + c <= 0  <=>  t + ceil(c/g) <= 0
        elif d.const % g:
            return _op.const(kind is E.NE, node.dtype)
        else:
            c = d.const // g
        d = LinearForm(d.dtype, {k: [a_, co // g] for k, (a_, co) in d.terms.items()}, c)
    pos = LinearForm(d.dtype, {k: v for k, v in d.terms.items() if v[1] > 0})
    neg = LinearForm(d.dtype, {k: [a_, -co] for k, (a_, co) in d.terms.items() if co < 0})
    if not neg.terms:
        lhs, rhs = from_linear(pos), _op.const(-d.const, d.dtype)
    elif not pos.terms:
        lhs, rhs = _op.const(d.const, d.dtype), from_linear(neg)
    else:
        neg.const = -d.const
        lhs, rhs = from_linear(pos), from_linear(neg)
    return s.rebuilt_if_changed(node, kind(lhs, rhs))


# ---- logic ------------------------------------------------------------------------------------------------------
def _negate(e):
    kind = type(e)
    if kind is E.LT:
        return E.LE(e.b, e.a)
    if kind is E.LE:
        return E.LT(e.b, e.a)
    if kind is E.EQ:
        return E.NE(e.a, e.b)
    if kind is E.NE:
        return E.EQ(e.a, e.b)
    if kind is E.Not:
        return e.a
    return None


def simplify_not(node, s):
    """``!!x -> x``, ``!(a < b) -> b <= a``, ``!(a == b) -> a != b``, De Morgan on ``&&``/``||``."""
    a = node.a
    if type(a) is E.IntImm:
        return _op.const(not a.value, node.dtype)
    negated = _negate(a)
    if negated is not None:
        return negated
    if type(a) is E.And:
        return E.Or(E.Not(a.a), E.Not(a.b))
    if type(a) is E.Or:
        return E.And(E.Not(a.a), E.Not(a.b))
    return None


def simplify_and_or(node, s):
    """``x && true -> x``, ``x && false -> false``, ``x && x -> x``, ``x && !x -> false`` (and the ``||`` duals)."""
    a, b = node.a, node.b
    is_and = type(node) is E.And
    for x, y in ((a, b), (b, a)):
        if type(x) is E.IntImm:
            return y if bool(x.value) == is_and else x
    if s.key(a) == s.key(b):
        return a
    na = _negate(a)
    if na is not None and s.key(na) == s.key(b):
        return _op.const(not is_and, node.dtype)
    return None


def simplify_select(node, s):
    """``select(true, a, b) -> a``, ``select(c, a, a) -> a``, and a condition a constraint in scope decides."""
    cond = node.condition
    if type(cond) is E.IntImm:
        return node.true_value if cond.value else node.false_value
    if s.key(node.true_value) == s.key(node.false_value):
        return node.true_value
    known = s.known_fact(cond)
    if known is not None:
        return node.true_value if known else node.false_value
    return None


def simplify_cast(node, s):
    """Constants cast at compile time; a cast to the value's own dtype disappears."""
    if node.value.dtype == node.dtype:
        return node.value
    if type(node.value) in (E.IntImm, E.FloatImm):
        return _op.cast(node.value, node.dtype)
    return None


def simplify_call(node, s):
    """``if_then_else`` with a known condition picks its branch; ``likely(const)`` is the constant; ``clz`` of a
    non-negative constant folds."""
    name = node.op.name
    if name == "tir.if_then_else":
        cond = node.args[0]
        known = cond.value if type(cond) is E.IntImm else s.known_fact(cond)
        if known is not None:
            return node.args[1] if known else node.args[2]
        if s.key(node.args[1]) == s.key(node.args[2]):
            return node.args[1]
    if name == "tir.likely" and type(node.args[0]) is E.IntImm:
        return node.args[0]
    if name == "tir.clz" and type(node.args[0]) is E.IntImm and node.args[0].value >= 0:
        # leading zeros of a constant: the operand's width less its significant bits (clz(0) is the width)
        bits = _dt.DataType.parse(node.args[0].dtype).bits
        return _op.const(bits - node.args[0].value.bit_length(), node.dtype)
    return None


RULES = {
    E.Add: (fold_vector_arith, canonicalize_linear),
    E.Sub: (fold_vector_arith, canonicalize_linear),
    E.Mul: (fold_vector_arith, canonicalize_linear),
    E.Div: (trunc_to_floor,),
    E.Mod: (trunc_to_floor,),
    E.FloorDiv: (simplify_vector_div_mod, simplify_floordiv),
    E.FloorMod: (simplify_vector_div_mod, simplify_floormod),
    E.Min: (simplify_min_max,),
    E.Max: (simplify_min_max,),
    E.LT: (simplify_compare,),
    E.LE: (simplify_compare,),
    E.GT: (simplify_compare,),
    E.GE: (simplify_compare,),
    E.EQ: (simplify_compare,),
    E.NE: (simplify_compare,),
    E.Not: (simplify_not,),
    E.And: (simplify_and_or,),
    E.Or: (simplify_and_or,),
    E.Select: (simplify_select,),
    E.Cast: (simplify_cast,),
    E.Call: (simplify_call,),
}
"""Rule table: node kind -> rules tried in order (the first that applies wins, then the driver re-simplifies)."""
