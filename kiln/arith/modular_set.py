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

    def __init__(self):
        self.var_sets: dict = {}  # id(var) -> (var, ModularSet)

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
        if kind is E.Cast and _dt.DataType.parse(e.value.dtype).element_of().is_integer():
            src, dst = _dt.DataType.parse(e.value.dtype), _dt.DataType.parse(e.dtype)
            if dst.bits >= src.bits and dst.code == src.code:
                return sub(e.value)
        return EVERYTHING
