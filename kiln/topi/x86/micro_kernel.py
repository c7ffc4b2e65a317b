"""How big a register tile an x86 schedule may use, from the target's register file (:mod:`kiln.target.cpu`).

Every x86 anchor schedule (blocked and direct convolution, dense/matmul) computes its output in register tiles:
``rows x vectors`` accumulators updated by one fused multiply-add each per reduction step, the operands broadcast
or loaded once per step. Two facts of the CPU bound the tile:

* at least ``fma_units x fma_latency`` independent accumulators keep every FMA pipe busy
  (:func:`latency_accumulators`: 8 on Haswell-to-Sapphire-Rapids class cores);
* accumulators, the step's loaded vectors and a broadcast register must fit the vector registers, with a margin for
  addresses the compiler keeps in vectors (:func:`accumulator_budget`: 24 of AVX-512's 32 registers, 12 of AVX2's 16).
"""

from ...target.target import resolve_target

__all__ = ["accumulator_budget", "latency_accumulators"]


def accumulator_budget(target=None) -> int:
    """The most vector accumulators a register tile of ``target`` may hold (three quarters of the registers)."""
    return resolve_target(target).cpu_info.vector_registers * 3 // 4


def latency_accumulators(target=None) -> int:
    """The independent accumulators that hide the FMA latency on every pipe of ``target``."""
    return resolve_target(target).cpu_info.independent_accumulators()
