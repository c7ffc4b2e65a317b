"""CUDA capability queries (TVM's ``tvm.contrib.nvcc``), answered for kiln, which compiles for CPUs only: no CUDA
device is ever a target, so every capability is absent. TVM's tests use these to skip GPU-only cases."""

__all__ = ["have_fp16", "have_int8", "have_tensorcore", "have_bf16"]


def have_fp16(compute_version) -> bool:
    """Whether CUDA float16 arithmetic is available (never, in kiln)."""
    return False


def have_int8(compute_version) -> bool:
    """Whether CUDA int8 dot products are available (never, in kiln)."""
    return False


def have_tensorcore(compute_version=None, target=None) -> bool:
    """Whether tensor cores are available (never, in kiln)."""
    return False


def have_bf16(compute_version) -> bool:
    """Whether CUDA bfloat16 is available (never, in kiln)."""
    return False
