"""``Target``: what code is generated for (TVM's ``tvm.target.Target``).

A target is parsed from a string such as ``"llvm -mcpu=native -num-cores=2"``: a kind (``llvm`` or ``c``, both for the
host CPU) followed by ``-key=value`` options. Each kind declares its options and their types in :data:`TARGET_KINDS`,
so an unknown kind, an unknown option or a badly typed value raises :class:`kiln.error.KilnError` naming it.

Targets are value nodes (compared by value, usable as dict keys, serializable with ``kiln.ir.save_json``). What the
code generators need beyond the options is derived here once: the CPU name LLVM knows (``-mcpu=native`` or no
``-mcpu`` means the host's), its feature set (``+avx512f`` ...), and from those the vector width in bits, read from
the host when the target is the host CPU.

``with Target("llvm"):`` makes a target current for the calling thread; ``Target.current()`` returns it (``None``
outside any ``with``, as in TVM). The constructor and ``current`` are also registered as the global functions
``"target.Target"`` and ``"target.Target.current"`` so layers below ``kiln.target`` can reach them.
"""

import functools
import os
import threading
from dataclasses import dataclass

from ..error import KilnError
from ..ir.node import Node
from ..runtime.packed_func import register_func

_LIST, _STR, _INT, _BOOL = "list", "str", "int", "bool"

# options common to the CPU kinds (TVM's llvm options that matter here)
_CPU_OPTIONS = {
    "mcpu": _STR, "mattr": _LIST, "mtriple": _STR, "num-cores": _INT, "opt-level": _INT, "keys": _LIST,
    "device": _STR, "model": _STR, "libs": _LIST, "vector-width": _INT, "tag": _STR, "max-function-args": _INT,
}
TARGET_KINDS = {"llvm": _CPU_OPTIONS, "c": _CPU_OPTIONS}
"""Target kind name -> {option name: value type}."""

_DEFAULT_KEYS = {"llvm": ("cpu",), "c": ("cpu",)}

# vector register width of CPUs named by -mcpu, for targets that are not the host (host features are read instead)
_WIDE_CPUS_512 = ("skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake", "tigerlake",
                  "sapphirerapids", "emeraldrapids", "graniterapids", "znver4", "znver5", "x86-64-v4", "rocketlake")
_WIDE_CPUS_256 = ("haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake", "znver1", "znver2",
                  "znver3", "x86-64-v3", "core-avx2", "bdver4")


@dataclass(frozen=True, slots=True)
class TargetKind(Node):
    """The kind of a target: ``target.kind.name`` is ``"llvm"`` or ``"c"``."""

    name: str

    type_key = "target.TargetKind"

    @property
    def default_keys(self) -> tuple:
        return _DEFAULT_KEYS.get(self.name, ())

    @property
    def options(self) -> dict:
        """Option name -> value type (``"str"``, ``"int"``, ``"list"``, ``"bool"``)."""
        return dict(TARGET_KINDS[self.name])

    def __str__(self):
        return self.name


class _TargetStack(threading.local):
    def __init__(self):
        self.stack: list = []


_CURRENT = _TargetStack()


@dataclass(frozen=True, slots=True, init=False, repr=False)
class Target(Node):
    """A compilation target.

    Parameters
    ----------
    target : str, dict or Target
        ``"llvm -mcpu=native -num-cores=2"``, ``"c"``, a config dict (``{"kind": "llvm", "mcpu": "native"}``) or a
        Target (returned as is unless ``host`` is given).
    host : str, dict or Target, optional
        The target of host code (for the CPU kinds the target is its own host).

    Attributes
    ----------
    kind : TargetKind
        ``target.kind.name`` is ``"llvm"`` or ``"c"``.
    attrs : dict
        The options given, by name (``target.attrs["mcpu"]``), with defaults filled in.
    mcpu, mattr, mtriple, num_cores, keys : options, as attributes.
    cpu_name : str
        The CPU LLVM compiles for (``native`` resolved to the host's).
    features : tuple of str
        CPU features (``"+avx512f"`` ...) enabled for code generation.
    vector_width : int
        Width of a vector register in bits (512 with AVX-512).

    Examples
    --------
    >>> t = Target("llvm -mcpu=native -num-cores=2")
    >>> t.kind.name, t.num_cores
    ('llvm', 2)
    >>> with Target("c"):
    ...     Target.current().kind.name
    'c'
    """

    kind: TargetKind
    options: tuple
    host: "Target | None" = None

    type_key = "target.Target"

    def __init__(self, target, host=None, *, options=None, kind=None):
        if kind is not None:  # the field-wise form, used by with_host and JSON loading
            parsed_kind, parsed = (kind if isinstance(kind, TargetKind) else TargetKind(str(kind))), tuple(options)
        elif isinstance(target, Target):
            parsed_kind, parsed = target.kind, target.options
            host = host if host is not None else target.host
        elif isinstance(target, dict):
            parsed_kind, parsed, dict_host = _parse_dict(target)
            host = host if host is not None else dict_host
        elif isinstance(target, str):
            parsed_kind, parsed = _parse_string(target)
        else:
            raise KilnError(f"Target: expected a target string, dict or Target, got {type(target).__name__}")
        if host is not None and not isinstance(host, Target):
            host = Target(host)
        object.__setattr__(self, "kind", parsed_kind)
        object.__setattr__(self, "options", parsed)
        object.__setattr__(self, "host", host)

    @classmethod
    def __from_json__(cls, fields):
        return cls(None, fields.get("host"), options=fields["options"], kind=fields["kind"])

    # ---- options
    @property
    def attrs(self) -> dict:
        """Every option by name (underscores, as TVM's ``target.attrs``), defaults filled in."""
        out = {"keys": list(self.kind.default_keys), "num-cores": _host_cores(), "mattr": []}
        out.update({k: list(v) if isinstance(v, tuple) else v for k, v in self.options})
        return {k.replace("-", "_"): v for k, v in out.items()}

    def _get(self, name, default=None):
        for k, v in self.options:
            if k == name:
                return v
        return default

    @property
    def mcpu(self) -> str:
        return self._get("mcpu", "")

    @property
    def mattr(self) -> tuple:
        return self._get("mattr", ())

    @property
    def mtriple(self) -> str:
        return self._get("mtriple", "")

    @property
    def num_cores(self) -> int:
        """Threads parallel loops use (``-num-cores``; the host's usable cores by default)."""
        return self._get("num-cores", _host_cores())

    @property
    def keys(self) -> tuple:
        return self._get("keys", self.kind.default_keys)

    @property
    def max_function_args(self) -> int:
        """The most parameters a generated function may take (``-max-function-args``; 0: no limit). FuseOps keeps
        every primitive function within it."""
        return self._get("max-function-args", 0)

    @property
    def opt_level(self) -> int:
        return self._get("opt-level", 3)

    @property
    def libs(self) -> tuple:
        return self._get("libs", ())

    @property
    def is_host_cpu(self) -> bool:
        """Whether code is generated for the CPU running kiln (no -mcpu, or -mcpu=native)."""
        return self.mcpu in ("", "native")

    @property
    def cpu_name(self) -> str:
        """The CPU name for LLVM and ``-march`` (``native`` resolved to the host CPU)."""
        return host_cpu_name() if self.is_host_cpu else self.mcpu

    @property
    def features(self) -> tuple:
        """Enabled CPU features: the host's for the host CPU, then ``-mattr`` on top."""
        base = [f for f in host_cpu_features() if f.startswith("+")] if self.is_host_cpu else []
        extra = list(self.mattr)
        dropped = {f[1:] for f in extra if f.startswith("-")}
        merged = [f for f in base if f[1:] not in dropped]
        merged += [f for f in extra if f not in merged]
        return tuple(merged)

    @property
    def vector_width(self) -> int:
        """Bits in a vector register: ``-vector-width``, else from the features or the CPU name."""
        explicit = self._get("vector-width")
        if explicit:
            return explicit
        feats = set(self.features)
        if "+avx512f" in feats:
            return 512
        if "+avx" in feats or "+avx2" in feats:
            return 256
        cpu = self.cpu_name
        if cpu in _WIDE_CPUS_512:
            return 512
        if cpu in _WIDE_CPUS_256:
            return 256
        return 128

    def vector_lanes(self, dtype="float32") -> int:
        """Lanes of ``dtype`` in one vector register (16 float32 lanes with AVX-512)."""
        from ..tir.dtype import DataType

        return max(1, self.vector_width // DataType.parse(dtype).bits)

    def with_host(self, host=None) -> "Target":
        """A copy whose host is ``host``."""
        return Target(None, host, options=self.options, kind=self.kind)

    def export(self) -> dict:
        """The target as a config dict (``Target(t.export()) == t``)."""
        out = {"kind": self.kind.name}
        out.update({k: list(v) if isinstance(v, tuple) else v for k, v in self.options})
        if self.host is not None:
            out["host"] = self.host.export()
        return out

    # ---- current target
    def __enter__(self):
        _CURRENT.stack.append(self)
        return self

    def __exit__(self, *exc):
        _CURRENT.stack.pop()

    @staticmethod
    def current(allow_none=True) -> "Target | None":
        """The innermost target entered with ``with``; None (or KilnError unless ``allow_none``) outside any."""
        if _CURRENT.stack:
            return _CURRENT.stack[-1]
        if not allow_none:
            raise KilnError("Target.current(): no target is set (enter one with `with kiln.target.Target(...)`)")
        return None

    @staticmethod
    def list_kinds() -> list:
        """Names of the known target kinds."""
        return sorted(TARGET_KINDS)

    def __str__(self):
        parts = [self.kind.name]
        opts = dict(self.options)
        opts.setdefault("keys", self.kind.default_keys)
        for name in sorted(opts):
            value = opts[name]
            if isinstance(value, tuple):
                value = ",".join(value)
            elif isinstance(value, bool):
                value = str(value).lower()
            parts.append(f"-{name}={value}")
        return " ".join(parts)

    def __repr__(self):
        return f"Target({str(self)!r}{'' if self.host is None else f', host={str(self.host)!r}'})"


def _convert(kind, name, value, text):
    """Check and convert one option value; ``text`` is what the user wrote (for the error message)."""
    options = TARGET_KINDS[kind]
    if name not in options:
        raise KilnError(f"Target {text!r}: unknown option -{name} for kind {kind!r} "
                        f"(known: {', '.join('-' + o for o in sorted(options))})")
    typ = options[name]
    if typ == _INT:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise KilnError(f"Target {text!r}: option -{name} needs an integer, got {value!r}")
        try:
            value = int(value)
        except ValueError:
            raise KilnError(f"Target {text!r}: option -{name} needs an integer, got {value!r}") from None
        if name == "num-cores" and value < 1:
            raise KilnError(f"Target {text!r}: option -num-cores must be at least 1, got {value}")
        return value
    if typ == _LIST:
        items = value.split(",") if isinstance(value, str) else list(value)
        items = tuple(str(i).strip() for i in items if str(i).strip())
        if name == "mattr":
            for item in items:
                if item[0] not in "+-":
                    raise KilnError(f"Target {text!r}: -mattr entry {item!r} must start with + or -")
        return items
    if typ == _BOOL:
        if isinstance(value, str):
            if value.lower() not in ("true", "false", "1", "0"):
                raise KilnError(f"Target {text!r}: option -{name} needs true or false, got {value!r}")
            return value.lower() in ("true", "1")
        return bool(value)
    if not isinstance(value, str) or not value:
        raise KilnError(f"Target {text!r}: option -{name} needs a non-empty string value")
    return value


def _check_kind(kind, text):
    if kind not in TARGET_KINDS:
        raise KilnError(f"Target {text!r}: unknown target kind {kind!r} (known: {', '.join(sorted(TARGET_KINDS))})")
    return TargetKind(kind)


def _parse_string(text):
    tokens = text.split()
    if not tokens:
        raise KilnError("Target: empty target string")
    kind = _check_kind(tokens[0], text)
    options = {}
    for token in tokens[1:]:
        if not token.startswith("-") or token == "-":
            raise KilnError(f"Target {text!r}: option {token!r} must look like -name=value")
        name, eq, value = token.lstrip("-").partition("=")
        if not eq:
            if TARGET_KINDS[kind.name].get(name) != _BOOL:
                raise KilnError(f"Target {text!r}: option -{name} needs a value (-{name}=...)")
            value = "true"
        options[name] = _convert(kind.name, name, value, text)
    return kind, _normalized(kind, options)


def _parse_dict(config):
    config = dict(config)
    text = str(config)
    kind = _check_kind(config.pop("kind", None), text)
    host = config.pop("host", None)
    options = {}
    for name, value in config.items():
        name = name.replace("_", "-")
        options[name] = _convert(kind.name, name, value, text)
    return kind, _normalized(kind, options), host


def _normalized(kind, options):
    """Sorted option items; default keys are dropped so that ``Target(str(t)) == t``."""
    if options.get("keys") == kind.default_keys:
        del options["keys"]
    return tuple(sorted(options.items()))


@functools.cache
def host_cpu_name() -> str:
    """The host CPU as LLVM names it (``"znver4"``); ``"generic"`` when llvmlite is unavailable."""
    try:
        import llvmlite.binding as llvm
    except ImportError:
        return "generic"
    return llvm.get_host_cpu_name()


@functools.cache
def host_cpu_features() -> tuple:
    """The host CPU's features as LLVM reports them (``("+avx2", "-avx512fp16", ...)``)."""
    try:
        import llvmlite.binding as llvm
    except ImportError:
        return _features_from_cpuinfo()
    return tuple(sorted(llvm.get_host_cpu_features().flatten().split(",")))


def _features_from_cpuinfo() -> tuple:
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return ()
    names = {"avx": "avx", "avx2": "avx2", "fma": "fma", "avx512f": "avx512f", "sse4_2": "sse4.2"}
    return tuple(sorted(f"+{names[f]}" for f in flags if f in names))


def _host_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _make_target(target, host=None):
    return Target(target, host)


register_func("target.Target", _make_target)
register_func("target.Target.current", lambda allow_none=True: Target.current(allow_none))
