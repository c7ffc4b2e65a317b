"""The pass infrastructure (TVM's ``tvm.transform``): ``PassInfo``, ``Pass``, ``ModulePass``, ``Sequential``, the
``module_pass`` decorator, the pass registry and ``PrintIR``.

Running a pass (:func:`run_pass`, what ``pass(mod)`` does) follows TVM's ``src/ir/transform.cc``:

1. unless the pass is in the context's ``required_pass``, every instrument's ``should_run`` is called in order, and
   if any said False the pass is skipped (the module is returned as is, no further hook runs);
2. the bisection limit ``transform.max_passes`` may skip it too (see ``PassContext.bisect_allows``);
3. every ``run_before_pass``, the pass itself, then every ``run_after_pass`` on the result.

An exception from a hook or the pass propagates at once with its original type; a note naming the pass is added
(``exc.add_note``). The enabling rules (``disabled_pass``, ``required_pass``, ``opt_level``) and the running of each
pass's ``required`` passes (looked up by name in the registry) are applied by ``Sequential`` to its members.

A pass never mutates the module it is given: a ``ModulePass`` works on a shallow copy, and when it returns that copy
with every function unchanged, the caller's module object itself is returned. So "did this pass change anything" is
an identity test, instruments may keep the module they saw before a pass, and the analysis manager can carry results
from the old module to the new one (``PassInfo.preserves``).

Built-in passes are frozen dataclasses whose fields are their options, registered by name::

    @register_pass("FuseOps")
    @dataclass(frozen=True)
    class FuseOps(ModulePass):
        fuse_opt_level: int = -1
        info = PassInfo(0, "FuseOps", required=("InferType",))

        def transform_module(self, mod, ctx):
            ...

so ``str(FuseOps(fuse_opt_level=2))`` is ``"FuseOps(fuse_opt_level=2)"``, which :func:`parse_pipeline` reads back.
"""

import dataclasses
import inspect
import sys
import typing
from dataclasses import dataclass, field

from ..error import KilnError
from .analysis import ALL, AnalysisManager, PreservedAnalyses, list_analyses, register_analysis
from .module import IRModule
from .pass_context import ConfigError, PassContext, _load_builtin_passes, coerce_value, register_config

__all__ = [
    "ALL", "AnalysisManager", "ConfigError", "ModulePass", "Pass", "PassContext", "PassInfo", "PassNotFoundError",
    "PreservedAnalyses", "PrintIR", "Sequential", "get_pass", "list_analyses", "list_configs", "list_passes",
    "module_pass", "parse_pipeline", "register_analysis", "register_config", "register_pass", "run_pass",
    "PipelineError",
]


class PassNotFoundError(KilnError, ValueError):
    """No pass is registered under the requested name."""


@dataclass(frozen=True, slots=True)
class PassInfo:
    """What the infrastructure knows of a pass: ``opt_level``, ``name``, ``required`` (names of passes to run
    first, inside a ``Sequential``; given as a list or tuple, kept as a tuple) and, beyond TVM, ``preserves`` (the
    analyses it keeps valid).

    Examples
    --------
    >>> info = PassInfo(opt_level=1, name="xyz", required=["InferType"])
    >>> info.opt_level, info.name, info.required
    (1, 'xyz', ('InferType',))
    """

    opt_level: int
    name: str
    required: tuple[str, ...] = ()
    preserves: PreservedAnalyses = field(default=PreservedAnalyses.none(), kw_only=True)

    def __post_init__(self):
        if not isinstance(self.opt_level, int) or isinstance(self.opt_level, bool):
            raise TypeError(f"PassInfo: opt_level must be an int, not {self.opt_level!r}")
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"PassInfo: name must be a non-empty str, not {self.name!r}")
        required = self.required if self.required is not None else ()
        if isinstance(required, str) or not isinstance(required, list | tuple):
            raise TypeError(f"PassInfo {self.name}: required must be a list of pass names, not {required!r}")
        for name in required:
            if not isinstance(name, str):
                raise TypeError(f"PassInfo {self.name}: required must hold pass names (str), got {name!r}")
        object.__setattr__(self, "required", tuple(required))
        object.__setattr__(self, "preserves", PreservedAnalyses.make(self.preserves))

    def __str__(self):
        return (
            f"The meta data of the pass - pass name: {self.name}, opt_level: {self.opt_level}, "
            f"required passes: [{', '.join(self.required)}]"
        )


class Pass:
    """Base class of every pass. ``pass(mod)`` runs it under ``PassContext.current()``; ``pass.info`` describes it.

    Subclasses implement ``_run(mod, ctx)`` (the kind-specific part: :class:`ModulePass`, ``FunctionPass``,
    ``PrimFuncPass``, :class:`Sequential`).
    """

    _info: PassInfo | None = None
    # whether the pass applies the bisection limit itself (per function) instead of once per run
    _bisects_itself = False

    @property
    def info(self) -> PassInfo:
        """The pass's :class:`PassInfo`."""
        if self._info is None:
            raise KilnError(f"{type(self).__name__} has no PassInfo: set the class attribute `info`")
        return self._info

    def __post_init__(self):
        """Check and widen the options of a dataclass pass against their annotations (called by the dataclass
        ``__init__``; a subclass with its own ``__post_init__`` calls this first).

        The rule is the one of ``PassContext`` config values (:func:`~kiln.ir.pass_context.coerce_value`), so
        ``FuseOps(fuse_opt_level="0")`` raises a :class:`ConfigError` (a ``ValueError``) naming the pass and option.
        """
        info = getattr(type(self), "info", None)
        name = info.name if isinstance(info, PassInfo) else type(self).__name__
        for option in dataclasses.fields(self):  # type: ignore[arg-type]  # only dataclass passes get here
            if option.init:
                # a string annotation (``from __future__ import annotations``) is resolved in the class's module
                hint = typing.get_type_hints(type(self))[option.name] if isinstance(option.type, str) else option.type
                value = getattr(self, option.name)
                checked = coerce_value(value, hint, f"pass {name} option {option.name}")
                if checked is not value:
                    object.__setattr__(self, option.name, checked)

    def __call__(self, mod):
        return run_pass(self, mod, PassContext.current())

    def _run(self, mod, ctx):
        raise NotImplementedError(f"{type(self).__name__} must implement _run(mod, ctx)")

    def __str__(self):
        from .pipeline import pass_to_text

        return pass_to_text(self)

    def __repr__(self):
        return str(self)


class ModulePass(Pass):
    """A pass over a whole :class:`IRModule` (it may add or remove functions).

    Built from a function ``(mod, ctx) -> mod`` by :func:`module_pass`, or subclassed with ``transform_module``.
    """

    def __init__(self, pass_func, info):
        if not callable(pass_func):
            raise TypeError(f"ModulePass: pass_func must be callable, not {pass_func!r}")
        if not isinstance(info, PassInfo):
            raise TypeError(f"ModulePass: info must be a PassInfo, not {info!r}")
        self._pass_func = pass_func
        self._info = info

    def transform_module(self, mod, ctx):
        """Transform ``mod`` (a copy the pass may change in place) and return the result."""
        return self._pass_func(mod, ctx)

    def _run(self, mod, ctx):
        work = mod.shallow_copy()
        out = self.transform_module(work, ctx)
        if not isinstance(out, IRModule):
            raise KilnError(f"pass {self.info.name} returned {type(out).__name__}, not an IRModule")
        if out is work and same_contents(work, mod):
            return mod
        return out


def pass_decorator_doc(kind, signature, example) -> str:
    """The docstring of a TVM-style pass decorator (they share their parameters)."""
    return f"""Make a {kind} from ``{signature}`` or a class with the matching ``transform_*`` method.

Parameters
----------
pass_func : callable or class, optional
    What to wrap; when omitted, a decorator is returned.
opt_level : int
    Required: the pass runs in a Sequential only when ``opt_level <= PassContext.current().opt_level``.
name : str, optional
    Defaults to the function or class name.
required : list of str, optional
    Passes a Sequential runs before this one.
preserves : list of str or ALL, optional
    Analyses the pass keeps valid (beyond TVM; see :mod:`kiln.ir.analysis`).

Examples
--------
{example}
"""


def same_contents(a, b) -> bool:
    """Whether two modules hold the same function objects under the same names and the same attributes."""
    if a.attrs is not b.attrs and a.attrs != b.attrs:
        return False
    if len(a.functions) != len(b.functions):
        return False
    fb = b.functions
    return all(fb.get(gv, None) is func for gv, func in a.functions.items())


def _add_note(exc, note):
    notes = getattr(exc, "__notes__", ())
    if not any(n.startswith("kiln: ") for n in notes):  # the innermost pass names the culprit
        exc.add_note(f"kiln: {note}")


def _call_hooks(hooks, what, info, *args):
    for hook in hooks:
        try:
            hook(*args)
        except Exception as exc:
            _add_note(exc, f"raised by instrument {_owner(hook)}.{what} for pass {info.name}")
            raise


def _owner(hook):
    return type(getattr(hook, "__self__", hook)).__name__


def run_pass(p, mod, ctx):
    """Run pass ``p`` on ``mod`` under ``ctx`` with the instruments' hooks (what ``p(mod)`` does).

    See the module docstring for the order of events.
    """
    info = p.info
    if not isinstance(mod, IRModule):
        raise TypeError(f"pass {info.name} expects an IRModule, got {type(mod).__name__}")
    hooks = ctx._hooks
    if info.name not in ctx.required_pass:
        should_run = True
        for hook in hooks["should_run"]:  # every instrument is asked, as in TVM, even after a False
            try:
                should_run &= bool(hook(mod, info))
            except Exception as exc:
                _add_note(exc, f"raised by instrument {_owner(hook)}.should_run for pass {info.name}")
                raise
        if not should_run:
            return mod
        if not p._bisects_itself and not ctx.bisect_allows(info):
            return mod
    _call_hooks(hooks["run_before_pass"], "run_before_pass", info, mod, info)
    try:
        out = p._run(mod, ctx)
    except Exception as exc:
        _add_note(exc, f"in pass {info.name}")
        raise
    if out is not mod and ctx._analysis_manager is not None:
        ctx._analysis_manager.update(mod, out, info.preserves)
    _call_hooks(hooks["run_after_pass"], "run_after_pass", info, out, info)
    return out


class Sequential(Pass):
    """Run passes one after another (TVM's ``tvm.transform.Sequential``).

    Each member runs only if the context enables it (not in ``disabled_pass``; in ``required_pass`` or
    ``info.opt_level <= ctx.opt_level``); before it, each pass named in its ``info.required`` runs, looked up with
    :func:`get_pass` (``ValueError`` naming an unknown one).

    Parameters
    ----------
    passes : list of Pass
    opt_level : int
    name : str
    required : list of str, optional

    Examples
    --------
    >>> seq = Sequential([relay.transform.InferType(), relay.transform.FoldConstant()])   # doctest: +SKIP
    >>> with PassContext(opt_level=3):
    ...     mod = seq(mod)
    """

    _bisects_itself = True  # a container is not a pass of its own for bisection

    def __init__(self, passes=None, opt_level=0, name="sequential", required=None, preserves=None):
        passes = [] if passes is None else passes
        if not isinstance(passes, list | tuple):
            raise TypeError(f"Sequential: passes must be a list of Pass, not {type(passes).__name__}")
        for p in passes:
            if not isinstance(p, Pass):
                raise TypeError(f"Sequential {name}: {p!r} is not a Pass")
        self.passes = list(passes)
        self._info = PassInfo(opt_level, name, required, preserves=preserves)

    def _run(self, mod, ctx):
        for p in self.passes:
            info = p.info
            if not ctx.pass_enabled(info):
                continue
            for name in info.required:
                try:
                    required = get_pass(name)
                except PassNotFoundError as exc:
                    raise PassNotFoundError(
                        f"pass {info.name} requires {name!r}, which is not a registered pass"
                    ) from exc
                mod = run_pass(required, mod, ctx)
            mod = run_pass(p, mod, ctx)
        return mod


def _make_info(kind, pass_arg, opt_level, name, required, preserves):
    if opt_level is None:
        raise ValueError(f"{kind}: please provide opt_level (for example @{kind}(opt_level=2))")
    if required is not None and not isinstance(required, list | tuple):
        raise TypeError(f"{kind}: required must be a list/tuple of pass names, not {required!r}")
    return PassInfo(opt_level, name or pass_arg.__name__, () if required is None else tuple(required),
                    preserves=preserves)


def make_pass_decorator(kind_cls, method, kind):
    """Build a TVM-style pass decorator (``module_pass``, ``function_pass``, ``prim_func_pass``).

    The decorator turns a function into ``kind_cls(func, info)``; on a class with ``method`` it returns a
    ``kind_cls`` subclass whose constructor takes the class's arguments and whose attributes forward to the instance.
    """

    def decorator(pass_func=None, opt_level=None, name=None, required=None, preserves=None):
        def create(pass_arg):
            info = _make_info(kind, pass_arg, opt_level, name, required, preserves)
            if inspect.isclass(pass_arg):
                return _wrap_class(kind_cls, pass_arg, info, method, kind)
            if not callable(pass_arg):
                raise TypeError(f"{kind}: expected a function or a class, got {pass_arg!r}")
            return kind_cls(pass_arg, info)

        if pass_func is not None:
            return create(pass_func)
        return create

    return decorator


def _wrap_class(kind_cls, pass_cls, info, method, kind):
    if not callable(getattr(pass_cls, method, None)):
        raise TypeError(f"{kind}: class {pass_cls.__name__} must define {method}")

    def __init__(self, *args, **kwargs):
        inst = pass_cls(*args, **kwargs)
        kind_cls.__init__(self, getattr(inst, method), info)
        self.__dict__["_inst"] = inst

    def __getattr__(self, attr):
        inst = self.__dict__.get("_inst")
        if inst is None:
            raise AttributeError(attr)
        return getattr(inst, attr)

    # help() shows the user's arguments (a function attribute inspect reads; typeshed does not declare it)
    __init__.__signature__ = inspect.signature(pass_cls)  # type: ignore[attr-defined]
    return type(
        pass_cls.__name__,
        (kind_cls,),
        {"__init__": __init__, "__getattr__": __getattr__, "__doc__": pass_cls.__doc__,
         "__module__": pass_cls.__module__, "__qualname__": pass_cls.__qualname__},
    )


module_pass = make_pass_decorator(ModulePass, "transform_module", "module_pass")
module_pass.__name__ = "module_pass"
module_pass.__doc__ = pass_decorator_doc("module pass", "(mod, ctx) -> mod", """>>> @module_pass(opt_level=2)
... def identity(mod, ctx):
...     return mod
>>> identity.info.name
'identity'""")


# --- the registry ------------------------------------------------------------------------------------------------
_PASSES: dict = {}


def register_pass(name, factory=None, override=False):
    """Register a pass under ``name``: a zero-argument factory or a Pass class (called with the pipeline's
    arguments by :func:`parse_pipeline`). Usable as ``@register_pass("FoldConstant")``.

    Examples
    --------
    >>> @register_pass("MyIdentity")   # doctest: +SKIP
    ... def my_identity():
    ...     return module_pass(lambda mod, ctx: mod, opt_level=0, name="MyIdentity")
    """

    def register(f):
        if not callable(f):
            raise TypeError(f"register_pass({name!r}): expected a Pass class or a factory, got {f!r}")
        old = _PASSES.get(name)
        if old is not None and old is not f and not override and _qualname(old) != _qualname(f):
            raise ValueError(f"a pass named {name!r} is already registered ({_qualname(old)})")
        _PASSES[name] = f
        return f

    return register(factory) if factory is not None else register


def _qualname(f):
    return f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', repr(f))}"


def get_pass_factory(name):
    """The factory (or class) registered under ``name``; raises :class:`PassNotFoundError` (a ValueError)."""
    factory = _PASSES.get(name)
    if factory is None:
        _load_builtin_passes()
        factory = _PASSES.get(name)
    if factory is None:
        import difflib

        close = difflib.get_close_matches(str(name), list(_PASSES), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise PassNotFoundError(f"unknown pass {name!r}{hint} (kiln.transform.list_passes() lists them)")
    return factory


def get_pass(name, **kwargs) -> Pass:
    """A new instance of the pass registered under ``name`` (``kwargs`` are its options).

    Examples
    --------
    >>> get_pass("InferType")   # doctest: +SKIP
    InferType
    """
    p = get_pass_factory(name)(**kwargs)
    if not isinstance(p, Pass):
        raise KilnError(f"the factory registered as pass {name!r} returned {type(p).__name__}, not a Pass")
    return p


def list_passes() -> list[str]:
    """The names of every registered pass, sorted."""
    _load_builtin_passes()
    return sorted(_PASSES)


def list_configs() -> dict:
    """Every registered config option: ``{name: {"type": "int", "default": 256}, ...}``."""
    return PassContext.list_configs()


@register_pass("PrintIR")
@dataclass(frozen=True)
class PrintIR(ModulePass):
    """Print the module (``PrintIR(header):`` then its text) to stderr, where TVM's log goes, and return it
    unchanged.

    Examples
    --------
    >>> seq = Sequential([InferType(), PrintIR("after InferType")])   # doctest: +SKIP
    """

    header: str = ""
    show_meta_data: bool = False
    info = PassInfo(0, "PrintIR", preserves=ALL)

    def transform_module(self, mod, ctx):
        print(f"PrintIR({self.header}):\n{mod}", file=sys.stderr)
        return mod


def pass_fields(p) -> dict:
    """The options of a dataclass pass that differ from their defaults, by name (empty for other passes)."""
    if not dataclasses.is_dataclass(p):
        return {}
    out = {}
    for f in dataclasses.fields(p):
        if f.name.startswith("_"):
            continue
        value = getattr(p, f.name)
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            out[f.name] = value
            continue
        if not (value is default or value == default):
            out[f.name] = value
    return out


from .pipeline import PipelineError, parse_pipeline  # noqa: E402  (the parser builds the classes above)
