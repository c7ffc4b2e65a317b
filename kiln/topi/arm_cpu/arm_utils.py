"""What the Arm CPU computes read off the target (TVM's ``topi.arm_cpu.arm_utils``): its Arm features, and the tile
sizes of the GEMM convolution's transformed weight (:mod:`kiln.topi.nn.conv_gemm`).

kiln has no Arm code generation of its own: an ``-mtriple=aarch64...`` target compiles through LLVM like any other,
and the features are those the target string names (``-mattr=+dotprod,+i8mm``), not the host's.
"""

from ...target.target import Target
from ..nn.conv_gemm import gemm_weights_padding

__all__ = ["is_aarch64", "has_dotprod", "has_matmul_i8", "has_fp16_simd", "get_tiling_B_transformed",
           "get_conv2d_weights_padding"]


def _target(target):
    return target if target is not None else Target.current(allow_none=False)


def is_aarch64(target=None) -> bool:
    """Whether ``target`` (default: the current one) generates AArch64 code."""
    return _target(target).mtriple.startswith(("aarch64", "arm64"))


def _has(target, *features) -> bool:
    mattr = set(_target(target).mattr)
    return is_aarch64(target) and any(f"+{f}" in mattr for f in features)


def has_dotprod(target=None) -> bool:
    """Whether the 8-bit dot-product instructions (``sdot``/``udot``) are enabled."""
    return _has(target, "dotprod", "v8.4a", "v8.5a", "v8.6a", "v9a")


def has_matmul_i8(target=None) -> bool:
    """Whether the 8-bit matrix-multiply instructions (``smmla``/``ummla``) are enabled."""
    return _has(target, "i8mm", "v8.6a")


def has_fp16_simd(target=None) -> bool:
    """Whether half-precision vector arithmetic is enabled."""
    return _has(target, "fullfp16", "v8.2a")


def get_tiling_B_transformed(interleave_A, in_dtype, target=None):  # noqa: N802, N803 (TVM's names)
    """``(tile_N, tile_K)`` of the transformed weight, sized to what one instruction reads: 12 x 8 with ``i8mm``,
    12 (or 16 when the data is not interleaved) x 4 with the dot product, 4 x 16 for plain 8-bit SIMD; float16 with
    half-precision SIMD 32 x 4, other floats 16 x 4 (TVM's choices)."""
    if str(in_dtype) in ("int8", "uint8"):
        if has_matmul_i8(target):
            return 12, 8
        if has_dotprod(target):
            return (12 if interleave_A else 16), 4
        return 4, 16
    if str(in_dtype) == "float16" and has_fp16_simd(target):
        return 32, 4
    return 16, 4


def get_conv2d_weights_padding(N, K, tile_N, tile_K):  # noqa: N803 (TVM's names)
    """``(pad_N, pad_K)`` that make the ``K x N`` weight whole tiles (``K`` four tiles at a time)."""
    return gemm_weights_padding(N, K, tile_N, tile_K)
