"""The Relay VM against the graph executor on ResNet-50 (batch 1, 224 x 224, float32; a static model).

Both run kernels of the same library design (same passes, same FuseOps, same target), so the difference is what
each runtime adds per kernel: the graph executor calls prepared kernels in a fixed order over storage planned once;
the VM interprets bytecode (an ``AllocTensor``, ``LoadConst`` of the weights and an ``InvokePacked`` per kernel, its
storage planned by MemoryPlan at compile time and taken from the storage pool on every run). The network is
bench_resnet's ONNX model, imported with ``relay.frontend.from_onnx`` and compiled under ``PassContext(opt_level=3)``
by ``relay.build`` and by ``relay.vm.compile``. Rounds alternate between the two (each going first every other round)
so both see the same machine load; the figures are the best round's milliseconds per inference and the median over
rounds of the VM's time over the graph executor's in the same round. On a busy machine, ``--target "llvm
-num-cores=1"`` keeps the kernels' thread pool from amplifying the noise (the comparison is of the runtimes, not of
the kernels). The outputs are compared first, and what the VM adds around the kernels is measured apart by running
it with every kernel's native code replaced by a function that returns at once.

Run: ``python bench/bench_vm.py [--target llvm] [--rounds 9] [--number 2] [--image 224] [--settle 0.2]``
"""

import argparse
import time

import numpy as np
from bench_resnet import best_ms, resnet50_onnx

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.runtime.vm import VirtualMachine


def interpreter_overhead_ms(exe, x, number=20) -> float:
    """Milliseconds per run of the VM with every kernel's native code replaced by a function returning at once: what
    the VM adds around the kernels (the interpreter loop, allocation, argument marshalling), without the kernels."""
    for name in exe.primitive_ops:
        exe.lib.get_function(name)._func._fn = lambda *args: 0  # shared library functions: do this last
    vm = VirtualMachine(exe, kiln.cpu(0))
    vm.set_input("main", x)
    vm.invoke("main")
    start = time.perf_counter()
    for _ in range(number):
        vm.invoke("main")
    return (time.perf_counter() - start) / number * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--number", type=int, default=2, help="inferences per timed round")
    parser.add_argument("--image", type=int, default=224)
    parser.add_argument("--settle", type=float, default=0.2, help="idle seconds before each timed round")
    args = parser.parse_args()

    model = resnet50_onnx(args.image)
    x = np.random.default_rng(1).standard_normal((1, 3, args.image, args.image)).astype("float32")
    mod, params = relay.frontend.from_onnx(model, {"data": x.shape})
    with kiln.transform.PassContext(opt_level=3):
        start = time.perf_counter()
        lib = relay.build(mod, target=args.target, params=params)
        built = time.perf_counter() - start
        start = time.perf_counter()
        exe = relay.vm.compile(mod, target=args.target, params=params)
        compiled = time.perf_counter() - start
    graph = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    graph.set_input("data", x)
    vm = VirtualMachine(exe, kiln.cpu(0))
    vm.set_input("main", x)

    graph.run()
    want = graph.get_output(0).numpy()
    got = vm.invoke("main").numpy()
    error = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
    main_code = exe.function("main").instructions
    counts: dict = {}
    for instr in main_code:
        counts[type(instr).__name__] = counts.get(type(instr).__name__, 0) + 1
    print(f"ResNet-50, batch 1, {args.image}x{args.image}, target {args.target}: relay.build {built:.1f} s, "
          f"relay.vm.compile {compiled:.1f} s; max relative difference VM vs graph executor {error:.2e}")
    print(f"VM @main: {len(main_code)} instructions ({', '.join(f'{n} {k}' for k, n in sorted(counts.items()))}), "
          f"{len(exe.primitive_ops)} kernels")
    graph_ms, vm_ms, ratios = [], [], []
    contenders = [(graph.run, graph_ms), (lambda: vm.invoke("main"), vm_ms)]
    for k in range(args.rounds):
        for run, times in contenders if k % 2 == 0 else contenders[::-1]:  # each goes first every other round
            best_ms(run, args.number, times, args.settle)
        ratios.append(vm_ms[-1] / graph_ms[-1])
    g, v = min(graph_ms), min(vm_ms)
    print(f"graph executor {g:8.2f} ms per inference (median of rounds {sorted(graph_ms)[len(graph_ms) // 2]:.2f})")
    print(f"VM             {v:8.2f} ms per inference (median of rounds {sorted(vm_ms)[len(vm_ms) // 2]:.2f})")
    print(f"VM / graph executor = {v / g:.3f}x the time (best rounds); median of the rounds' ratios "
          f"{sorted(ratios)[len(ratios) // 2]:.3f}x")
    overhead = interpreter_overhead_ms(exe, x)
    print(f"VM without the kernels' work: {overhead:.3f} ms per run ({overhead * 1e3 / len(main_code):.2f} us per "
          f"instruction, {overhead / g * 100:.2f}% of the graph executor's time)")


if __name__ == "__main__":
    main()
