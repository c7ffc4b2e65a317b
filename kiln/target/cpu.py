"""What code generation and schedules know about an x86-64 CPU: its instruction sets, register file and caches.

One :class:`CPUFamily` per micro-architecture family, listing the ``-mcpu`` names LLVM gives its members, the ISA
features every member has (LLVM's names, without the ``+``), the vector register file (width and count), the vector
FMA pipes per core and their latency, and the per-core data caches. Schedules read these facts through
:func:`cpu_info` (``target.cpu_info``) and never test feature names themselves: a register tile is sized from
``vector_registers``, ``fma_units * fma_latency`` independent accumulators keep the FMA pipes busy, and the caches
bound reduction blocks.

The host is described by what LLVM reports of it: its features as they are (a virtual machine may hide some), and
its family from its name when the name is known and its features include the family's, else the most capable family
whose features it has. ``-mattr`` adds and removes features on top of a target's CPU.

A library records the features it was compiled with (:func:`required_features`); the runtime's
:func:`~kiln.runtime.host.missing_features` names the ones the running host lacks, so loading code built for another
CPU fails with an error instead of ``SIGILL``.
"""

import functools
from dataclasses import dataclass

from ..runtime.host import X86_64_BASELINE, host_cpu_features, host_cpu_name, missing_features

__all__ = ["CPUFamily", "CPUInfo", "FAMILIES", "cpu_info", "family_of", "host_cpu_name", "host_cpu_features",
           "host_cpu", "required_features", "missing_features", "KNOWN_CPUS"]


_SSE2 = X86_64_BASELINE
_V2 = _SSE2 + ("cx16", "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3")
_AVX = _V2 + ("avx", "pclmul", "xsave")
_AVX2 = _AVX + ("avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe")
_AVX512 = _AVX2 + ("avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl")
_AVX512_ICL = _AVX512 + ("avx512bitalg", "avx512ifma", "avx512vbmi", "avx512vbmi2", "avx512vnni", "avx512vpopcntdq",
                         "gfni", "vaes", "vpclmulqdq")

@dataclass(frozen=True, slots=True)
class CPUFamily:
    """A micro-architecture family: the facts its members share.

    Attributes
    ----------
    name : str
        The family's name (its first member, or an x86-64 level).
    cpus : tuple of str
        ``-mcpu`` names LLVM gives the members.
    features : tuple of str
        ISA features every member has (LLVM names, no ``+``).
    vector_bits : int
        Width of the widest vector register the family computes with.
    vector_registers : int
        Architectural vector registers (16 before AVX-512, 32 with it).
    fma_units : int
        Vector FMA instructions of full width started per cycle per core.
    fma_latency : int
        Cycles from an FMA's inputs to its result.
    l1d_kib, l2_kib : int
        Per-core data cache sizes.
    """

    name: str
    cpus: tuple
    features: tuple
    vector_bits: int
    vector_registers: int
    fma_units: int
    fma_latency: int
    l1d_kib: int
    l2_kib: int


def _family(name, cpus, features, bits, fma_units, l1d_kib, l2_kib):
    return CPUFamily(name, tuple(cpus.split()), features, vector_bits=bits, vector_registers=32 if bits == 512 else 16,
                     fma_units=fma_units, fma_latency=4, l1d_kib=l1d_kib, l2_kib=l2_kib)


FAMILIES = (
    # name, -mcpu names, features, vector bits, FMA pipes, L1d KiB, L2 KiB
    _family("x86-64", "x86-64 generic k8 opteron athlon64 nocona core2 penryn bonnell atom amdfam10 btver1",
            _SSE2, 128, 0, 32, 256),
    _family("x86-64-v2", "x86-64-v2 nehalem corei7 westmere silvermont slm goldmont goldmont-plus tremont",
            _V2, 128, 0, 32, 256),
    _family("sandybridge", "sandybridge corei7-avx ivybridge core-avx-i btver2 bdver1", _AVX, 256, 0, 32, 256),
    _family("haswell", "haswell core-avx2 broadwell skylake x86-64-v3 bdver4 znver1 znver2 znver3 alderlake "
                       "raptorlake meteorlake arrowlake arrowlake-s lunarlake gracemont sierraforest grandridge "
                       "pantherlake clearwaterforest", _AVX2, 256, 2, 32, 512),
    _family("skylake-avx512", "skylake-avx512 x86-64-v4", _AVX512, 512, 2, 32, 1024),
    _family("cascadelake", "cascadelake cooperlake", _AVX512 + ("avx512vnni",), 512, 2, 32, 1024),
    _family("icelake", "icelake-client icelake-server tigerlake rocketlake cannonlake", _AVX512_ICL, 512, 1, 48, 1280),
    _family("znver4", "znver4 znver5", _AVX512_ICL + ("avx512bf16",), 512, 1, 32, 1024),
    _family("sapphirerapids", "sapphirerapids emeraldrapids graniterapids graniterapids-d diamondrapids",
            _AVX512_ICL + ("amx-bf16", "amx-int8", "amx-tile", "avx512bf16", "avx512fp16", "avxvnni"), 512, 2, 48,
            2048),
)
"""The families, least capable first."""

_BY_CPU = {cpu: family for family in FAMILIES for cpu in family.cpus}
KNOWN_CPUS = frozenset(_BY_CPU)
"""The ``-mcpu`` names a target may give (besides ``native``)."""


@dataclass(frozen=True, slots=True)
class CPUInfo:
    """The CPU a target compiles for: its name, enabled features and family facts (see :class:`CPUFamily`).

    ``vector_bits`` follows the features, so ``-mattr=-avx512f`` on an AVX-512 CPU gives 256-bit vectors with 16
    registers, as the code generator then emits.
    """

    name: str
    family: CPUFamily
    features: frozenset

    @property
    def vector_bits(self) -> int:
        if "avx512f" in self.features:
            return 512
        if "avx" in self.features:
            return 256
        return 128

    @property
    def vector_registers(self) -> int:
        return 32 if "avx512f" in self.features else 16

    @property
    def fma_units(self) -> int:
        return self.family.fma_units if "fma" in self.features else 0

    @property
    def fma_latency(self) -> int:
        return self.family.fma_latency

    @property
    def l1d_bytes(self) -> int:
        return self.family.l1d_kib * 1024

    @property
    def l2_bytes(self) -> int:
        return self.family.l2_kib * 1024

    def __repr__(self):
        return (f"CPUInfo({self.name}: {self.family.name} family, {self.vector_bits}-bit vectors x "
                f"{self.vector_registers} registers, {self.fma_units} FMA units, {len(self.features)} features)")

    def independent_accumulators(self) -> int:
        """How many independent vector accumulators keep every FMA pipe busy (units x latency; 4 without FMA)."""
        return max(4, self.fma_units * self.fma_latency)


def family_of(cpu: str, features=None) -> CPUFamily:
    """The family of ``cpu`` (an LLVM ``-mcpu`` name). Given ``features`` (the CPU's actual feature names), the most
    capable family whose features are all present, preferring ``cpu``'s own among equals: a virtual machine may
    report one CPU's name with another's features, and the features are what the code runs on."""
    family = _BY_CPU.get(cpu)
    if features is None:
        return family if family is not None else FAMILIES[0]
    have = set(features)
    fits = [f for f in FAMILIES if set(f.features) <= have] or [FAMILIES[0]]
    most = max(len(f.features) for f in fits)
    if family in fits and len(family.features) == most:
        return family
    return next(f for f in reversed(fits) if len(f.features) == most)


@functools.cache
def host_cpu() -> CPUInfo:
    """The CPU kiln runs on."""
    features = host_cpu_features()
    return CPUInfo(host_cpu_name(), family_of(host_cpu_name(), features), features)


@functools.cache
def cpu_info(mcpu: str = "", mattr: tuple = ()) -> CPUInfo:
    """The CPU of a target with ``-mcpu=mcpu`` (``""``/``"native"``: the host) and ``-mattr=mattr``
    (``("+avx512f", "-fma")``) on top of the CPU's features."""
    if mcpu in ("", "native"):
        base = host_cpu()
        name, features = base.name, set(base.features)
    else:
        name, features = mcpu, set(family_of(mcpu).features)
    for attr in mattr:
        (features.add if attr[0] == "+" else features.discard)(attr[1:])
    if "avx512f" not in features:  # the AVX-512 extensions mean nothing without the foundation
        features = {f for f in features if not f.startswith("avx512")}
    return CPUInfo(name, family_of(name, features), frozenset(features))


def required_features(info: CPUInfo) -> list:
    """The features code compiled for ``info`` may use, sorted: what a library built for it records."""
    return sorted(info.features)
