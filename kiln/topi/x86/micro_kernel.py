"""How big a register tile an x86 schedule may use, from the target's register file (:mod:`kiln.target.cpu`).

Every x86 anchor schedule (blocked and direct convolution, dense/matmul) computes its output in register tiles:
``rows x vectors`` accumulators updated by one fused multiply-add each per reduction step, the operands broadcast
or loaded once per step. Two facts of the CPU bound the tile:

* at least ``fma_units x fma_latency`` independent accumulators keep every FMA pipe busy
  (:func:`latency_accumulators`: 8 on Haswell-to-Sapphire-Rapids class cores);
* accumulators, the step's loaded vectors and a broadcast register must fit the vector registers, with a margin for
  addresses the compiler keeps in vectors (:func:`accumulator_budget`: 24 of AVX-512's 32 registers, 12 of AVX2's 16).

The channel block of the blocked layouts is one vector or a whole part of one (:func:`channel_block`).
"""

from ...target.target import resolve_target

__all__ = ["accumulator_budget", "latency_accumulators", "channel_block"]


def accumulator_budget(target=None) -> int:
    """The most vector accumulators a register tile of ``target`` may hold (three quarters of the registers)."""
    return resolve_target(target).cpu_info.vector_registers * 3 // 4


def latency_accumulators(target=None) -> int:
    """The independent accumulators that hide the FMA latency on every pipe of ``target``."""
    return resolve_target(target).cpu_info.independent_accumulators()


def channel_block(channels, target=None, dtype="float32") -> int:
    """The channels of one block of the blocked layouts (NCHW[b]c) for a tensor of ``channels`` channels: at most a
    vector of ``dtype``; the largest power of two dividing ``channels`` when it is at least half the largest
    divisor (1000 channels: blocks of 8, whole vectors, rather than 10, which splits into a vector and a remainder),
    else that divisor (100 channels: 10 rather than 4). Every convolution uses this rule for its input and output
    channels, so a chain of them exchanges tensors in one layout."""
    lanes = resolve_target(target).vector_lanes(dtype)
    divisor = max(d for d in range(1, min(channels, lanes) + 1) if channels % d == 0)
    power = 1
    while power * 2 <= lanes and channels % (power * 2) == 0:
        power *= 2
    return power if 2 * power >= divisor else divisor
