"""``PassContext``: the settings every pass runs under, and the registry of configuration options.

Contexts form a per-thread stack (``with PassContext(opt_level=3):`` pushes, leaving pops); outside any ``with``
each thread has one default context (opt_level 2, no instruments), as in TVM's ``PassContextThreadLocalEntry``.

Entering a context calls each instrument's ``enter_pass_ctx`` in order and leaving calls each ``exit_pass_ctx``; the
exception rules of SPEC section 5 are implemented by ``_enter_instruments`` / ``_exit_instruments`` (a failing
``enter_pass_ctx`` exits the instruments already entered and clears the list; a failing ``exit_pass_ctx`` stops the
exits and clears the list; the original exception propagates).

Configuration keys are registered with a type and a default (:func:`register_config`); a context rejects an unknown
key or a wrongly typed value with :class:`ConfigError` (a ``ValueError``) naming the key. The context also owns
the :class:`~kiln.ir.analysis.AnalysisManager` passes share, and the counter behind the ``transform.max_passes``
bisection limit (LLVM's ``-opt-bisect-limit``).
"""

import ast
import difflib
import importlib
import sys
import threading
import types
import typing
from types import MappingProxyType
from typing import Any, Union

from ..error import KilnError
from .analysis import AnalysisManager


class ConfigError(KilnError, ValueError):
    """An unknown PassContext config key, or a config value or pass option of the wrong type."""


_TYPE_NAMES = {int: "int", bool: "bool", float: "float", str: "str", list: "list", tuple: "tuple", dict: "dict"}
_CONFIGS: dict[str, tuple[type, object]] = {}


def register_config(name, type_, default=None):
    """Register the PassContext config option ``name`` holding values of ``type_`` (default ``default``).

    Registering the same option twice with the same type is allowed; with another type it is an error.

    Parameters
    ----------
    name : str
        Dotted key, ``"<component>.<Pass>.<option>"`` by convention (``"relay.FuseOps.max_depth"``).
    type_ : type or str
        ``int``, ``bool``, ``float``, ``str``, ``list``, ``tuple`` or ``dict`` (or the name of one).
    default : object
        The value passes should assume when the key is not set (what :meth:`PassContext.list_configs` shows).

    Examples
    --------
    >>> register_config("relay.FuseOps.max_depth", int, 256)   # doctest: +SKIP
    """
    if isinstance(type_, str):
        by_name = {v: k for k, v in _TYPE_NAMES.items()}
        if type_ not in by_name:
            raise ValueError(f"register_config({name!r}): unknown type {type_!r}; use one of {sorted(by_name)}")
        type_ = by_name[type_]
    if type_ not in _TYPE_NAMES:
        raise ValueError(f"register_config({name!r}): type must be one of {sorted(_TYPE_NAMES.values())}, not {type_}")
    old = _CONFIGS.get(name)
    if old is not None and old[0] is not type_:
        raise ValueError(f"config option {name!r} is already registered with type {_TYPE_NAMES[old[0]]}")
    if default is not None:
        default = _coerce(name, type_, default)
    _CONFIGS[name] = (type_, default)


# the type keys TVM's ``PassContext.list_configs`` reports (its config values are IR objects: a bool is an IntImm)
_TVM_TYPE_KEYS = {int: "IntImm", bool: "IntImm", float: "FloatImm", str: "runtime.String", list: "Array",
                  tuple: "Array", dict: "Map"}


def list_configs() -> dict:
    """Every registered config option: ``{name: {"type": "IntImm", "python_type": "int", "default": 256}, ...}``
    (``type`` as TVM names it, ``python_type`` the Python type values must have)."""
    _load_builtin_passes()
    return {name: {"type": _TVM_TYPE_KEYS[t], "python_type": _TYPE_NAMES[t], "default": d}
            for name, (t, d) in sorted(_CONFIGS.items())}


def coerce_value(value, type_, what):
    """``value`` checked against the annotation ``type_`` and widened as an option value (one rule for config keys
    and pass options).

    Widening: an int to float, 0/1 to bool, a list to tuple and back. ``type_`` may be a class (``Callable``
    included), ``object``/``Any`` (anything), a parametrized class (``dict[str, list]``, ``Callable[[Call], bool]``:
    only the class is checked, not the parameters) or a union of these with ``None``.

    Parameters
    ----------
    value : object
        The value given.
    type_ : type or annotation
        What the option holds.
    what : str
        The option, as error messages name it (``"PassContext config 'relay.FuseOps.max_depth'"``).

    Returns
    -------
    object
        ``value``, or its widened form.

    Raises
    ------
    ConfigError
        ``value`` does not fit ``type_`` (a ``ValueError`` naming ``what``).

    Examples
    --------
    >>> coerce_value(1, bool, "pass DeadCodeElimination option inline_once")
    True
    """
    if type_ is object or type_ is Any:
        return value
    if typing.get_origin(type_) in (Union, types.UnionType):
        members = typing.get_args(type_)
        if value is None and type(None) in members:
            return None
        for member in members:
            if member is not type(None):
                try:
                    return coerce_value(value, member, what)
                except ConfigError:
                    continue
    else:
        cls = typing.get_origin(type_) or type_
        if not isinstance(cls, type):
            raise TypeError(f"{what}: kiln cannot check values against the annotation {type_!r}")
        if cls is bool and isinstance(value, int) and value in (0, 1):
            return bool(value)
        if cls is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if cls in (list, tuple) and isinstance(value, list | tuple):
            return cls(value)
        if isinstance(value, cls) and not (cls is int and isinstance(value, bool)):
            return value
    raise ConfigError(f"{what} expects a value of type {_type_name(type_)}, got {type(value).__name__} {value!r}")


def _type_name(type_) -> str:
    return _TYPE_NAMES.get(type_) or (type_.__name__ if isinstance(type_, type) else str(type_))


def _coerce(name, type_, value):
    """``value`` checked and widened for the registered config option ``name``."""
    return coerce_value(value, type_, f"PassContext config {name!r}")


def check_config(config) -> dict:
    """Validate a config mapping against the registry; returns a new dict with the coerced values."""
    if config is None:
        return {}
    if not hasattr(config, "items"):
        raise TypeError(f"PassContext config must be a dict, not {type(config).__name__}")
    checked = {}
    for name, value in config.items():
        if name not in _CONFIGS:
            _load_builtin_passes()  # passes register their options when their module is imported
        if name not in _CONFIGS:
            close = difflib.get_close_matches(str(name), list(_CONFIGS), n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ConfigError(
                f"PassContext config: unknown key {name!r}{hint} (PassContext.list_configs() lists the options)"
            )
        checked[name] = _coerce(name, _CONFIGS[name][0], value)
    return checked


def parse_config_value(name, text):
    """Convert command-line text to a value of option ``name``'s type (``"4"`` -> 4, ``"true"`` -> True)."""
    if name not in _CONFIGS:
        check_config({name: None})  # raises the unknown-key error
    type_ = _CONFIGS[name][0]
    try:
        if type_ is str:
            return text
        if type_ is bool:
            lowered = text.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(text)
        if type_ is int:
            return int(text, 0)
        if type_ is float:
            return float(text)
        return _coerce(name, type_, ast.literal_eval(text))
    except (ValueError, SyntaxError):
        raise ConfigError(
            f"PassContext config {name!r} expects a value of type {_TYPE_NAMES[type_]}, got {text!r}"
        ) from None


# the packages whose modules register the built-in passes and their config options
_BUILTIN_PASS_PACKAGES = ("kiln.relay.transform", "kiln.tir.transform")
_BUILTINS_LOADED = False


def _load_builtin_passes():
    """Import the packages whose modules register the built-in passes and options (once).

    ``importlib`` rather than an import statement: the IR layer must not depend on the layers above it, it only
    asks them to register themselves. A pass module that fails to import is an error, not a missing pass: the
    exception propagates with a note naming that module (otherwise it would surface later as "unknown pass X"),
    and the next lookup tries again.
    """
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True  # set first: the packages' own imports may look passes up
    for package in _BUILTIN_PASS_PACKAGES:
        try:
            importlib.import_module(package)
        except Exception as exc:
            _BUILTINS_LOADED = False
            exc.add_note(f"kiln: loading the built-in passes failed in module {_failing_module(exc, package)}")
            raise


def _failing_module(exc, package) -> str:
    """The innermost module of ``package`` whose import was running when ``exc`` was raised (else ``package``)."""
    name = package
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        module = frame.f_globals.get("__name__", "")
        if frame.f_code.co_name == "<module>" and (module == package or module.startswith(package + ".")):
            name = module
        tb = tb.tb_next
    return name


def _hook_of(instrument, name):
    """The bound hook ``name`` of ``instrument``, or None when it has none or only the base no-op."""
    from .instrument import PassInstrument

    hook = getattr(instrument, name, None)
    if hook is None:
        return None
    if getattr(type(instrument), name, None) is getattr(PassInstrument, name, None):
        return None
    return hook


_HOOKS = ("enter_pass_ctx", "exit_pass_ctx", "should_run", "run_before_pass", "run_after_pass")


class _ThreadState(threading.local):
    def __init__(self):
        self.stack: list = []
        self.default = None


_STATE = _ThreadState()


class PassContext:
    """The settings passes run under: optimization level, required and disabled passes, instruments, config.

    Parameters
    ----------
    opt_level : int
        Passes with ``info.opt_level`` above it are skipped inside a ``Sequential``.
    required_pass : list of str, optional
        Passes that always run inside a ``Sequential`` (and skip the instruments' ``should_run``).
    disabled_pass : list of str, optional
        Passes that never run inside a ``Sequential``.
    instruments : list of PassInstrument, optional
        Hooks called around every pass (see :mod:`kiln.ir.instrument`).
    config : dict, optional
        Values of registered options (:func:`register_config`), read by passes as
        ``ctx.config.get("relay.FuseOps.max_depth", 256)``.

    Examples
    --------
    >>> with PassContext(opt_level=3, config={"relay.FuseOps.max_depth": 8}):   # doctest: +SKIP
    ...     mod = seq(mod)
    """

    def __init__(self, opt_level=2, required_pass=None, disabled_pass=None, instruments=None, config=None):
        if not isinstance(opt_level, int) or isinstance(opt_level, bool):
            raise TypeError(f"PassContext: opt_level must be an int, not {opt_level!r}")
        self.opt_level = opt_level
        self.required_pass = _name_list(required_pass, "required_pass")
        self.disabled_pass = _name_list(disabled_pass, "disabled_pass")
        self.config = MappingProxyType(check_config(config))
        self._instruments: list = []
        self._hooks_of: tuple = ()
        self._hook_table: dict = {name: () for name in _HOOKS}
        self.instruments = instruments
        self._analysis_manager = None
        self._pass_counter = 0

    # --- instruments -------------------------------------------------------------------------------------------
    @property
    def instruments(self) -> list:
        """The instruments, in call order."""
        return self._instruments

    @instruments.setter
    def instruments(self, instruments):
        if instruments is None:
            instruments = ()
        if not isinstance(instruments, list | tuple | set):
            raise TypeError(f"PassContext: instruments must be a list, not {type(instruments).__name__}")
        for inst in instruments:
            if not any(hasattr(inst, name) for name in _HOOKS):
                raise TypeError(f"PassContext: {inst!r} is not a pass instrument (it has none of {', '.join(_HOOKS)})")
        self._instruments = list(instruments)

    @property
    def _hooks(self) -> dict:
        """The overridden hooks of the instruments by hook name (only those are called: the base's are no-ops),
        recomputed when the instrument list changed."""
        current, seen = self._instruments, self._hooks_of
        if len(current) != len(seen) or any(a is not b for a, b in zip(current, seen, strict=True)):
            snapshot = tuple(current)
            self._hook_table = {
                name: tuple(h for h in (_hook_of(inst, name) for inst in snapshot) if h is not None) for name in _HOOKS
            }
            self._hooks_of = snapshot
        return self._hook_table

    def _enter_instruments(self):
        entered = []
        try:
            for inst in self._instruments:
                hook = _hook_of(inst, "enter_pass_ctx")
                if hook is not None:
                    hook()
                entered.append(inst)
        except Exception:
            self.instruments = ()
            for inst in entered:  # undo the entries that succeeded, in order
                hook = _hook_of(inst, "exit_pass_ctx")
                if hook is not None:
                    hook()
            raise

    def _exit_instruments(self):
        try:
            for hook in self._hooks["exit_pass_ctx"]:
                hook()
        except Exception:
            self.instruments = ()
            raise

    def override_instruments(self, instruments):
        """Replace the instruments: the old ones' ``exit_pass_ctx`` run, then the new ones' ``enter_pass_ctx``.

        Examples
        --------
        >>> PassContext.current().override_instruments([PassTimingInstrument()])   # doctest: +SKIP
        """
        self._exit_instruments()
        self.instruments = instruments
        self._enter_instruments()

    # --- the thread-local stack --------------------------------------------------------------------------------
    def __enter__(self):
        self._enter_instruments()
        self._pass_counter = 0
        _STATE.stack.append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        stack = _STATE.stack
        if not stack or stack[-1] is not self:
            raise KilnError("PassContext: contexts must be left in the reverse order they were entered")
        stack.pop()
        self._exit_instruments()

    @staticmethod
    def current() -> "PassContext":
        """The innermost context entered on this thread, or the thread's default context."""
        if _STATE.stack:
            return _STATE.stack[-1]
        if _STATE.default is None:
            _STATE.default = PassContext()
        return _STATE.default

    @staticmethod
    def list_configs() -> dict:
        """Every registered config option: ``{name: {"type": "IntImm", "python_type": "int", "default": 256}}``."""
        return list_configs()

    # --- what passes read --------------------------------------------------------------------------------------
    @property
    def analysis_manager(self) -> AnalysisManager:
        """The :class:`AnalysisManager` shared by the passes run under this context."""
        if self._analysis_manager is None:
            self._analysis_manager = AnalysisManager()
        return self._analysis_manager

    def pass_enabled(self, info) -> bool:
        """TVM's ``PassEnabled``: disabled wins, then required, then ``info.opt_level <= opt_level``."""
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return info.opt_level <= self.opt_level

    def bisect_allows(self, info, unit="module") -> bool:
        """Count one run of pass ``info`` on ``unit`` against ``transform.max_passes``; whether it may run.

        Passes in ``required_pass`` always run and are not counted. With the limit set, every counted run is
        reported on stderr as ``BISECT: running pass (N) <name> on <unit>`` or ``BISECT: NOT running ...``.
        """
        limit = self.config.get("transform.max_passes", -1)
        if limit < 0 or info.name in self.required_pass:
            return True
        self._pass_counter += 1
        allowed = self._pass_counter <= limit
        verb = "running" if allowed else "NOT running"
        print(f"BISECT: {verb} pass ({self._pass_counter}) {info.name} on {unit}", file=sys.stderr)
        return allowed

    def __repr__(self):
        return (
            f"PassContext(opt_level={self.opt_level}, required_pass={self.required_pass}, "
            f"disabled_pass={self.disabled_pass}, instruments={list(self._instruments)}, config={dict(self.config)})"
        )


def _name_list(names, what) -> list:
    if names is None:
        return []
    if not isinstance(names, list | tuple | set | frozenset):
        raise TypeError(f"PassContext: {what} must be a list/tuple/set of pass names, not {type(names).__name__}")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"PassContext: {what} must hold pass names (str), got {name!r}")
    return list(names)


register_config("transform.max_passes", int, -1)
