"""Modular sets (TVM's ``arith.ModularSet``): every value of an integer expression is ``coeff * k + base``.

``coeff == 0`` means the constant ``base``; ``coeff == 1, base == 0`` means nothing is known. Rules: a sum's coefficient
is the gcd of the operands' coefficients; a product by a constant scales both; ``floordiv`` by a constant ``c`` is exact
when ``c`` divides the coefficient; ``floormod`` by ``c`` keeps ``gcd(coeff, c)``; branches (min, max, select) merge by
gcd. The base is normalized into ``[0, coeff)``.
"""

from dataclasses import dataclass
from math import gcd

from ..tir import dtype as _dt
from ..tir import expr as E


@dataclass(frozen=True, slots=True)
class ModularSet:
    """``{coeff * k + base}`` for integer ``k``.

    Examples
    --------
    >>> ana.modular_set(x * 8 + 3)     # doctest: +SKIP
    ModularSet(coeff=8, base=3)
    """

    coeff: int
    base: int

    @staticmethod
    def make(coeff: int, base: int) -> "ModularSet":
        coeff = abs(coeff)
        return ModularSet(coeff, base % coeff if coeff else base)


EVERYTHING = ModularSet(1, 0)


def _union(a, b):
    coeff = gcd(gcd(a.coeff, b.coeff), abs(a.base - b.base))
    return ModularSet.make(coeff, a.base)


class ModularSetAnalyzer:
    """Computes :class:`ModularSet` of integer expressions; variable facts are set with :meth:`update`."""

    def __init__(self, nonnegative=None):
        self.var_sets: dict = {}  # id(var) -> (var, ModularSet)
        # proves an expression >= 0 (the Analyzer's bounds): a truncated division of such a value rounds down
        self.nonnegative = nonnegative or (lambda e: False)

    def update(self, var, info, override=False):
        """Record that ``var`` is in the modular set ``info``."""
        self.var_sets[id(var)] = (var, info)

    def get(self, var):
        entry = self.var_sets.get(id(var))
        return None if entry is None else entry[1]

    def restore(self, var, saved):
        if saved is None:
            self.var_sets.pop(id(var), None)
        else:
            self.var_sets[id(var)] = (var, saved)

    def __call__(self, expr) -> ModularSet:
        """The modular set of ``expr``."""
        return self._eval(E.convert(expr), {})

    def _eval(self, e, memo):
        hit = memo.get(id(e))
        if hit is not None:
            return hit[1]
        result = self._compute(e, memo)
        memo[id(e)] = (e, result)
        return result

    def _compute(self, e, memo):
        if not _dt.DataType.parse(e.dtype).element_of().is_integer():
            return EVERYTHING
        kind = type(e)
        if kind is E.IntImm:
            return ModularSet(0, e.value)
        if isinstance(e, E.Var):
            return self.get(e) or EVERYTHING
        sub = lambda x: self._eval(x, memo)
        if kind is E.Add:
            a, b = sub(e.a), sub(e.b)
            return ModularSet.make(gcd(a.coeff, b.coeff), a.base + b.base)
        if kind is E.Sub:
            a, b = sub(e.a), sub(e.b)
            return ModularSet.make(gcd(a.coeff, b.coeff), a.base - b.base)
        if kind is E.Mul:
            a, b = sub(e.a), sub(e.b)
            coeff = gcd(gcd(a.coeff * b.coeff, a.coeff * b.base), b.coeff * a.base)
            return ModularSet.make(coeff, a.base * b.base)
        if kind is E.FloorDiv:
            a, b = sub(e.a), sub(e.b)
            if b.coeff == 0 and b.base > 0:
                c = b.base
                if a.coeff % c == 0:
                    return ModularSet.make(a.coeff // c, a.base // c)
            return EVERYTHING
        if kind is E.FloorMod:
            a, b = sub(e.a), sub(e.b)
            if b.coeff == 0 and b.base > 0:
                c = b.base
                if a.coeff % c == 0:  # includes a constant (coeff 0): the remainder is known exactly
                    return ModularSet(0, a.base % c)
                return ModularSet.make(gcd(a.coeff, c), a.base)
            return EVERYTHING
        if kind in (E.Div, E.Mod):
            b = sub(e.b)
            if b.coeff == 0 and b.base != 0:
                return (_trunc_div if kind is E.Div else _trunc_mod)(sub(e.a), b.base, lambda: self.nonnegative(e.a))
            return EVERYTHING
        if kind is E.Call and e.op.name in ("tir.shift_right", "tir.bitwise_and"):
            b = sub(e.args[1])
            if b.coeff != 0 or b.base < 0:
                return EVERYTHING
            a = sub(e.args[0])
            if e.op.name == "tir.shift_right":  # a >> k == floordiv(a, 2**k)
                c = 1 << b.base
                return ModularSet.make(a.coeff // c, a.base // c) if a.coeff % c == 0 else EVERYTHING
            if b.base & (b.base + 1) == 0:  # a & (2**k - 1) == floormod(a, 2**k)
                c = gcd(a.coeff, b.base + 1)
                return ModularSet.make(c, a.base)
            return EVERYTHING
        if kind in (E.Min, E.Max):
            return _union(sub(e.a), sub(e.b))
        if kind is E.Select:
            return _union(sub(e.true_value), sub(e.false_value))
        if kind is E.Let:
            saved = self.get(e.var)
            self.update(e.var, sub(e.value))
            try:
                return self._eval(e.body, {})
            finally:
                self.restore(e.var, saved)
        if kind is E.Cast:
            src, dst = _dt.DataType.parse(e.value.dtype), _dt.DataType.parse(e.dtype)
            if src.element_of().is_integer() and dst.bits >= src.bits and dst.code == src.code:
                return sub(e.value)
            inner = e.value
            # an integer that went through a float and back (int32(float32(x * 3 + 1))) keeps its residues, as
            # TVM assumes; so does an integer cast to another integer type (a wrap keeps residues mod a power of 2
            # only, so the coefficient is limited to the power of two dividing it)
            if src.element_of().is_float() and isinstance(inner, E.Cast):
                inner_src = _dt.DataType.parse(inner.value.dtype).element_of()
                mantissa = {16: 11, 32: 24, 64: 53}.get(src.bits, 0)
                return sub(inner.value) if inner_src.is_integer() and inner_src.bits <= mantissa else EVERYTHING
            if src.element_of().is_integer():
                m = sub(e.value)
                if m.coeff == 0:
                    return EVERYTHING
                p = m.coeff & -m.coeff
                return ModularSet.make(p, m.base)
        return EVERYTHING


def _trunc_div(a, c, nonnegative):
    """``truncdiv(a, c)`` where ``c`` divides ``a``'s coefficient: ``a = coeff * k`` divides exactly; with a
    positive base only where ``a >= 0`` (then it rounds down), as TVM reasons."""
    if a.coeff % c:
        return EVERYTHING
    if a.base == 0:
        return ModularSet.make(a.coeff // c, 0)
    if a.base > 0 and c > 0 and nonnegative():
        return ModularSet.make(a.coeff // c, a.base // c)
    return EVERYTHING


def _trunc_mod(a, c, nonnegative):
    """``truncmod(a, c)``: the residue mod ``gcd(coeff, c)`` where the sign cannot change it."""
    g = gcd(a.coeff, abs(c))
    if g == 0:
        return EVERYTHING
    if a.base % g == 0 or (a.base > 0 and nonnegative()):
        return ModularSet.make(g, a.base % g)
    return EVERYTHING


def intersect(a, b):
    """The values in both modular sets (the Chinese remainder theorem), or None when there are none."""
    if a.coeff == 0 or b.coeff == 0:
        const, other = (a, b) if a.coeff == 0 else (b, a)
        if other.coeff == 0:
            return const if const.base == other.base else None
        return const if (const.base - other.base) % other.coeff == 0 else None
    g = gcd(a.coeff, b.coeff)
    if (b.base - a.base) % g:
        return None
    lcm = a.coeff // g * b.coeff
    # a.base + a.coeff * t == b.base (mod b.coeff): t == (b.base - a.base) / g * inv(a.coeff / g) mod (b.coeff / g)
    m = b.coeff // g
    t = ((b.base - a.base) // g * pow(a.coeff // g, -1, m)) % m if m > 1 else 0
    return ModularSet.make(lcm, a.base + a.coeff * t)
