"""Integer expressions as polynomials over their non-arithmetic atoms: ``{monomial: coefficient}``, a monomial being
the sorted tuple of its atoms' keys. Two expressions with the same polynomial are equal for every value of their
variables, and a polynomial each of whose monomials is a multiple of a single-monomial divisor is divisible by it.

The iterator-map analyses ask these questions of symbolic extents (``c1 * c0`` against ``c0 * c1``, ``n * n * 32``
divided by ``n``), where a proof needs only commutativity and distributivity; the simplifier's rules are not
required to see them.
"""

from ..tir import expr as E

LIMIT = 64
"""Monomials beyond which an expression is not expanded (products of sums grow fast)."""


def _atom_key(e, atoms):
    from .iter_map_fuse import ekey

    key = ekey(e)
    if atoms is not None:
        atoms.setdefault(key, e)
    return key


def poly(expr, atoms=None):
    """The polynomial of ``expr``, or None when it is not an integer polynomial of manageable size; ``atoms``
    (a dict) collects each atom's expression by key."""
    kind = type(expr)
    if kind is E.IntImm:
        return {(): expr.value} if expr.value else {}
    if kind is E.Add or kind is E.Sub:
        a, b = poly(expr.a, atoms), poly(expr.b, atoms)
        if a is None or b is None:
            return None
        out = dict(a)
        sign = 1 if kind is E.Add else -1
        for m, c in b.items():
            v = out.get(m, 0) + sign * c
            if v:
                out[m] = v
            else:
                out.pop(m, None)
        return out
    if kind is E.Mul:
        a, b = poly(expr.a, atoms), poly(expr.b, atoms)
        if a is None or b is None or len(a) * len(b) > LIMIT:
            return None
        out = {}
        for ma, ca in a.items():
            for mb, cb in b.items():
                m = tuple(sorted(ma + mb, key=repr))
                v = out.get(m, 0) + ca * cb
                if v:
                    out[m] = v
                else:
                    out.pop(m, None)
        return out
    if isinstance(expr, E.PrimExpr) and expr.dtype.startswith(("int", "uint")):
        return {(_atom_key(expr, atoms),): 1}
    return None


def poly_equal(a, b) -> bool:
    """Whether ``a`` and ``b`` expand to the same polynomial (so are provably equal)."""
    pa, pb = poly(a), poly(b)
    return pa is not None and pa == pb


def poly_divisible(a, b) -> bool:
    """Whether ``b`` (a single monomial) provably divides ``a``: each monomial of ``a`` holds ``b``'s atoms and a
    multiple of its coefficient."""
    return _quotient(a, b, None) is not None


def _quotient(a, b, atoms):
    pa, pb = poly(a, atoms), poly(b, atoms)
    if pa is None or pb is None or len(pb) != 1:
        return None
    (mb, cb), = pb.items()
    if cb == 0:
        return None
    out = []
    for ma, ca in pa.items():
        rest = list(ma)
        for atom in mb:
            if atom not in rest:
                return None
            rest.remove(atom)
        if ca % cb:
            return None
        out.append((rest, ca // cb))
    return out


def poly_quotient(a, b):
    """``a // b`` as an expression when :func:`poly_divisible` holds, else None."""
    from ..tir import op as _op

    atoms: dict = {}
    terms = _quotient(a, b, atoms)
    if terms is None:
        return None
    total = None
    for rest, coeff in terms:
        term = None
        for key in rest:
            term = atoms[key] if term is None else _op.multiply(term, atoms[key])
        term = _op.const(coeff, a.dtype) if term is None else term if coeff == 1 else \
            _op.multiply(term, _op.const(coeff, a.dtype))
        total = term if total is None else _op.add(total, term)
    return _op.const(0, a.dtype) if total is None else total


def prove_equal(analyzer, a, b) -> bool:
    """``a == b`` by polynomial expansion, else by the analyzer."""
    return poly_equal(a, b) or analyzer.can_prove_equal(a, b)
