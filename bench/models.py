"""The model mix: kiln against ONNX Runtime on the same ONNX models, in one run, interleaved.

Group ``light``: the nine CNNs the onnx wheel ships for its backend tests (``onnx/backend/test/data/light``: AlexNet,
DenseNet-121, Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512; batch 1, float32, the weights
they carry). Each model is imported with ``relay.frontend.from_onnx``, built by ``relay.build`` at opt_level 3 for
``--target`` and run by the graph executor; ONNX Runtime runs the same bytes with its CPU provider and ``--threads``
intra-op threads. Outputs are compared first (max difference relative to the largest magnitude). Rounds alternate
between the two runtimes so both see the same machine load; each figure is the best round's milliseconds.

Printed per model: kiln ms, ORT ms, their ratio (below 1: kiln is faster), GFLOP/s of kiln's run (convolutions and
matrix products), the cold-cache compile seconds (the build's own time; cached objects make later builds faster), and
the geometric mean of the ratios per group.

``--contention`` starts a separate process that keeps one core busy while both runtimes are timed.

Run: ``python bench/models.py [--target llvm] [--models resnet50,vgg19] [--rounds 5] [--threads 2] [--contention]``
"""

import argparse
import math
import multiprocessing
import pathlib
import time

import numpy as np
import onnx

import kiln
from kiln import relay
from kiln.contrib import graph_executor

LIGHT = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet", "squeezenet",
         "vgg19", "zfnet512")


def light_model(name):
    """One of the onnx wheel's light models as a ModelProto."""
    path = pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"light_{name}.onnx"
    return onnx.load(str(path))


def model_inputs(model, rng):
    """Random float32 arrays for every graph input that is not an initializer."""
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in inp.type.tensor_type.shape.dim]
        feeds[inp.name] = rng.standard_normal(dims).astype("float32")
    return feeds


def model_flops(mod):
    """Multiply-add flops (2 per MAC) of the convolutions and matrix products of a typed Relay module."""
    total = 0.0

    def visit(expr):
        nonlocal total
        if not isinstance(expr, relay.Call) or not hasattr(expr.op, "name"):
            return
        name = expr.op.name
        if name in ("nn.conv2d", "nn.dense", "nn.matmul", "nn.batch_matmul"):
            out = expr.checked_type.shape
            weight = expr.args[1].checked_type.shape
            if name == "nn.conv2d":
                total += 2.0 * math.prod(int(d) for d in weight) * int(out[2]) * int(out[3]) * int(out[0])
            else:
                k = int(expr.args[0].checked_type.shape[-1])
                total += 2.0 * math.prod(int(d) for d in out) * k

    relay.analysis.post_order_visit(mod["main"], visit)
    return total


def best_ms(fn, number, settle):
    """Milliseconds per call of ``number`` consecutive calls of ``fn``, after ``settle`` idle seconds and one untimed
    call (so the other runtime's worker threads have gone to sleep)."""
    time.sleep(settle)
    fn()
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number * 1e3


def _spin(stop):
    while not stop.is_set():
        sum(range(10000))


def run_model(name, model, args, ort):
    """Compile and time one model; returns (kiln ms, ort ms, GFLOP/s, compile s, relative error)."""
    rng = np.random.default_rng(0)
    feeds = model_inputs(model, rng)
    start = time.perf_counter()
    mod, params = relay.frontend.from_onnx(model, {k: v.shape for k, v in feeds.items()})
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=args.target, params=params)
    compile_s = time.perf_counter() - start
    flops = model_flops(relay.transform.InferType()(mod))
    m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    for k, v in feeds.items():
        m.set_input(k, v)
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    m.run()
    got = m.get_output(0).numpy()
    want = session.run(None, feeds)[0]
    error = float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30))
    kiln_ms, ort_ms = [], []
    for _ in range(args.rounds):
        kiln_ms.append(best_ms(m.run, args.number, args.settle))
        ort_ms.append(best_ms(lambda: session.run(None, feeds), args.number, args.settle))
    k, o = min(kiln_ms), min(ort_ms)
    return k, o, flops / (k * 1e-3) / 1e9, compile_s, error


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--models", default=",".join(LIGHT), help="comma-separated names from the light group")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--number", type=int, default=3, help="inferences per timed round")
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0: its default)")
    parser.add_argument("--settle", type=float, default=0.2, help="idle seconds before each timed round")
    parser.add_argument("--contention", action="store_true", help="keep one core busy with another process")
    args = parser.parse_args()
    import onnxruntime as ort

    target = kiln.target.Target(args.target)
    print(f"target {target}: {target.cpu_info!r}; host {kiln.target.cpu.host_cpu()!r}")
    stop = multiprocessing.Event()
    busy = multiprocessing.Process(target=_spin, args=(stop,), daemon=True) if args.contention else None
    if busy is not None:
        busy.start()
    print(f"{'model':14s} {'kiln ms':>9s} {'ORT ms':>9s} {'ratio':>6s} {'GFLOP/s':>8s} {'build s':>8s} {'rel.err':>8s}")
    ratios = []
    try:
        for name in args.models.split(","):
            k, o, rate, compile_s, error = run_model(name, light_model(name), args, ort)
            ratios.append(k / o)
            print(f"{name:14s} {k:9.2f} {o:9.2f} {k / o:6.2f} {rate:8.1f} {compile_s:8.1f} {error:8.1e}", flush=True)
    finally:
        if busy is not None:
            stop.set()
            busy.join()
    print(f"geometric mean kiln/ORT: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}")


if __name__ == "__main__":
    main()
