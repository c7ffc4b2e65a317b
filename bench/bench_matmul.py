"""A scheduled 1024 x 1024 x 1024 float32 matmul compiled by both backends (C and LLVM), against numpy's sgemm
measured in the same run (goal: at least 50% of numpy's GFLOP/s on each target).

The schedule is TVM's "How to optimize GEMM on CPU" (``kiln.te.examples.matmul_schedule``): B repacked into
``packedB[N/bn, K, bn]`` (part of every call), C tiled into ``mr x bn`` blocks accumulated in registers (a ``local``
cache_write with the ``k`` loop outermost, rows unrolled, columns vectorized), row blocks in parallel. The timings of
numpy and kiln alternate round by round so that both see the same machine load; each figure is the best round.

Run: ``python bench/bench_matmul.py [--size 1024] [--bn 16] [--mr 4] [--rounds 7] [--targets c,llvm] [--settle 0.3]``
"""

import argparse
import time

import numpy as np

import kiln
from kiln.te.examples import matmul_schedule


def best_time(fn, number, settle):
    """Seconds per call of ``number`` consecutive calls, timed as one block after one untimed call.

    ``settle`` seconds pass first: the threads of the previous contender (OpenBLAS's or OpenMP's) keep spinning for a
    while after their last job and would otherwise compete with this one for the cores.
    """
    time.sleep(settle)
    fn()
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--bn", type=int, default=16, help="columns of a tile (vectorized)")
    parser.add_argument("--mr", type=int, default=4, help="rows of a tile (unrolled)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=5, help="calls per timed block")
    parser.add_argument("--targets", default="c,llvm")
    parser.add_argument("--settle", type=float, default=0.3, help="seconds of idle time before each timed block")
    args = parser.parse_args()
    n = args.size
    flops = 2.0 * n * n * n

    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((n, n)).astype("float32")
    b_np = rng.standard_normal((n, n)).astype("float32")
    a, b = kiln.nd.array(a_np), kiln.nd.array(b_np)
    reference = a_np @ b_np

    functions = {}
    for target in args.targets.split(","):
        s, tensors = matmul_schedule(n, n, n, bn=args.bn, mr=args.mr)
        start = time.perf_counter()
        module = kiln.build(s, tensors, target=target, name="matmul")
        built = time.perf_counter() - start
        c = kiln.nd.empty((n, n), "float32")
        func = module["matmul"]
        func(a, b, c)
        np.testing.assert_allclose(c.numpy(), reference, rtol=1e-3, atol=1e-3)
        functions[target] = (func, c)
        print(f"built {target:4s} in {built:.2f} s (cached after the first run); result matches numpy")

    times = {"numpy": []} | {t: [] for t in functions}
    for _ in range(args.rounds):
        times["numpy"].append(best_time(lambda: a_np @ b_np, args.number, args.settle))
        for target, (func, c) in functions.items():
            times[target].append(best_time(lambda func=func, c=c: func(a, b, c), args.number, args.settle))

    numpy_gflops = flops / min(times["numpy"]) / 1e9
    print(f"\n{n}x{n}x{n} float32 matmul, schedule bn={args.bn} mr={args.mr}, best of {args.rounds} rounds "
          f"of {args.number} calls")
    print(f"  numpy (sgemm)  {numpy_gflops:8.1f} GFLOP/s  {min(times['numpy']) * 1e3:8.2f} ms")
    for target in functions:
        gflops = flops / min(times[target]) / 1e9
        print(f"  kiln {target:9s} {gflops:8.1f} GFLOP/s  {min(times[target]) * 1e3:8.2f} ms  "
              f"ratio to numpy {gflops / numpy_gflops:.2f}")


if __name__ == "__main__":
    main()
