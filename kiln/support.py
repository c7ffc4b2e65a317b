"""``tvm.support``: what this build of kiln can do, in the form of TVM's build flags (``libinfo()``), so scripts
that skip work a TVM build lacks skip the same work here."""

import importlib.util
import shutil

__all__ = ["libinfo"]


def libinfo() -> dict:
    """The build flags, TVM's names (``{"USE_LLVM": "ON", "USE_CUDA": "OFF", ...}``): kiln compiles C with the
    system compiler and LLVM IR with llvmlite, for the host CPU only; it has no microTVM, no accelerator runtime
    and no third-party kernel library."""
    llvm = importlib.util.find_spec("llvmlite") is not None
    return {
        "USE_LLVM": "ON" if llvm else "OFF",
        "USE_CC": shutil.which("cc") or shutil.which("gcc") or "OFF",
        "USE_MICRO": "OFF",
        "USE_CUDA": "OFF",
        "USE_OPENCL": "OFF",
        "USE_VULKAN": "OFF",
        "USE_METAL": "OFF",
        "USE_ROCM": "OFF",
        "USE_DNNL": "OFF",
        "USE_CUTLASS": "OFF",
        "USE_TENSORRT_CODEGEN": "OFF",
        "USE_RPC": "ON",
        "USE_GRAPH_EXECUTOR": "ON",
        "USE_PROFILER": "ON",
    }
