"""``Target``: what code is generated for (TVM's ``tvm.target.Target``).

A target is parsed from a string such as ``"llvm -mcpu=native -num-cores=2"``: a kind (``llvm`` or ``c``, both for the
host CPU; the GPU kinds ``cuda``, ``opencl``, ``metal``... describe a device with TVM's attributes, but nothing
builds for them) followed by ``-key=value`` options. Each kind declares its options and their types in
:data:`TARGET_KINDS`, so an unknown kind, an unknown option or a badly typed value raises
:class:`kiln.error.KilnError` naming it.

Targets are value nodes (compared by value, usable as dict keys, serializable with ``kiln.ir.save_json``). What the
code generators and schedules need beyond the options is derived once, in :mod:`kiln.target.cpu`: the CPU name LLVM
knows (``-mcpu=native`` or no ``-mcpu`` means the host's), its features (``+avx512f`` ...; the host's as LLVM reports
them, a named CPU's from its family's table, ``-mattr`` on top), its vector register file and caches.

``with Target("llvm"):`` makes a target current for the calling thread; ``Target.current()`` returns it (``None``
outside any ``with``, as in TVM) and :func:`resolve_target` turns what a user passed (a Target, a string, None) into
one. This module and :mod:`kiln.target.cpu` sit low in the layering (beside the TIR nodes), so topi and every layer
above import them directly; the code generators in the rest of the package sit above topi.
"""

import os
import threading
from dataclasses import dataclass

from ..error import KilnError
from ..ir.node import Node
from ..runtime.packed_func import register_func
from .cpu import KNOWN_CPUS, CPUInfo, cpu_info, host_cpu_features, host_cpu_name  # noqa: F401  (re-exported)

_LIST, _STR, _INT, _BOOL = "list", "str", "int", "bool"

# options common to the CPU kinds (TVM's llvm options that matter here)
_CPU_OPTIONS = {
    "mcpu": _STR, "mattr": _LIST, "mtriple": _STR, "num-cores": _INT, "opt-level": _INT, "keys": _LIST,
    "device": _STR, "model": _STR, "libs": _LIST, "vector-width": _INT, "tag": _STR, "max-function-args": _INT,
}
# GPU kinds are descriptions only: kiln generates no code for them (every build refuses them), but programs and
# TVM's tests read their attributes (FuseOps bounds a kernel's parameters by ``max_function_args``), so the kinds
# exist with TVM's options and defaults (``src/target/target_kind.cc``)
_GPU_OPTIONS = {
    "keys": _LIST, "tag": _STR, "device": _STR, "model": _STR, "libs": _LIST, "max-num-threads": _INT,
    "max-threads-per-block": _INT, "max-shared-memory-per-block": _INT, "thread-warp-size": _INT,
}
TARGET_KINDS = {
    "llvm": _CPU_OPTIONS, "c": _CPU_OPTIONS,
    "cuda": {**_GPU_OPTIONS, "mcpu": _STR, "arch": _STR, "registers-per-block": _INT, "l2-cache-size-bytes": _INT},
    "nvptx": {**_GPU_OPTIONS, "mcpu": _STR, "mtriple": _STR},
    "rocm": {**_GPU_OPTIONS, "mcpu": _STR, "mtriple": _STR, "mattr": _LIST},
    "opencl": {**_GPU_OPTIONS, "texture-spatial-limit": _INT, "max-function-args": _INT},
    "metal": {**_GPU_OPTIONS, "max-function-args": _INT},
    "vulkan": {**_GPU_OPTIONS, "mattr": _LIST},
    "webgpu": _GPU_OPTIONS,
}
"""Target kind name -> {option name: value type}."""

CPU_KINDS = ("llvm", "c")
"""The kinds kiln generates code for; the others only describe a device."""

_DEFAULT_KEYS = {"llvm": ("cpu",), "c": ("cpu",), "cuda": ("cuda", "gpu"), "nvptx": ("cuda", "gpu"),
                 "rocm": ("rocm", "gpu"), "opencl": ("opencl", "gpu"), "metal": ("metal", "gpu"),
                 "vulkan": ("vulkan", "gpu"), "webgpu": ("webgpu", "gpu")}

_KIND_DEFAULTS = {
    "cuda": {"max-num-threads": 1024, "thread-warp-size": 32},
    "nvptx": {"max-num-threads": 1024, "thread-warp-size": 32},
    "rocm": {"max-num-threads": 256, "max-threads-per-block": 256, "max-shared-memory-per-block": 65536,
             "thread-warp-size": 64},
    "opencl": {"max-num-threads": 256, "max-threads-per-block": 256, "max-shared-memory-per-block": 16384,
               "thread-warp-size": 1, "texture-spatial-limit": 16384, "max-function-args": 128},
    "metal": {"max-num-threads": 256, "max-threads-per-block": 256, "max-shared-memory-per-block": 32768,
              "thread-warp-size": 16, "max-function-args": 31},
    "vulkan": {"max-num-threads": 256, "max-threads-per-block": 256, "thread-warp-size": 1},
    "webgpu": {"max-num-threads": 256},
}

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
    cpu_info : kiln.target.cpu.CPUInfo
        The CPU's features, vector registers, FMA pipes and caches, which schedules size their tiles by.
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
            parsed_kind, parsed, text_host = _parse_string(target)
            host = host if host is not None else text_host
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
        out = {"keys": list(self.kind.default_keys), **_KIND_DEFAULTS.get(self.kind.name, {})}
        if self.kind.name in CPU_KINDS:
            out.update({"num-cores": _host_cores(), "mattr": []})
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
        return self._get("max-function-args", _KIND_DEFAULTS.get(self.kind.name, {}).get("max-function-args", 0))

    @property
    def max_num_threads(self) -> int:
        """Threads of one GPU block (TVM's attribute of the GPU kinds; 0 for the CPU kinds)."""
        return self._get("max-num-threads", _KIND_DEFAULTS.get(self.kind.name, {}).get("max-num-threads", 0))

    @property
    def thread_warp_size(self) -> int:
        """Threads of one GPU warp (TVM's attribute of the GPU kinds; 1 for the CPU kinds)."""
        return self._get("thread-warp-size", _KIND_DEFAULTS.get(self.kind.name, {}).get("thread-warp-size", 1))

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
    def cpu_info(self) -> CPUInfo:
        """What schedules know of the CPU: features, vector register file, FMA pipes, caches
        (:mod:`kiln.target.cpu`)."""
        return cpu_info("" if self.is_host_cpu else self.mcpu, self.mattr)

    @property
    def features(self) -> tuple:
        """CPU features code generation may use (``"+avx512f"`` ...): the CPU's (the host's for the host CPU), with
        ``-mattr`` on top; features ``-mattr`` removes are listed with a ``-``."""
        enabled = ["+" + f for f in sorted(self.cpu_info.features)]
        return tuple(enabled + [a for a in self.mattr if a[0] == "-"])

    @property
    def vector_width(self) -> int:
        """Bits in a vector register: ``-vector-width``, else the CPU's widest enabled vectors."""
        return self._get("vector-width") or self.cpu_info.vector_bits

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
    if name == "mcpu" and value != "native" and value not in KNOWN_CPUS:
        # LLVM would ignore an unknown CPU and emit generic code: refuse it instead
        raise KilnError(f"Target {text!r}: unknown CPU -mcpu={value} (known: native, "
                        f"{', '.join(sorted(KNOWN_CPUS))})")
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
    options: dict = {}
    host = None
    for token in tokens[1:]:
        if not token.startswith("-") or token == "-":
            raise KilnError(f"Target {text!r}: option {token!r} must look like -name=value")
        name, eq, value = token.lstrip("-").partition("=")
        name = name.replace("_", "-")  # TVM spells GPU options with underscores (-max_threads_per_block=1024)
        if name == "host":  # "llvm --host=llvm": the host target, as TVM reads it from a string
            if not value:
                raise KilnError(f"Target {text!r}: -host needs a target kind (-host=llvm)")
            host = _check_kind(value, text).name
            if host not in CPU_KINDS:
                raise KilnError(f"Target {text!r}: the host must be a CPU kind ({', '.join(CPU_KINDS)}), got {host!r}")
            continue
        if not eq:
            if TARGET_KINDS[kind.name].get(name) != _BOOL:
                raise KilnError(f"Target {text!r}: option -{name} needs a value (-{name}=...)")
            value = "true"
        options[name] = _convert(kind.name, name, value, text)
    return kind, _normalized(kind, options), host


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
    """Sorted option items; default keys are dropped so that ``Target(str(t)) == t``. A ``-device`` leads the keys
    when none are given, as in TVM (``llvm -device=arm_cpu`` has the keys ``arm_cpu, cpu``): generic functions and
    strategies dispatch on it before the kind's keys."""
    if "keys" not in options and options.get("device"):
        options["keys"] = tuple(dict.fromkeys((options["device"], *kind.default_keys)))
    if options.get("keys") == kind.default_keys:
        del options["keys"]
    return tuple(sorted(options.items()))


def _host_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def resolve_target(target=None, default="llvm") -> Target:
    """A Target from ``target``: a Target as it is, a string or config dict parsed, None the current target (else
    ``default``)."""
    if isinstance(target, Target):
        return target
    if target is None:
        current = Target.current()
        return current if current is not None else Target(default)
    return Target(target)


register_func("target.Target", lambda target, host=None: Target(target, host))
register_func("target.Target.current", lambda allow_none=True: Target.current(allow_none))
