"""Cached analyses and their invalidation: ``AnalysisManager`` and ``PreservedAnalyses`` (LLVM's new pass manager).

An *analysis* is a named function from an IR unit to a result: ``scope="function"`` analyses read one function (free
variables, a post-dominator tree, well-formedness), ``scope="module"`` analyses read a whole :class:`IRModule` (type
inference, a call graph). Analyses are registered once with :func:`register_analysis`; a pass asks the manager of its
context for a result instead of computing it::

    tree = ctx.analysis_manager.get("relay.PostDominatorTree", func, mod)

How results stay valid without the passes keeping them up to date:

* IR nodes are immutable, so a result keyed by a function *object* is valid for as long as that object exists. A pass
  that leaves a function untouched returns the same object, and every function-scope result on it survives for free.
* A module result is keyed by the module's *contents*: the identities of its functions (and its attributes), not the
  module object. A pass that rebuilds the module around the same functions keeps those results too, and a module
  changed in place gets a new key, so a stale result is never returned.
* When a pass does change the IR, the results of the old IR are carried over to the new IR only for the analyses the
  pass declares it preserves (``PassInfo.preserves``: a tuple of analysis names or :data:`ALL`, LLVM's
  ``PreservedAnalyses::all()/none()/preserve<>``). Each analysis says how a preserved result is carried over
  (``transfer``; by default the result is kept as is). Everything else is simply not found and recomputed on demand.
  Preserving an analysis whose result holds IR nodes promises that those nodes are still the ones in the new IR.

Each analysis keeps a bounded number of results (least recently used first out: ``capacity`` per function analysis,
``module_capacity`` per module analysis, since a module result such as a typed module may hold a whole model), which
bounds the memory the default context's manager holds in a long session.
"""

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ..error import KilnError


class PreservedAnalyses:
    """The analyses a pass keeps valid: none, all, or a set of names.

    Examples
    --------
    >>> PreservedAnalyses.none().preserve("InferType").is_preserved("InferType")
    True
    >>> PreservedAnalyses.all().is_preserved("anything")
    True
    """

    __slots__ = ("_all", "names")

    def __init__(self, names=(), all_=False):
        self._all = bool(all_)
        self.names = frozenset(names)

    @classmethod
    def all(cls) -> "PreservedAnalyses":
        """Every analysis is preserved (the pass changed nothing any analysis reads)."""
        return cls(all_=True)

    @classmethod
    def none(cls) -> "PreservedAnalyses":
        """No analysis is preserved (the default for a pass)."""
        return cls()

    def preserve(self, *names) -> "PreservedAnalyses":
        """Return a copy that also preserves ``names``."""
        return PreservedAnalyses(self.names | frozenset(names), self._all)

    def is_preserved(self, name) -> bool:
        """Whether the analysis ``name`` is preserved."""
        return self._all or name in self.names

    def is_all(self) -> bool:
        """Whether every analysis is preserved."""
        return self._all

    def is_none(self) -> bool:
        """Whether no analysis is preserved."""
        return not self._all and not self.names

    @staticmethod
    def make(spec) -> "PreservedAnalyses":
        """Build from what a pass declares: None or ``()`` (none), :data:`ALL` or ``"all"``, a name, or names."""
        if isinstance(spec, PreservedAnalyses):
            return spec
        if spec is None:
            return PreservedAnalyses()
        if spec == "all":
            return PreservedAnalyses.all()
        if isinstance(spec, str):
            return PreservedAnalyses((spec,))
        try:
            names = tuple(spec)
        except TypeError:
            raise TypeError(f"preserves must be ALL, a name or a list of analysis names, not {spec!r}") from None
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"preserves must list analysis names (str), got {name!r}")
        return PreservedAnalyses(names)

    def __eq__(self, other):
        return isinstance(other, PreservedAnalyses) and (self._all, self.names) == (other._all, other.names)

    def __hash__(self):
        return hash((self._all, self.names))

    def __repr__(self):
        if self._all:
            return "PreservedAnalyses.all()"
        return f"PreservedAnalyses({sorted(self.names)})"


ALL = PreservedAnalyses.all()
"""What a pass declares (``preserves=ALL``) when it keeps every analysis valid."""


@dataclass(frozen=True)
class Analysis:
    """A registered analysis: see :func:`register_analysis`."""

    name: str
    compute: Callable
    scope: str = "function"
    transfer: Callable | None = None


_ANALYSES: dict[str, Analysis] = {}


def register_analysis(name, compute=None, *, scope="function", transfer=None, override=False):
    """Register an analysis under ``name``; usable as a decorator.

    Parameters
    ----------
    name : str
        The name passes use to ask for it and to declare it preserved.
    compute : callable
        ``compute(func, mod)`` for ``scope="function"`` (``mod`` may be None), ``compute(mod)`` for ``scope="module"``.
    scope : str
        ``"function"`` or ``"module"``.
    transfer : callable, optional
        ``transfer(result, old_unit, new_unit)`` gives the result for ``new_unit`` when a pass that replaced
        ``old_unit`` by ``new_unit`` preserves this analysis; by default the old result is kept.

    Examples
    --------
    >>> @register_analysis("demo.num_params", scope="function")  # doctest: +SKIP
    ... def num_params(func, mod):
    ...     return len(func.params)
    """
    if scope not in ("function", "module"):
        raise ValueError(f"register_analysis({name!r}): scope must be 'function' or 'module', not {scope!r}")

    def register(fn):
        if name in _ANALYSES and not override and _ANALYSES[name].compute is not fn:
            raise KilnError(f"analysis {name!r} is already registered (pass override=True to replace it)")
        _ANALYSES[name] = Analysis(name, fn, scope, transfer)
        return fn

    return register(compute) if compute is not None else register


def get_analysis(name) -> Analysis:
    """Return the registered analysis ``name``; raises ValueError naming it when unknown."""
    analysis = _ANALYSES.get(name)
    if analysis is None:
        known = ", ".join(sorted(_ANALYSES)) or "none"
        raise ValueError(f"unknown analysis {name!r}; registered analyses: {known}")
    return analysis


def list_analyses() -> list[str]:
    """The names of every registered analysis, sorted."""
    return sorted(_ANALYSES)


def module_key(mod):
    """The cache key of a module: its functions by identity, plus its attributes."""
    return (frozenset(mod.functions.items()), mod.attrs)


class AnalysisManager:
    """Caches analysis results per IR unit and carries them across passes that preserve them.

    Reached from a pass as ``ctx.analysis_manager``; ``stats[name]`` counts how often each analysis was
    ``"computed"`` and ``"reused"``.

    Parameters
    ----------
    capacity : int
        The most results kept per function analysis.
    module_capacity : int
        The most results kept per module analysis.

    Examples
    --------
    >>> am = PassContext.current().analysis_manager   # doctest: +SKIP
    >>> am.get("InferType", mod)                        # computed
    >>> am.get("InferType", mod)                        # reused
    """

    def __init__(self, capacity=64, module_capacity=8):
        self.capacity = capacity
        self.module_capacity = module_capacity
        self._cache: dict[str, OrderedDict] = {}
        self.stats: dict[str, dict] = {}

    def _key(self, analysis, unit):
        return module_key(unit) if analysis.scope == "module" else unit

    def _count(self, name, what):
        counts = self.stats.setdefault(name, {"computed": 0, "reused": 0})
        counts[what] += 1

    def get(self, name, unit, mod=None):
        """The result of analysis ``name`` on ``unit`` (a function, or the module for module analyses),
        computed only when no valid result is cached."""
        analysis = get_analysis(name)
        entries = self._cache.setdefault(name, OrderedDict())
        key = self._key(analysis, unit)
        entry = entries.get(key)
        if entry is not None:
            entries.move_to_end(key)
            self._count(name, "reused")
            return entry[1]
        result = analysis.compute(unit) if analysis.scope == "module" else analysis.compute(unit, mod)
        self._store(analysis, entries, key, unit, result)
        self._count(name, "computed")
        return result

    def get_cached(self, name, unit, default=None):
        """The cached result of ``name`` on ``unit``, or ``default`` (never computes)."""
        analysis = get_analysis(name)
        entry = self._cache.get(name, {}).get(self._key(analysis, unit))
        return default if entry is None else entry[1]

    def put(self, name, unit, result):
        """Record ``result`` as the result of ``name`` on ``unit`` (for a pass that computed it as a by-product)."""
        analysis = get_analysis(name)
        self._store(analysis, self._cache.setdefault(name, OrderedDict()), self._key(analysis, unit), unit, result)

    def _store(self, analysis, entries, key, unit, result):
        # the unit is held with the result: a key made of object identities must not outlive its objects
        entries[key] = (unit, result)
        entries.move_to_end(key)
        limit = self.module_capacity if analysis.scope == "module" else self.capacity
        while len(entries) > limit:
            entries.popitem(last=False)

    def invalidate(self, name=None):
        """Drop the results of analysis ``name`` (every analysis when None)."""
        if name is None:
            self._cache.clear()
        else:
            self._cache.pop(name, None)

    def update(self, before, after, preserves):
        """Carry the results on module ``before`` over to ``after`` for each analysis ``preserves`` keeps.

        The pass infrastructure calls this after every pass; results on unchanged functions need no carrying.
        """
        if before is after or not self._cache:
            return
        preserved = PreservedAnalyses.make(preserves)
        if preserved.is_none():
            return
        before_key = None
        for name, entries in self._cache.items():
            if not entries or not preserved.is_preserved(name):
                continue
            analysis = _ANALYSES.get(name)
            if analysis is None:
                continue
            transfer = analysis.transfer or (lambda result, old, new: result)
            if analysis.scope == "module":
                before_key = before_key or module_key(before)
                entry = entries.get(before_key)
                if entry is not None:
                    self._store(analysis, entries, module_key(after), after, transfer(entry[1], before, after))
                continue
            for gv, new_func in after.functions.items():
                old_func = before.functions.get(gv)
                if old_func is None or old_func is new_func:
                    continue
                entry = entries.get(old_func)
                if entry is not None:
                    self._store(analysis, entries, new_func, new_func, transfer(entry[1], old_func, new_func))

    def __repr__(self):
        held = ", ".join(f"{name}: {len(entries)}" for name, entries in self._cache.items())
        return f"AnalysisManager({held})"
