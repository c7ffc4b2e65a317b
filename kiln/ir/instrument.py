"""Pass instruments (TVM's ``tvm.ir.instrument``): hooks the pass infrastructure calls around every pass.

An instrument has any of ``enter_pass_ctx()``, ``exit_pass_ctx()``, ``should_run(mod, info) -> bool``,
``run_before_pass(mod, info)`` and ``run_after_pass(mod, info)``; the order they are called in and what happens when
one raises is SPEC section 5 (implemented in ``pass_context.py`` and ``transform.run_pass``). Hooks a class does not
override are never called.

Besides TVM's instruments (timing, printing) this module holds the debugging instruments of
``verify_instruments.py``, which need no edit to the pipeline being debugged: ``VerifyWellFormed``,
``VerifySemantics`` and ``PrintAfterAll(only_changed=True)``.
"""

import difflib
import time

from .transform import same_contents


class PassInstrument:
    """Base class of instruments: every hook is a no-op (and is skipped) unless a subclass overrides it.

    Subclass it, or decorate any class with :func:`pass_instrument`.
    """

    @property
    def name(self) -> str:
        """The instrument's name (its class name)."""
        return type(self).__name__

    def enter_pass_ctx(self):
        """Called when the context holding the instrument is entered."""

    def exit_pass_ctx(self):
        """Called when the context holding the instrument is left."""

    def should_run(self, mod, info):
        """Whether the pass ``info`` should run on ``mod``; any False skips it."""
        return True

    def run_before_pass(self, mod, info):
        """Called before the pass ``info`` runs on ``mod``."""

    def run_after_pass(self, mod, info):
        """Called after the pass ``info`` ran; ``mod`` is its result."""

    def __repr__(self):
        return self.name


def pass_instrument(pi_cls=None):
    """Make an instrument class from a class with any of the hooks.

    Examples
    --------
    >>> @pass_instrument
    ... class SkipPass:
    ...     def __init__(self, skip_pass_name):
    ...         self.skip_pass_name = skip_pass_name
    ...
    ...     def should_run(self, mod, info):
    ...         return self.skip_pass_name not in info.name
    >>> isinstance(SkipPass("FoldConstant"), PassInstrument)
    True
    """

    def create(cls):
        if not isinstance(cls, type):
            raise TypeError(f"pass_instrument: expected a class, got {cls!r}")
        if issubclass(cls, PassInstrument):
            return cls
        wrapper = type(cls.__name__, (cls, PassInstrument), {"__doc__": cls.__doc__, "__module__": cls.__module__,
                                                             "__qualname__": cls.__qualname__})
        return wrapper

    if pi_cls is not None:
        return create(pi_cls)
    return create


class _Profile:
    __slots__ = ("name", "start", "duration", "children")

    def __init__(self, name):
        self.name = name
        self.start = time.perf_counter()
        self.duration = None
        self.children: list = []


class _instance_or_current:
    """A method that, called on the class instead of an instance, runs on the current context's instance."""

    def __init__(self, method):
        self.method = method
        self.__doc__ = method.__doc__

    def __get__(self, instance, owner):
        if instance is not None:
            return self.method.__get__(instance, owner)

        def on_current(*args, **kwargs):
            from .pass_context import PassContext

            for inst in PassContext.current().instruments or ():
                if isinstance(inst, owner):
                    return self.method(inst, *args, **kwargs)
            return ""

        return on_current


class PassTimingInstrument(PassInstrument):
    """Time every pass, nested passes under the pass that ran them (a Sequential's members under it).

    ``render()`` returns one line per pass: ``name: total us [own us] (% of all top-level passes; % of parent)``,
    indented by nesting depth; it is empty once the context is left or its instruments overridden.

    Examples
    --------
    >>> timing = PassTimingInstrument()
    >>> with PassContext(instruments=[timing]):   # doctest: +SKIP
    ...     mod = seq(mod)
    ...     print(timing.render())
    """

    def __init__(self):
        self._roots: list = []
        self._stack: list = []

    def _clear(self):
        self._roots = []
        self._stack = []

    def enter_pass_ctx(self):
        self._clear()

    def exit_pass_ctx(self):
        self._clear()

    def run_before_pass(self, mod, info):
        profile = _Profile(info.name)
        (self._stack[-1].children if self._stack else self._roots).append(profile)
        self._stack.append(profile)

    def run_after_pass(self, mod, info):
        if self._stack:
            profile = self._stack.pop()
            profile.duration = time.perf_counter() - profile.start

    @_instance_or_current
    def render(self) -> str:
        """The timings as text (see the class docstring). As in TVM, ``PassTimingInstrument.render()`` called on the
        class renders the timing instrument of the current PassContext."""
        roots = [p for p in self._roots if p.duration is not None]
        total = sum(p.duration for p in roots)
        if not roots:
            return ""
        lines = []
        todo = [(0, total, p) for p in reversed(roots)]
        while todo:
            depth, parent, profile = todo.pop()
            done = [c for c in profile.children if c.duration is not None]
            own = profile.duration - sum(c.duration for c in done)
            todo.extend((depth + 1, profile.duration, c) for c in reversed(done))
            lines.append(
                f"{chr(9) * depth}{profile.name}: {profile.duration * 1e6:.0f}us [{own * 1e6:.0f}us] "
                f"({_pct(profile.duration, total):.2f}%; {_pct(profile.duration, parent):.2f}%)"
            )
        return "\n".join(lines) + "\n"


def _pct(part, whole):
    return 100.0 * part / whole if whole > 0 else 100.0


class PrintBeforeAll(PassInstrument):
    """Print the pass and the module before every pass."""

    def run_before_pass(self, mod, info):
        print(f"Before Running Pass: {info}")
        print(mod)


class PrintAfterAll(PassInstrument):
    """Print the pass and the module after every pass.

    Parameters
    ----------
    only_changed : bool
        Beyond TVM: print only passes that changed the module, as a unified diff against the module as it was
        before (LLVM's ``-print-changed=diff``). Unchanged passes print nothing.
    """

    def __init__(self, only_changed=False):
        self.only_changed = only_changed
        self._last = None
        self._last_text = None

    def enter_pass_ctx(self):
        self._last = self._last_text = None

    def run_before_pass(self, mod, info):
        if self.only_changed and (self._last is None or not same_contents(mod, self._last)):
            self._last, self._last_text = mod, None

    def run_after_pass(self, mod, info):
        if not self.only_changed:
            print(f"After Running Pass: {info}")
            print(mod)
            return
        if self._last is None or same_contents(mod, self._last):
            return
        before = self._last_text if self._last_text is not None else str(self._last)
        after = str(mod)
        self._last, self._last_text = mod, after
        if before == after:
            return
        diff = difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"before {info.name}", f"after {info.name}", lineterm=""
        )
        print(f"After Running Pass: {info}")
        print("\n".join(diff))


class PassPrintingInstrument(PassInstrument):
    """Print the module before the passes named in ``print_before_pass_names`` and after those in
    ``print_after_pass_names``."""

    def __init__(self, print_before_pass_names, print_after_pass_names):
        self.print_before_pass_names = print_before_pass_names
        self.print_after_pass_names = print_after_pass_names

    def run_before_pass(self, mod, info):
        if info.name in self.print_before_pass_names:
            print(f"Print IR before: {info.name}\n{mod}\n\n")

    def run_after_pass(self, mod, info):
        if info.name in self.print_after_pass_names:
            print(f"Print IR after: {info.name}\n{mod}\n\n")


from .verify_instruments import (  # noqa: E402  (they subclass PassInstrument)
    PassVerificationError,
    VerifySemantics,
    VerifyWellFormed,
    register_verifier,
)

__all__ = [
    "PassInstrument", "pass_instrument", "PassTimingInstrument", "PrintBeforeAll", "PrintAfterAll",
    "PassPrintingInstrument", "PassVerificationError", "VerifyWellFormed", "VerifySemantics", "register_verifier",
]
