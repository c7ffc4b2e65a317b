"""TVM's ``tvm.target.codegen`` queries about the LLVM kiln compiles with (llvmlite's) and the host it runs on."""

from ..error import CodegenError
from ..runtime.host import host_cpu_features, host_cpu_name
from .llvm_compile import _llvm

__all__ = ["llvm_version_major", "llvm_get_system_cpu", "llvm_get_system_triple", "llvm_cpu_has_features"]


def llvm_version_major(allow_none=False):
    """The major version of the LLVM llvmlite is built on.

    Parameters
    ----------
    allow_none : bool
        Return None instead of raising when llvmlite is unavailable.

    Returns
    -------
    major : int or None
    """
    try:
        return int(_llvm().llvm_version_info[0])
    except CodegenError:
        if allow_none:
            return None
        raise


def llvm_get_system_cpu() -> str:
    """The host CPU as LLVM names it (``"znver4"``)."""
    return host_cpu_name()


def llvm_get_system_triple() -> str:
    """The host's target triple (``"x86_64-unknown-linux-gnu"``)."""
    return _llvm().get_process_triple()


def llvm_cpu_has_features(cpu_features, target=None) -> bool:
    """Whether the host CPU has every feature in ``cpu_features`` (a name or a list of LLVM feature names); only
    the host can be asked (``target`` must be None)."""
    if target is not None:
        raise CodegenError("llvm_cpu_has_features: kiln can only answer for the host CPU (target=None)")
    wanted = [cpu_features] if isinstance(cpu_features, str) else list(cpu_features)
    return all(f in host_cpu_features() for f in wanted)
