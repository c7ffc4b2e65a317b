"""A dense layer with a long element-wise tail against the bare dense layer, both in kiln and in ONNX Runtime.

A transformer's feed-forward layer as exporters write it with fake quantization after it: ``MatMul`` then ten
element-wise operators (bias ``Add``; GELU as ``Div``, ``Erf``, ``Add``, ``Mul``, ``Mul``; quantize-dequantize as
``Div``, ``Round``, ``Clip``, ``Mul``). kiln fuses the tail into the dense kernel, where it must run on each finished
output tile as an epilogue rather than demote the GEMM to a plain loop nest; the goal is the tailed layer within 1.3x
of the bare one. Each model is built once; rounds alternate between the runtimes and between the two models, and the
best round of each is reported with the median of the per-round ratios. (The outputs agree with ONNX Runtime's
except where a value lies on a rounding boundary of the quantizer: there the two sum orders may differ by one step.)

Run: ``python bench/bench_epilogue.py [--rows 128] [--width 768] [--units 3072] [--rounds 7] [--threads 0]``
"""

import argparse
import statistics

import numpy as np
from _common import best_ms, relative_error
from model_zoo import OnnxBuilder

import kiln
from kiln import relay
from kiln.contrib import graph_executor


def dense_model(rows, width, units, tail):
    """``x (rows, width) @ W (width, units)``, followed by the ten-operator tail when ``tail``."""
    b = OnnxBuilder(seed=0)
    y = b.node("MatMul", ["x", b.weight("w", (width, units), width ** -0.5)])
    if tail:
        y = b.node("Add", [y, b.weight("bias", (units,), 0.02)])
        y = b.activation(y, "gelu")
        scale = b.scalar(0.05)
        q = b.node("Clip", [b.node("Round", [b.node("Div", [y, scale])]), b.scalar(-128.0), b.scalar(127.0)])
        y = b.node("Mul", [q, scale])
    return b.model("dense_tail" if tail else "dense", [("x", "float32", (rows, width))], [(y, (rows, units))])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=128)
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--units", type=int, default=3072)
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=10, help="calls per timed round")
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0: its default)")
    args = parser.parse_args()
    import onnxruntime as ort

    x = np.random.default_rng(1).standard_normal((args.rows, args.width)).astype("float32")
    runs = {}
    for tail in (False, True):
        model = dense_model(args.rows, args.width, args.units, tail)
        mod, params = relay.frontend.from_onnx(model, {"x": x.shape})
        with kiln.transform.PassContext(opt_level=3):
            lib = relay.build(mod, target=args.target, params=params)
        m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
        m.set_input("x", x)
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        m.run()
        error = relative_error([m.get_output(0).numpy()], session.run(None, {"x": x}))
        kernels = sorted(f for f in lib.get_lib().list_functions() if f.startswith("tvmgen"))
        print(f"{'tailed' if tail else 'bare  '} dense {args.rows}x{args.width}x{args.units}: kernels {kernels}, "
              f"max relative difference to onnxruntime {error:.1e}")
        runs[tail] = (m.run, lambda s=session: s.run(None, {"x": x}))

    times = {(tail, who): [] for tail in (False, True) for who in ("kiln", "ort")}
    for r in range(args.rounds):
        order = [(tail, who) for tail in (False, True) for who in ("kiln", "ort")]
        for tail, who in order if r % 2 == 0 else order[::-1]:
            fn = runs[tail][0 if who == "kiln" else 1]
            times[tail, who].append(best_ms(fn, args.number, 0.05))
    flop = 2.0 * args.rows * args.width * args.units
    for tail in (False, True):
        k, o = min(times[tail, "kiln"]), min(times[tail, "ort"])
        print(f"{'tailed' if tail else 'bare'} dense: kiln {k:.3f} ms ({flop / k / 1e6:.0f} GFLOP/s), "
              f"onnxruntime {o:.3f} ms; kiln / onnxruntime {k / o:.2f}")
    ratio = statistics.median(t / b for t, b in zip(times[True, "kiln"], times[False, "kiln"], strict=True))
    ort_ratio = statistics.median(t / b for t, b in zip(times[True, "ort"], times[False, "ort"], strict=True))
    print(f"tailed / bare: kiln {ratio:.2f}x (goal <= 1.3), onnxruntime {ort_ratio:.2f}x")


if __name__ == "__main__":
    main()
