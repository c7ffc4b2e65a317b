"""Rules of the simplifier for ``min``/``max`` that TVM's rewrite simplifier has (used by
:func:`kiln.arith.rewrite_rules.simplify_min_max`): order identities, which hold for any integers, and factoring of
shared terms, which holds for index arithmetic (assumed not to overflow).
"""

from ..tir import expr as E
from .linear import LinearForm, linear_form


def _const_int(e):
    return e.value if type(e) is E.IntImm else None


def _chain(kind, e, s):
    """The keys of the operands of a nest of ``kind`` (min or max) nodes: ``min(min(x, y), z)`` gives x, y, z."""
    keys, stack = set(), [e]
    while stack:
        x = stack.pop()
        if type(x) is kind:
            stack.extend((x.a, x.b))
        else:
            keys.add(s.key(x))
    return keys


def absorb_min_max(node, s):
    """Order identities (TVM's rules; they hold for any integers): an operand already in a nest of the same kind
    on the other side adds nothing (``min(min(x, y), y) -> min(x, y)``), one in a nest of the other kind absorbs it
    (``min(max(x, y), x) -> x``), and ``min(max(x, y), min(x, y)) -> min(x, y)``."""
    kind = type(node)
    other = E.Max if kind is E.Min else E.Min
    a, b = node.a, node.b
    for this, that in ((a, b), (b, a)):
        if type(this) is kind and s.key(that) in _chain(kind, this, s):
            return this
        if type(this) is other and s.key(that) in _chain(other, this, s):
            return that
    for this, that in ((a, b), (b, a)):
        if type(this) is other and type(that) is kind and {s.key(this.a), s.key(this.b)} == {s.key(that.a),
                                                                                               s.key(that.b)}:
            return kind(this.a, this.b)
    if type(a) is other and type(b) is other:  # max(min(x, y), min(x, z)) -> min(max(y, z), x)
        for p, q in ((a.a, a.b), (a.b, a.a)):
            for u, v in ((b.a, b.b), (b.b, b.a)):
                if s.key(q) == s.key(u):
                    return other(kind(p, v), q)
    return None


def factor_min_max(node, s):
    """A shared term comes out (index arithmetic does not overflow): ``min(y + x, z + x) -> min(y, z) + x``,
    ``min(x - y, x - z) -> x - max(y, z)``, ``min(y - x, z - x) -> min(y, z) - x``."""
    kind = type(node)
    a, b = node.a, node.b
    if type(a) is E.Add and type(b) is E.Add:
        for p, q in ((a.a, a.b), (a.b, a.a)):
            for u, v in ((b.a, b.b), (b.b, b.a)):
                if s.key(q) == s.key(u) or s.key(q) == s.key(v):
                    rest = v if s.key(q) == s.key(u) else u
                    return E.Add(kind(p, rest), q)
    opposite = E.Max if kind is E.Min else E.Min
    if type(a) is type(b) and type(a) in (E.FloorDiv, E.Div) and (c := _const_int(a.b)) and c == _const_int(b.b):
        # division by a constant is monotonic: max(x // 10, y // 10) -> max(x, y) // 10 (a negative one reverses)
        return type(a)((kind if c > 0 else opposite)(a.a, b.a), a.b)
    if type(a) is E.Mul and (c1 := _const_int(a.b)) and (c2 := _const_int(b)) is not None and c2 % c1 == 0:
        # max(x * 3, 9) -> max(x, 3) * 3 (a negative factor reverses)
        return E.Mul((kind if c1 > 0 else opposite)(a.a, E.IntImm(node.dtype, c2 // c1)), a.b)
    for this, that in ((a, b), (b, a)):
        # floordiv(e, c) * c lies in (e - c, e]: against e - k it is decided when k settles the comparison
        if type(this) is E.Mul and type(this.a) is E.FloorDiv and (c := _const_int(this.b)) and c > 0 \
                and _const_int(this.a.b) == c:
            diff = LinearForm(node.dtype)
            diff.add(linear_form(this.a.a, s.key_memo))
            diff.add(linear_form(that, s.key_memo), -1)
            if not diff.terms:
                k = diff.const  # this - that lies in (k - c, k]
                larger = this if k - c + 1 >= 0 else that if k <= 0 else None
                if larger is not None:
                    smaller = that if larger is this else this
                    return larger if kind is E.Max else smaller
    if type(a) is E.Sub and type(b) is E.Sub:
        if s.key(a.a) == s.key(b.a):
            return E.Sub(a.a, (E.Max if kind is E.Min else E.Min)(a.b, b.b))
        if s.key(a.b) == s.key(b.b):
            return E.Sub(kind(a.a, b.a), a.b)
    return None
