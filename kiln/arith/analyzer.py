"""``Analyzer`` (TVM's ``tvm.arith.Analyzer``): one object holding what is known about variables, and the analyses
and simplifier that use it.

Facts enter three ways: ``bind(var, Range)`` (a loop variable's domain: sets its bound; an extent of 1 substitutes the
minimum), ``bind(var, expr)`` (a let-bound variable: substituted by the simplifier), and ``constraint_scope(cond)`` (a
``with`` block inside which ``cond`` holds: each conjunct is recorded, and a comparison of a variable with a bounded
expression narrows that variable's bound). Leaving the scope restores what was known before.

Every change of what is known gives the analyzer another ``_version``, so the simplifier can keep results per
version. A lasting fact (``bind``, ``update``) gets a number never used before. Leaving a scope gives back the version
it was entered with, since the knowledge is then exactly what it was (unless a lasting fact was recorded inside).
Entering a scope with the same constraint (or binding) from the same version leads to the same version as before,
since the knowledge it adds follows from the two: the unrolled copies of a guarded load share their scope's results.
"""

import contextlib
import enum

from ..error import TIRError
from ..runtime.packed_func import register_func
from ..tir import expr as E
from ..tir import op as _op
from .canonical_simplify import CanonicalSimplifier
from .const_int_bound import ConstIntBound, ConstIntBoundAnalyzer
from .linear import LinearForm, is_index_dtype, linear_form
from .modular_set import ModularSet, ModularSetAnalyzer, intersect
from .pattern_simplify import PatternSimplifier
from .rewrite_simplify import RewriteSimplifier

DERIVED_LIMIT = 100_000
"""Remembered temporary steps between versions before the table is emptied."""


class ProofStrength(enum.IntEnum):
    """How hard :meth:`Analyzer.can_prove` tries (TVM's ``arith.ProofStrength``)."""

    DEFAULT = 0
    SYMBOLIC_BOUND = 1


class Extension(enum.Flag):
    """Optional rewrite-simplifier behaviour, set on ``Analyzer.enabled_extensions`` (TVM's ``arith.Extension``;
    the values are TVM's ``RewriteSimplifier::Extension`` bits)."""

    NoExtensions = 0
    TransitivelyProveInequalities = 1 << 0
    ConvertBooleanToAndOfOrs = 1 << 1
    ApplyConstraintsToBooleanBranches = 1 << 2
    ComparisonOfProductAndSum = 1 << 3


class Analyzer:
    """Integer analysis and simplification.

    Examples
    --------
    >>> x = tir.Var("x", "int32")
    >>> ana = Analyzer()
    >>> ana.bind(x, tir.Range(0, 16))
    >>> str(ana.simplify(tir.floordiv(x, 16) * 16 + tir.floormod(x, 16)))
    'x'
    >>> ana.can_prove(x < 16)
    True
    """

    def __init__(self):
        self._cib = ConstIntBoundAnalyzer()
        self._mod = ModularSetAnalyzer(nonnegative=lambda e: self._cib(e).min_value >= 0)
        self._subst: dict = {}  # id(var) -> (var, expr)
        self._true_facts: dict = {}  # key -> count
        self._false_facts: dict = {}
        self._version = 0
        self._last_version = 0  # the largest version handed out
        self._epoch = 0  # lasting changes (bind, update) so far
        self._derived: dict = {}  # (version, temporary step) -> (the version it leads to, objects kept alive)
        self._simplifier = RewriteSimplifier(self)
        self._pattern_simplifier = PatternSimplifier(self)
        self._canonical_simplifier = CanonicalSimplifier(self)
        self._ranges: dict = {}  # id(var) -> (var, Range) of bind(var, Range)
        self._scope_constraints: list = []  # the constraints of the open constraint scopes, outermost first
        self.enabled_extensions = Extension.NoExtensions

    # ---- queries
    def const_int_bound(self, expr) -> ConstIntBound:
        """The constant bound ``[min_value, max_value]`` of an integer expression."""
        return self._cib(expr)

    def modular_set(self, expr) -> ModularSet:
        """The modular set ``coeff * k + base`` of an integer expression."""
        return self._mod(expr)

    def const_int_bound_is_bound(self, var) -> bool:
        """Whether a bound was recorded for ``var``."""
        return self._cib.get(var) is not None

    def rewrite_simplify(self, expr):
        """Simplify ``expr`` with TVM's rewrite rules (:mod:`kiln.arith.pattern_simplify`): the results TVM's
        ``Analyzer.rewrite_simplify`` gives."""
        return self._pattern_simplifier(expr)

    def canonical_simplify(self, expr):
        """Simplify ``expr`` with TVM's canonical simplifier (:mod:`kiln.arith.canonical_simplify`): index
        arithmetic collected into sums of scaled division/remainder terms, as TVM's ``canonical_simplify`` gives."""
        return self._canonical_simplifier(expr)

    def simplify(self, expr, steps=2):
        """Simplify ``expr`` (an expression or a TIR statement's expressions are left to the Simplify pass).

        ``steps`` bounds the number of full passes; it stops early at a fixpoint.
        """
        expr = E.convert(expr)
        for _ in range(max(int(steps), 1)):
            new = self._simplifier.simplify(expr)
            if new is expr or self._simplifier.key(new) == self._simplifier.key(expr):
                return new
            expr = new
        return expr

    def can_prove(self, cond, strength=None) -> bool:
        """Whether ``cond`` holds for every value of the variables (as far as the analyses can tell).

        With ``strength=ProofStrength.SYMBOLIC_BOUND`` a comparison ``a < b`` (``<=``, ``>``, ``>=``) is also proved
        when the symbolic lower bound of ``b - a``, over the ranges of the bound variables, is positive (TVM's
        ``kSymbolicBound``: ``i0 * 32 + i1 < (n + 31) // 32 * 32`` for ``i0 < (n + 31) // 32``, ``i1 < 32``).
        """
        result = self.simplify(cond)
        if isinstance(result, E.IntImm):
            return bool(result.value)
        if strength is not None and ProofStrength(strength) >= ProofStrength.SYMBOLIC_BOUND:
            return self._prove_by_symbolic_bound(E.convert(cond))
        return False

    def _prove_by_symbolic_bound(self, cond) -> bool:
        from .int_set import eval_set

        kind = type(cond)
        if kind in (E.LT, E.LE):
            diff, lower = _op.subtract(cond.b, cond.a), 1 if kind is E.LT else 0
        elif kind in (E.GT, E.GE):
            diff, lower = _op.subtract(cond.a, cond.b), 1 if kind is E.GT else 0
        else:
            return False
        if not is_index_dtype(diff.dtype):
            return False
        iset = eval_set(self.simplify(diff), self.bound_ranges(), self)
        if not iset.has_lower_bound():
            return False
        return self.const_int_bound(self.simplify(iset.min_value)).min_value >= lower

    def bound_ranges(self) -> dict:
        """``{var: Range}`` of the variables bound to a range with :meth:`bind`."""
        return {var: rng for var, rng in self._ranges.values()}

    def can_prove_equal(self, lhs, rhs) -> bool:
        """Whether ``lhs == rhs`` always holds."""
        if isinstance(lhs, E.PrimExpr) and not isinstance(rhs, E.PrimExpr):
            rhs = E.convert(rhs, lhs.dtype)
        lhs, rhs = E.convert(lhs), E.convert(rhs)
        if lhs.dtype != rhs.dtype and is_index_dtype(lhs.dtype) and is_index_dtype(rhs.dtype):
            # as TVM's ``lhs - rhs``: the narrower integer is widened
            if _bits(lhs.dtype) < _bits(rhs.dtype):
                lhs = _op.cast(lhs, rhs.dtype)
            else:
                rhs = _op.cast(rhs, lhs.dtype)
        if lhs.dtype != rhs.dtype:
            return False
        if is_index_dtype(lhs.dtype):
            return self.can_prove(_op.equal(lhs, rhs))
        a, b = self.simplify(lhs), self.simplify(rhs)
        return self._simplifier.key(a) == self._simplifier.key(b)

    def int_set(self, expr, dom_map=None):
        """The :class:`IntervalSet` of ``expr`` while the variables of ``dom_map`` (by default those bound to a range
        with :meth:`bind`) sweep their domains."""
        from .int_set import eval_set

        return eval_set(expr, self.bound_ranges() if dom_map is None else dom_map, self)

    # ---- facts
    def bind(self, var, expr_or_range, allow_override=False):
        """Record ``var``'s value (an expression, substituted when simplifying) or domain (a ``Range``)."""
        if not isinstance(var, E.Var):
            raise TIRError(f"Analyzer.bind: expected a Var, got {type(var).__name__}")
        self._lasting_change()
        if isinstance(expr_or_range, E.Range):
            self._ranges[id(var)] = (var, expr_or_range)
            lo = self._cib(expr_or_range.min)
            ext = self._cib(expr_or_range.extent)
            if isinstance(expr_or_range.extent, E.IntImm) and expr_or_range.extent.value == 1:
                self._subst[id(var)] = (var, expr_or_range.min)
            self._cib.update(var, ConstIntBound(lo.min_value, _sat_add(lo.max_value, ext.max_value - 1)),
                             override=allow_override)
            return
        value = E.convert(expr_or_range)
        self._subst[id(var)] = (var, value)
        self._cib.update(var, self._cib(value), override=True)
        self._mod.update(var, self._mod(value))

    def update(self, var, info, override=False):
        """Record a ConstIntBound or ModularSet for ``var``."""
        self._lasting_change()
        if isinstance(info, ConstIntBound):
            self._cib.update(var, info, override)
        elif isinstance(info, ModularSet):
            self._mod.update(var, info, override)
        else:
            raise TIRError(f"Analyzer.update: expected ConstIntBound or ModularSet, got {type(info).__name__}")

    @contextlib.contextmanager
    def constraint_scope(self, constraint):
        """Within the ``with`` block, ``constraint`` is known to hold.

        Examples
        --------
        >>> with ana.constraint_scope(x < 4):     # doctest: +SKIP
        ...     ana.can_prove(x < 8)
        True
        """
        conjuncts = _conjuncts(self.simplify(constraint))
        saved_bounds, saved_residues = [], []
        added = []
        entered = self._enter()
        self._scope_constraints.append(E.convert(constraint))
        try:
            for c in conjuncts:
                if isinstance(c, E.IntImm):
                    continue
                key = self._simplifier.key(c)
                self._true_facts[key] = self._true_facts.get(key, 0) + 1
                self._new_version(("fact", key), c)
                neg = self.simplify(_op.logical_not(c))
                nkey = self._simplifier.key(neg)
                self._false_facts[nkey] = self._false_facts.get(nkey, 0) + 1
                added.append((key, nkey, c, neg))
                self._narrow(c, saved_bounds)
                self._narrow_residue(c, saved_residues)
                self._new_version(("narrowed", key), c)
            yield self
        finally:
            for var, old in reversed(saved_residues):
                self._mod.restore(var, old)
            for key, nkey, _, _ in added:
                _decrement(self._true_facts, key)
                _decrement(self._false_facts, nkey)
            for var, old in reversed(saved_bounds):
                self._cib.restore(var, old)
            self._scope_constraints.pop()
            self._leave(entered)

    # ---- versions of what is known (see the module docstring)
    def _new_version(self, step=None, keep=None):
        """Move to a version never used before, or, for a temporary ``step`` (a hashable description of a change
        that follows from what is known and the step alone), to the version the same step led to from the current
        version before. ``keep`` is held with the entry so the ids in ``step`` stay unique."""
        if step is not None:
            found = self._derived.get((self._version, step))
            if found is not None:
                self._version = found[0]
                return
        self._last_version += 1
        if step is not None:
            if len(self._derived) > DERIVED_LIMIT:
                self._derived = {}
            self._derived[(self._version, step)] = (self._last_version, keep)
        self._version = self._last_version

    def _lasting_change(self):
        self._epoch += 1
        self._new_version()

    def _enter(self):
        """Start a scope: returns what :meth:`_leave` needs."""
        return self._version, self._epoch

    def _leave(self, entered):
        """End a scope whose temporary facts were withdrawn: its entry version again, unless a lasting fact was
        recorded meanwhile."""
        version, epoch = entered
        if self._epoch == epoch:
            self._version = version
        else:
            self._new_version()

    def _narrow(self, cond, saved):
        """Narrow the bound of a variable or non-linear term from ``term (< | <= | ==) expr`` (in any arrangement of a
        linear comparison)."""
        kind = type(cond)
        if kind not in (E.LT, E.LE, E.EQ) or not is_index_dtype(cond.a.dtype):
            return
        d = LinearForm(cond.a.dtype)
        d.add(linear_form(cond.a))
        d.add(linear_form(cond.b), -1)
        for key, (atom, coeff) in d.terms.items():
            # a variable, or a whole non-linear term (``1 <= a % 58`` bounds ``a % 58`` wherever it occurs)
            if coeff not in (1, -1) or not is_index_dtype(atom.dtype):
                continue
            rest = LinearForm(d.dtype, {k: v for k, v in d.terms.items() if k != key}, d.const)
            lo = hi = rest.const
            for a, c in rest.terms.values():
                b = self._cib._bound(a, {})
                x, y = c * b.min_value, c * b.max_value
                lo, hi = _sat_add(lo, min(x, y)), _sat_add(hi, max(x, y))
            # coeff*var + rest (<|<=|==) 0
            strict = 1 if kind is E.LT else 0
            old = self._cib.get(atom)
            current = old or self._cib(atom)
            new_lo, new_hi = current.min_value, current.max_value
            if coeff == 1:  # var < -rest
                new_hi = min(new_hi, -lo - strict)
                if kind is E.EQ:
                    new_lo = max(new_lo, -hi)
            else:  # var > rest
                new_lo = max(new_lo, lo + strict)
                if kind is E.EQ:
                    new_hi = min(new_hi, hi)
            saved.append((atom, old))
            self._cib.update(atom, ConstIntBound(new_lo, new_hi), override=True)

    def _narrow_residue(self, cond, saved):
        """Record ``var % c == b`` (truncated or floored, either side) as ``var``'s modular set, intersected with what
        was known (``a % 4 == 1`` and ``a % 3 == 1`` give ``a = 12k + 1``)."""
        if type(cond) is not E.EQ:
            return
        lhs, rhs = (cond.a, cond.b) if isinstance(cond.b, E.IntImm) else (cond.b, cond.a)
        if not (type(lhs) in (E.Mod, E.FloorMod) and isinstance(lhs.a, E.Var) and isinstance(lhs.b, E.IntImm)
                and isinstance(rhs, E.IntImm) and lhs.b.value > 0 and 0 <= rhs.value < lhs.b.value):
            return
        var = lhs.a
        old = self._mod.get(var)
        new = intersect(old or ModularSet(1, 0), ModularSet.make(lhs.b.value, rhs.value))
        if new is not None:
            saved.append((var, old))
            self._mod.update(var, new)

    def _known_fact(self, key):
        if key in self._true_facts:
            return True
        if key in self._false_facts:
            return False
        return None

    def _substitution(self, var):
        entry = self._subst.get(id(var))
        return var if entry is None else entry[1]

    @contextlib.contextmanager
    def _temporary_binding(self, var, value):
        old = self._subst.get(id(var))
        entered = self._enter()
        self._subst[id(var)] = (var, value)
        self._new_version(("subst", id(var), self._simplifier.key(value)), (var, value))
        try:
            yield
        finally:
            if old is None:
                self._subst.pop(id(var), None)
            else:
                self._subst[id(var)] = old
            self._leave(entered)

    @contextlib.contextmanager
    def _temporary_bound(self, var, bound):
        old = self._cib.get(var)
        entered = self._enter()
        self._cib.update(var, bound, override=True)
        self._new_version(("bound", id(var), bound.min_value, bound.max_value), var)
        try:
            yield
        finally:
            self._cib.restore(var, old)
            self._leave(entered)


def _bits(dtype):
    return int("".join(ch for ch in dtype if ch.isdigit()) or 32)


def _conjuncts(cond):
    out, stack = [], [cond]
    while stack:
        c = stack.pop()
        if isinstance(c, E.And):
            stack.extend((c.b, c.a))
        else:
            out.append(c)
    return out


def _decrement(table, key):
    n = table.get(key, 0) - 1
    if n <= 0:
        table.pop(key, None)
    else:
        table[key] = n


def _sat_add(a, b):
    from .const_int_bound import NEG_INF, POS_INF

    if a in (POS_INF, NEG_INF):
        return a
    if b in (POS_INF, NEG_INF):
        return b
    return max(NEG_INF, min(POS_INF, a + b))


def _create_analyzer():
    """A new Analyzer, for the layers below arith that reach it through the registry (TVM's
    ``arith.CreateAnalyzer``)."""
    return Analyzer()


register_func("arith.CreateAnalyzer", _create_analyzer, override=True)
