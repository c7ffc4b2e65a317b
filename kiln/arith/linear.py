"""Canonical linear forms of integer expressions: ``sum(coeff_i * atom_i) + const``.

An *atom* is any subexpression that is not a sum, a difference or a product by a constant (a variable, a floordiv,
a load, a product of two variables ...). Atoms are identified by a structural key (:func:`expr_key`: node kind, dtype,
children's keys, variables by identity), so ``x * 4 + y - x * 3`` and ``y + x`` have the same form ``{x: 1, y: 1}``.
Collecting a form combines like terms and constants; it also folds the identity
``floordiv(e, c) * c * k + floormod(e, c) * k == e * k`` (what splitting and fusing loops produce).

:func:`from_linear` rebuilds an expression in a fixed shape: terms with positive coefficients in order of first
appearance (``x * 4``, not ``4 * x``), then subtracted negative terms, then the constant last.
"""

from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir import op as _op
from ..tir.dtype_semantics import overflow_is_undefined


def expr_key(e, memo=None):
    """A hashable structural key of ``e``: equal keys mean the same expression (variables compared by identity)."""
    if memo is None:
        memo = {}
    hit = memo.get(id(e))
    if hit is not None:
        return hit[1]
    key = _compute_key(e, memo)
    memo[id(e)] = (e, key)
    return key


def _value_key(v, memo):
    if isinstance(v, E.PrimExpr):
        return expr_key(v, memo)
    if isinstance(v, tuple):
        return tuple(_value_key(x, memo) for x in v)
    if isinstance(v, int | float | str | bool) or v is None:
        return v
    return ("id", id(v))


def _compute_key(e, memo):
    if isinstance(e, E.Var):
        return ("var", id(e))
    kind = type(e)
    if kind is E.IntImm or kind is E.FloatImm:
        return (kind.__name__, e.dtype, e.value)
    if kind is E.Call:
        return ("Call", e.dtype, e.op.name, tuple(expr_key(a, memo) for a in e.args))
    if kind is E.BufferLoad:
        return ("BufferLoad", id(e.buffer), tuple(expr_key(i, memo) for i in e.indices))
    names = _KEY_FIELDS.get(kind)
    if names is None:  # the public fields in declaration order (as ``Node.fields``), without span and dtype
        names = _KEY_FIELDS[kind] = tuple(k for k in e.fields() if k not in ("span", "dtype"))
    return (kind.__name__, e.dtype, *(_value_key(getattr(e, k), memo) for k in names))


_KEY_FIELDS: dict = {}


class LinearForm:
    """``sum(coeff * atom) + const`` with atoms keyed by :func:`expr_key`."""

    __slots__ = ("const", "dtype", "terms")

    def __init__(self, dtype, terms=None, const=0):
        self.dtype = dtype
        self.terms: dict = terms if terms is not None else {}  # key -> [atom, coeff]
        self.const = const

    def add_term(self, key, atom, coeff):
        entry = self.terms.get(key)
        if entry is None:
            if coeff:
                self.terms[key] = [atom, coeff]
        else:
            entry[1] += coeff
            if entry[1] == 0:
                del self.terms[key]

    def add(self, other, scale=1):
        for key, (atom, coeff) in other.terms.items():
            self.add_term(key, atom, coeff * scale)
        self.const += other.const * scale

    def scaled(self, c):
        out = LinearForm(self.dtype)
        out.add(self, c)
        return out

    def is_const(self):
        return not self.terms

    def coeff_gcd(self) -> int:
        from math import gcd

        g = 0
        for _, coeff in self.terms.values():
            g = gcd(g, coeff)
        return g


def is_index_dtype(dtype) -> bool:
    """Scalar int32/int64, where linear-form reasoning is valid: their arithmetic never overflows (wrapping types,
    uint32 or int8, are data, and ``x - x * 2`` has no negative coefficient in uint32: dtype_semantics)."""
    return _dt.lanes(dtype) == 1 and overflow_is_undefined(dtype)


def linear_form(e, memo=None) -> LinearForm:
    """Collect ``e`` (a scalar integer expression) into a :class:`LinearForm`."""
    if memo is None:
        memo = {}
    form = LinearForm(e.dtype)
    stack = [(e, 1)]
    while stack:
        node, scale = stack.pop()
        kind = type(node)
        if kind is E.IntImm:
            form.const += node.value * scale
        elif kind is E.Add:
            stack.append((node.b, scale))
            stack.append((node.a, scale))
        elif kind is E.Sub:
            stack.append((node.b, -scale))
            stack.append((node.a, scale))
        elif kind is E.Mul and type(node.b) is E.IntImm:
            stack.append((node.a, scale * node.b.value))
        elif kind is E.Mul and type(node.a) is E.IntImm:
            stack.append((node.b, scale * node.a.value))
        else:
            form.add_term(expr_key(node, memo), node, scale)
    _merge_div_mod(form, memo)
    return form


def _merge_div_mod(form, memo):
    """Replace ``floordiv(e, c) * (k * c) + floormod(e, c) * k`` by ``e * k`` (repeatedly)."""
    changed = True
    while changed:
        changed = False
        for key, (atom, coeff) in list(form.terms.items()):
            if type(atom) is not E.FloorMod or type(atom.b) is not E.IntImm or key not in form.terms:
                continue
            c = atom.b.value
            div_key = ("FloorDiv", atom.dtype, expr_key(atom.a, memo), expr_key(atom.b, memo))
            div = form.terms.get(div_key)
            if div is None or div[1] != coeff * c:
                if _merge_nested(form, key, atom, coeff, c, memo):
                    changed = True
                    break
                continue
            del form.terms[key]
            del form.terms[div_key]
            inner = linear_form(atom.a, memo)
            form.add(inner, coeff)
            changed = True
            break


def _merge_nested(form, key, atom, coeff, c, memo) -> bool:
    """Replace ``floordiv(floormod(e, c1), c) * (k * c) + floormod(e, c) * k`` by ``floormod(e, c1) * k`` when
    ``c`` divides ``c1`` (the low digits of a reshaped index: ``e % 12 // 4 * 4 + e % 4 == e % 12``)."""
    if c <= 0:
        return False
    e_key = expr_key(atom.a, memo)
    for div_key, (div, div_coeff) in form.terms.items():
        inner = div.a if type(div) is E.FloorDiv else None
        if type(inner) is not E.FloorMod or type(div.b) is not E.IntImm or div.b.value != c \
                or div_coeff != coeff * c or type(inner.b) is not E.IntImm:
            continue
        c1 = inner.b.value
        if c1 > 0 and c1 % c == 0 and expr_key(inner.a, memo) == e_key:
            del form.terms[key]
            del form.terms[div_key]
            form.add_term(expr_key(inner, memo), inner, coeff)
            return True
    return False


def _term(atom, coeff, dtype):
    return atom if coeff == 1 else E.Mul(atom, E.IntImm(dtype, coeff))


def from_linear(form: LinearForm) -> E.PrimExpr:
    """Rebuild an expression from a linear form in canonical shape."""
    dtype = form.dtype
    pos = [(a, c) for a, c in form.terms.values() if c > 0]
    neg = [(a, -c) for a, c in form.terms.values() if c < 0]
    const = form.const
    result = None
    for atom, coeff in pos:
        term = _term(atom, coeff, dtype)
        result = term if result is None else E.Add(result, term)
    if result is None:
        if const != 0 and neg:
            result = _op.const(const, dtype)
            const = 0
        elif neg:
            atom, coeff = neg.pop(0)
            result = E.Mul(atom, E.IntImm(dtype, -coeff))
        else:
            return _op.const(const, dtype)
    for atom, coeff in neg:
        result = E.Sub(result, _term(atom, coeff, dtype))
    if const > 0:
        result = E.Add(result, E.IntImm(dtype, const))
    elif const < 0:
        result = E.Sub(result, E.IntImm(dtype, -const))
    return result
