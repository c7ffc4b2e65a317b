"""How big a register tile an x86 schedule may use, from the target's register file (:mod:`kiln.target.cpu`).

Every x86 anchor schedule (blocked and direct convolution, dense/matmul) computes its output in register tiles:
``rows x vectors`` accumulators updated by one fused multiply-add each per reduction step, the operands broadcast
or loaded once per step. Two facts of the CPU bound the tile:

* at least ``fma_units x fma_latency`` independent accumulators keep every FMA pipe busy
  (:func:`latency_accumulators`: 8 on Haswell-to-Sapphire-Rapids class cores);
* accumulators, the step's loaded vectors and a broadcast register must fit the vector registers, with a margin for
  addresses the compiler keeps in vectors (:func:`accumulator_budget`: 24 of AVX-512's 32 registers, 12 of AVX2's 16).

The channel block of the blocked layouts is one vector or a whole part of one (:func:`channel_block`); a blocked
convolution's tile spans :func:`register_tile` output columns, partial tiles included where no divisor of the width
fits (:func:`tile_columns`); a 1x1 convolution's spans several channel blocks (:func:`pointwise_tile`).
"""

from ...target.target import resolve_target
from ..utils import largest_divisor

__all__ = ["accumulator_budget", "latency_accumulators", "channel_block", "register_tile", "pointwise_tile",
           "tile_columns", "MIN_TILE_ACCUMULATORS", "MAX_PARTIAL_WASTE", "POINTWISE_BLOCKS"]


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


#: A register tile has at least this many accumulators, whatever the FMA latency needs: each step's weight vector is
#: loaded once for all the tile's columns. On Zen 4 (one 512-bit FMA per cycle, so 4 would hide the latency), 8
#: columns run VGG- and ResNet-sized 3x3 convolutions 15-20% faster than 4.
MIN_TILE_ACCUMULATORS = 8


def register_tile(out_width, oc_bn, target=None, dtype="float32", kernel_width=1, partial=False) -> int:
    """Output columns of a register tile of ``oc_bn`` channels of ``dtype`` on ``target``: the largest divisor of
    ``out_width`` giving the accumulators that hide the FMA latency (8 columns of one vector on two 4-cycle FMA
    pipes), and at least :data:`MIN_TILE_ACCUMULATORS`; when that falls short (7 of 14 or 28 columns), the largest
    divisor within the register budget if larger (up to 16 columns with AVX-512's 32 registers: 14 accumulators and
    the weights fit; AVX2's 16 registers keep 7). Measured on ResNet-50's blocked layers with AVX-512: the 14x14 3x3
    convolution runs ~20% faster with 14 columns than with 7, the others as fast; 8 is as fast as 16 where it
    divides (56, 112 columns), and compiles faster.

    A kernel ``kernel_width`` taps wide runs its taps innermost, each broadcast input serving the taps that read it,
    so a broadcast per column stays live beside the accumulators: the latency rule asks for at most half the
    registers less one (7 with AVX2's 16: 8 columns spilled, and a 56x56 3x3 layer ran at 83 GFLOP/s with 8 columns
    against 140 with 7 on an AVX2 Zen 3; AVX-512's 15 changes nothing). Widths without such a divisor keep the
    budget's (55 columns: 11 rather than 5).

    With ``partial``, such a kernel whose width has no divisor in that range (under the latency rule, or past the
    spill limit) takes the latency rule's tile anyway when whole tiles cover at most :data:`MAX_PARTIAL_WASTE` times
    the width; the last tile runs past the edge (:func:`tile_columns`), its columns there guarded (the split's
    predicate: nothing past the edge is read or written). Measured on an AVX2 Zen 3: 3x3 convolutions 13 wide from
    30-34 to 72-93 GFLOP/s (7 columns, against 1 column of 12 channel blocks), 55 wide from 65 to 96 (7 against 11
    spilled columns)."""
    target = resolve_target(target)
    regs = max(1, oc_bn // target.vector_lanes(dtype))  # vector registers per column of the tile
    enough = max(latency_accumulators(target), MIN_TILE_ACCUMULATORS)
    spill_limit = target.cpu_info.vector_registers // 2 - 1
    if kernel_width > 1:
        enough = min(enough, spill_limit)
    enough = max(1, enough // regs)
    tile = largest_divisor(out_width, enough)
    if tile < enough:
        tile = max(tile, largest_divisor(out_width, max(1, min(16, accumulator_budget(target)) // regs)))
    if (partial and kernel_width > 1 and out_width > enough and (tile < enough or tile * regs > spill_limit)
            and tile_columns(out_width, enough) <= out_width * MAX_PARTIAL_WASTE):
        return enough
    return tile


#: A 1x1 convolution's register tile spans at most this many channel blocks (:func:`pointwise_tile`).
POINTWISE_BLOCKS = 4


def pointwise_tile(out_width, oc_chunks, oc_bn, target=None, dtype="float32"):
    """``(columns, channel blocks)`` of the register tile of a 1x1 convolution with ``oc_chunks`` output blocks of
    ``oc_bn`` channels (one vector each), or None where the rule does not apply (then :func:`register_tile`'s
    columns of one block).

    A 1x1 kernel's reduction step multiplies one weight vector per channel block by one broadcast input per
    column: a tile of ``c`` columns x ``b`` blocks loads ``c + b`` vectors for ``c * b`` multiply-adds. One block of
    8 columns loads 9 for 8, which keeps the load ports as busy as the FMA pipes; the tile here takes the most
    blocks up to :data:`POINTWISE_BLOCKS` dividing ``oc_chunks`` (at least 2) and the columns that give it the
    accumulators hiding the FMA latency (2 x 4: 6 loads for 8). Its columns tile the width, partial tiles included
    within :data:`MAX_PARTIAL_WASTE` (7 columns: 4 tiles of 2). Measured on an AVX2 Zen 3, one thread, kernels
    alone: ResNet-50's 256->64 and 64->256 1x1 layers at 56x56 from 70 and 81 to 91 and 93 GFLOP/s."""
    target = resolve_target(target)
    if oc_bn != target.vector_lanes(dtype):
        return None
    blocks = largest_divisor(oc_chunks, POINTWISE_BLOCKS)
    enough = max(latency_accumulators(target), MIN_TILE_ACCUMULATORS)
    columns = -(-enough // blocks)
    if blocks < 2 or columns * blocks > accumulator_budget(target) or out_width < columns:
        return None
    if out_width % columns and tile_columns(out_width, columns) > out_width * MAX_PARTIAL_WASTE:
        return None
    return columns, blocks


MAX_PARTIAL_WASTE = 1.15
"""How much wider than the output a row of partial register tiles may be (13 columns in two tiles of 7: 1.08)."""


def tile_columns(out_width, reg_n) -> int:
    """The columns whole register tiles of ``reg_n`` compute for an output ``out_width`` wide."""
    return -(-out_width // reg_n) * reg_n
