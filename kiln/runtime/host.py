"""The CPU this process runs on, as LLVM names it: its name and its instruction-set features.

The runtime compares a library's recorded features with these before running its code (a kernel built for a CPU
the host is not would die with ``SIGILL``), and :mod:`kiln.target.cpu` describes the host target from them. LLVM's
host detection (through llvmlite) is used when available; without it ``/proc/cpuinfo``'s flags are translated to
LLVM's feature names.
"""

import functools
import os

__all__ = ["host_cpu_name", "host_cpu_features", "missing_features", "physical_memory", "X86_64_BASELINE"]

X86_64_BASELINE = ("64bit", "cmov", "cx8", "fxsr", "mmx", "sse", "sse2")
"""Features every x86-64 CPU has."""


@functools.cache
def host_cpu_name() -> str:
    """The host CPU as LLVM names it (``"znver4"``); ``"generic"`` when llvmlite is unavailable."""
    try:
        import llvmlite.binding as llvm
    except ImportError:
        return "generic"
    return llvm.get_host_cpu_name()


@functools.cache
def host_cpu_features() -> frozenset:
    """The host CPU's enabled features, LLVM's names without ``+`` (``{"avx2", "fma", ...}``)."""
    try:
        import llvmlite.binding as llvm
    except ImportError:
        return _features_from_cpuinfo()
    return frozenset(name for name, on in llvm.get_host_cpu_features().items() if on)


# /proc/cpuinfo flag -> LLVM feature name, where they differ
_CPUINFO_NAMES = {"pni": "sse3", "sse4_1": "sse4.1", "sse4_2": "sse4.2", "lahf_lm": "sahf", "abm": "lzcnt",
                  "pclmulqdq": "pclmul", "avx512_vnni": "avx512vnni", "avx512_bf16": "avx512bf16",
                  "avx512_fp16": "avx512fp16", "avx512_vbmi2": "avx512vbmi2", "avx512_bitalg": "avx512bitalg",
                  "avx512_vpopcntdq": "avx512vpopcntdq", "avx_vnni": "avxvnni", "amx_tile": "amx-tile",
                  "amx_int8": "amx-int8", "amx_bf16": "amx-bf16", "lm": "64bit"}


def _features_from_cpuinfo() -> frozenset:
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    return frozenset(_CPUINFO_NAMES.get(flag, flag) for flag in flags) | frozenset(X86_64_BASELINE)


def physical_memory() -> int:
    """Bytes of physical memory of this machine (1 TiB when the system does not say): a tensor larger than that
    cannot be held, and asking for it is refused before allocating."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 40


def missing_features(required) -> list:
    """The features of ``required`` (LLVM names) that the host lacks, sorted."""
    have = host_cpu_features()
    return sorted(f for f in required if f not in have)
