"""Debugging instruments that need no edit to the pipeline: ``VerifyWellFormed`` and ``VerifySemantics``.

Both follow the module through the passes: they check (or evaluate) the module a pass receives unless it is the one
they checked last, and the module each pass returns unless the pass changed nothing (the same functions, by
identity). The first pass whose result fails raises :class:`PassVerificationError` naming that pass.

They are IR-agnostic; the IR layers above register what they need through the global function registry:

* ``VerifyWellFormed`` runs every checker registered with :func:`register_verifier` (``checker(mod, am) -> str or
  None``; Relay registers scoping and type checks). The combined result is the module analysis ``"WellFormed"``, so
  a module is checked once however many passes leave it unchanged, and checkers can cache per-function results.
* ``VerifySemantics`` calls ``"ir.instrument.random_inputs"(mod, entry, seed)`` and
  ``"ir.instrument.evaluate"(mod, entry, inputs)`` (Relay registers both, on its reference interpreter): it
  evaluates the entry function on the same inputs before and after each pass and compares the outputs with
  :func:`kiln.ir.oracle.compare_results` (count, shapes, dtypes, values), as the pass tests do.
"""

import warnings

from ..error import KilnError, OpNotImplemented
from ..runtime.packed_func import get_global_func
from .analysis import register_analysis
from .instrument import PassInstrument
from .oracle import compare_results
from .pass_context import PassContext
from .transform import same_contents


class PassVerificationError(KilnError):
    """A verification instrument found that a pass broke the IR or changed what it computes."""


_VERIFIERS: list = []


def register_verifier(checker):
    """Add ``checker(mod, analysis_manager) -> str or None`` (a description of the first problem found) to the
    checks ``VerifyWellFormed`` runs. Usable as a decorator."""
    if checker not in _VERIFIERS:
        _VERIFIERS.append(checker)
    return checker


def _well_formed(mod):
    am = PassContext.current().analysis_manager
    for checker in _VERIFIERS:
        problem = checker(mod, am)
        if problem:
            return problem
    return None


register_analysis("WellFormed", _well_formed, scope="module")


class VerifyWellFormed(PassInstrument):
    """Check the IR after every pass (and the module the first pass receives); raise
    :class:`PassVerificationError` naming the pass that broke it.

    Examples
    --------
    >>> with PassContext(instruments=[VerifyWellFormed()]):   # doctest: +SKIP
    ...     mod = seq(mod)
    PassVerificationError: VerifyWellFormed: pass BrokenPass produced IR that is not well formed: in @main: ...
    """

    def __init__(self):
        self._verified = None

    def enter_pass_ctx(self):
        self._verified = None

    def exit_pass_ctx(self):
        self._verified = None

    def _check(self, mod):
        return PassContext.current().analysis_manager.get("WellFormed", mod)

    def run_before_pass(self, mod, info):
        if self._verified is not None and same_contents(mod, self._verified):
            return
        problem = self._check(mod)
        if problem:
            raise PassVerificationError(
                f"VerifyWellFormed: the module given to pass {info.name} is not well formed: {problem}"
            )
        self._verified = mod

    def run_after_pass(self, mod, info):
        if self._verified is not None and same_contents(mod, self._verified):
            return
        problem = self._check(mod)
        if problem:
            raise PassVerificationError(
                f"VerifyWellFormed: pass {info.name} produced IR that is not well formed: {problem}"
            )
        self._verified = mod


class VerifySemantics(PassInstrument):
    """Evaluate the module on the same inputs before and after every pass and raise
    :class:`PassVerificationError` naming the first pass that changed the result.

    Parameters
    ----------
    inputs : list or dict of arrays, optional
        The entry function's arguments (by position, or by parameter name); random ones (fixed ``seed``) when None.
    rtol : float
        Relative tolerance of the comparison.
    atol : float, optional
        Absolute tolerance; defaults to ``rtol``.
    entry : str
        The function evaluated.
    seed : int
        Seed of the random inputs.

    Examples
    --------
    >>> with PassContext(opt_level=3, instruments=[VerifySemantics()]):   # doctest: +SKIP
    ...     mod = relay.optimize(mod)
    """

    def __init__(self, inputs=None, rtol=1e-5, atol=None, entry="main", seed=0):
        self.inputs = inputs
        self.rtol = rtol
        self.atol = rtol if atol is None else atol
        self.entry = entry
        self.seed = seed
        self._reset()

    def _reset(self):
        self._ref_mod = None
        self._ref_out = None
        self._args = None

    def enter_pass_ctx(self):
        self._reset()

    def exit_pass_ctx(self):
        self._reset()

    def _arguments(self, mod):
        if self._args is None:
            if self.inputs is None:
                self._args = _registered("ir.instrument.random_inputs")(mod, self.entry, self.seed)
            else:
                self._args = self.inputs
        return self._args

    def _evaluate(self, mod):
        return _registered("ir.instrument.evaluate")(mod, self.entry, self._arguments(mod))

    def run_before_pass(self, mod, info):
        if self._ref_mod is not None and same_contents(mod, self._ref_mod):
            return
        try:
            self._ref_out = self._evaluate(mod)
        except KilnError as exc:
            warnings.warn(f"VerifySemantics: cannot evaluate the module given to pass {info.name}, so it is not "
                          f"checked: {exc}", stacklevel=2)
            self._ref_mod = self._ref_out = None
            return
        self._ref_mod = mod

    def run_after_pass(self, mod, info):
        if self._ref_mod is None or same_contents(mod, self._ref_mod):
            return
        try:
            outputs = self._evaluate(mod)
        except OpNotImplemented as exc:  # e.g. lowered IR the evaluator does not run: nothing to compare
            warnings.warn(f"VerifySemantics: cannot evaluate the result of pass {info.name}: {exc}", stacklevel=2)
            self._ref_mod = self._ref_out = None
            return
        except Exception as exc:
            raise PassVerificationError(
                f"VerifySemantics: after pass {info.name}, evaluating @{self.entry} fails: {exc}"
            ) from exc
        problem = compare_results(self._ref_out, outputs, self.rtol, self.atol)
        if problem:
            raise PassVerificationError(
                f"VerifySemantics: pass {info.name} changed the result of @{self.entry}: {problem}"
            )
        self._ref_mod, self._ref_out = mod, outputs


def _registered(name):
    func = get_global_func(name, allow_missing=True)
    if func is None:
        raise KilnError(f"VerifySemantics needs the global function {name!r} (import kiln.relay to register it)")
    return func
