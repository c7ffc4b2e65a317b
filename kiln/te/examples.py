"""Ready-made scheduled computations: what tests, benchmarks and code generators use as realistic inputs.

:func:`matmul_schedule` is the matrix multiply of TVM's tutorial "How to optimize GEMM on CPU", arranged so that a
code generator can reach the speed of a BLAS library:

* ``B`` is first repacked by a compute stage into ``packedB[N / bn, K, bn]``, so the inner loop reads ``bn``
  consecutive floats of one row (the vector load) and walks memory linearly along ``k``;
* ``C`` is tiled into ``mr x bn`` blocks; each block accumulates in a small ``local`` buffer (``cache_write``)
  computed inside the tile (``compute_at``), looping ``k`` outermost, then the ``mr`` rows (unrolled), then ``bn``
  columns (vectorized). After unrolling, every access to the accumulator has a constant offset, so the whole
  ``mr x bn`` block lives in vector registers for the entire ``k`` loop (LLVM's SROA / the C compiler promote it);
  each ``k`` step is ``mr`` broadcasts of ``A``, ``bn / lanes`` vector loads of ``packedB`` and ``mr * bn / lanes``
  fused multiply-adds;
* the outer loop over row blocks runs in parallel, and so does the packing.

The default ``mr=4, bn=16`` keeps 8 AVX2 accumulators (16 ymm registers: 8 accumulators, 2 B vectors, 1 broadcast).
"""

from ..tir.intrin import sum as _sum
from .operation import compute, placeholder, reduce_axis
from .schedule import create_schedule

__all__ = ["matmul", "matmul_schedule"]


def matmul(M, N, K, dtype="float32", bn=None):
    """The tensors of ``C = A @ B`` (``A: [M, K]``, ``B: [K, N]``); with ``bn``, through ``packedB[N // bn, K, bn]``.

    Returns
    -------
    A, B, C : Tensor
        (and ``packedB`` as a fourth value when ``bn`` is given).
    """
    A = placeholder((M, K), dtype, name="A")
    B = placeholder((K, N), dtype, name="B")
    k = reduce_axis((0, K), name="k")
    if bn is None:
        C = compute((M, N), lambda i, j: _sum(A[i, k] * B[k, j], axis=k), name="C")
        return A, B, C
    packed = compute((N // bn, K, bn), lambda x, y, z: B[y, x * bn + z], name="packedB")
    C = compute((M, N), lambda i, j: _sum(A[i, k] * packed[j // bn, k, j % bn], axis=k), name="C")
    return A, B, C, packed


def matmul_schedule(M, N, K, bn=16, mr=4, dtype="float32"):
    """A tiled, packed, vectorized and parallel schedule of ``C = A @ B`` (see the module docstring).

    Parameters
    ----------
    M, N, K : int
        The sizes (``N`` must be a multiple of ``bn``; ``M`` should be one of ``mr``, else tails are guarded).
    bn : int
        Columns of a tile: the vectorized extent (a power of two).
    mr : int
        Rows of a tile (unrolled).
    dtype : str
        Element type.

    Returns
    -------
    s : Schedule
    args : list of Tensor
        ``[A, B, C]``, the arguments to lower or build with.

    Examples
    --------
    >>> s, args = matmul_schedule(1024, 1024, 1024)
    >>> mod = kiln.lower(s, args, name="mm")              # doctest: +SKIP
    """
    if N % bn:
        raise ValueError(f"matmul_schedule: N={N} must be a multiple of bn={bn}")
    A, B, C, packed = matmul(M, N, K, dtype, bn)
    s = create_schedule(C.op)
    CC = s.cache_write(C, "local")
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], mr, bn)
    s[CC].compute_at(s[C], no)
    mc, nc = s[CC].op.axis
    (k,) = s[CC].op.reduce_axis
    s[CC].reorder(k, mc, nc)
    s[CC].unroll(mc)
    s[CC].vectorize(nc)
    s[C].unroll(mi)
    s[C].vectorize(ni)
    s[C].parallel(mo)
    x, y, z = s[packed].op.axis
    s[packed].vectorize(z)
    s[packed].parallel(x)
    return s, [A, B, C]
