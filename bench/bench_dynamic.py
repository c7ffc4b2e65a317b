"""ResNet-50 with a dynamic batch (``relay.Any``), compiled once for the VM, against the static builds of the same
model (graph executor and VM, batch 1) and onnxruntime, all at batch 1.

The model is :func:`bench_resnet.resnet50_onnx` with its batch made symbolic (``"batch"``), so ``from_onnx`` imports
it as ``Tensor[(?, 3, 224, 224)]`` and ``relay.vm.compile`` builds kernels over a symbolic batch; the static build
imports the same model with ``shape={"data": (1, 3, 224, 224)}`` (the static VM build separates what the VM adds
from what dynamic shapes add: shape functions and allocation at run time, kernels over a symbolic batch). Rounds
alternate between the three so all see the
same machine load; each figure is the best round's milliseconds per inference. The dynamic executable is also run at
batch 3 once, against onnxruntime, to show one build serves every batch.

Run: ``python bench/bench_dynamic.py [--rounds 5] [--number 3] [--image 224] [--settle 0.2]``
"""

import argparse
import time

import numpy as np
from _common import best_ms, relative_error
from bench_resnet import resnet50_onnx

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.runtime.vm import VirtualMachine


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--number", type=int, default=3, help="inferences per timed round")
    parser.add_argument("--image", type=int, default=224)
    parser.add_argument("--settle", type=float, default=0.2, help="idle seconds before each timed round")
    args = parser.parse_args()
    import onnxruntime as ort

    model = resnet50_onnx(args.image)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    model.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    x = np.random.default_rng(1).standard_normal((1, 3, args.image, args.image)).astype("float32")

    start = time.perf_counter()
    mod, params = relay.frontend.from_onnx(model)
    with kiln.transform.PassContext(opt_level=3):
        vm = VirtualMachine(relay.vm.compile(mod, target="llvm", params=params), kiln.cpu(0))
    dynamic_build = time.perf_counter() - start
    start = time.perf_counter()
    mod, params = relay.frontend.from_onnx(model, {"data": x.shape})
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    static_build = time.perf_counter() - start
    with kiln.transform.PassContext(opt_level=3):
        static_vm = VirtualMachine(relay.vm.compile(mod, target="llvm", params=params), kiln.cpu(0))
    static = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    static.set_input("data", x)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])

    static.run()
    want = session.run(None, {"data": x})[0]
    x3 = np.random.default_rng(2).standard_normal((3, 3, args.image, args.image)).astype("float32")
    print(f"ResNet-50, {args.image}x{args.image}: dynamic-batch VM build {dynamic_build:.1f} s, static build "
          f"{static_build:.1f} s; max relative difference to onnxruntime: dynamic at batch 1 "
          f"{relative_error([vm.invoke('main', x).numpy()], [want]):.2e}, at batch 3 "
          f"{relative_error([vm.invoke('main', x3).numpy()], [session.run(None, {'data': x3})[0]]):.2e}, "
          f"static {relative_error([static.get_output(0).numpy()], [want]):.2e}")
    runs = {"dynamic (VM)": lambda: vm.invoke("main", x), "static (VM)": lambda: static_vm.invoke("main", x),
            "static (graph)": static.run, "onnxruntime": lambda: session.run(None, {"data": x})}
    times: dict = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            times[name].append(best_ms(run, args.number, args.settle))
    best = {name: min(ms) for name, ms in times.items()}
    for name, ms in best.items():
        print(f"{name:15s} {ms:8.2f} ms per inference at batch 1")
    print(f"dynamic / static = {best['dynamic (VM)'] / best['static (graph)']:.2f}x the time (dynamic VM / static "
          f"VM {best['dynamic (VM)'] / best['static (VM)']:.2f}x); "
          f"dynamic / onnxruntime = {best['dynamic (VM)'] / best['onnxruntime']:.2f}x")


if __name__ == "__main__":
    main()
