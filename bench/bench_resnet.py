"""ResNet-50 (batch 1, 224 x 224, float32) compiled by kiln against onnxruntime on the same ONNX model.

The network is built with ``onnx.helper`` (torchvision's ResNet-50 v1: 7x7 stem, max pool, bottleneck stages of 3, 4,
6 and 3 blocks, global average pool, fully connected layer; random weights, batch norms with random statistics),
imported with ``relay.frontend.from_onnx`` and built by ``relay.build`` under ``PassContext(opt_level=3)`` for the
target given, then run by the graph executor. onnxruntime runs the same model with its default CPU provider and
``--threads`` intra-op threads (the default 0 lets it choose). Rounds alternate between the two so both see the same
machine load; each figure is the best round's milliseconds per inference. The outputs are compared first.

With ``--per-layer`` each kernel is then timed alone (random arguments of the graph's shapes, best of 20 calls) and
listed slowest first, with its GFLOP/s when it is a convolution.

Run: ``python bench/bench_resnet.py [--target llvm] [--rounds 5] [--number 3] [--image 224] [--threads 0]
[--settle 0.2] [--per-layer]``; ``--save-onnx resnet50.onnx`` only writes the model, for ``kiln compile``.
"""

import argparse
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import kiln
from kiln import relay
from kiln.contrib import graph_executor


class _OnnxBuilder:
    """Accumulates nodes and initializers of an ONNX graph with fresh names."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.count = 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}_{self.count}"

    def weight(self, prefix, shape, scale):
        name = self.name(prefix)
        self.inits.append(numpy_helper.from_array((self.rng.standard_normal(shape) * scale).astype("float32"), name))
        return name

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def conv_bn(self, x, cin, cout, kernel, stride, relu=True):
        w = self.weight("w", (cout, cin, kernel, kernel), (2.0 / (cin * kernel * kernel)) ** 0.5)
        pad = kernel // 2
        y = self.node("Conv", [x, w], kernel_shape=[kernel, kernel], strides=[stride, stride], pads=[pad] * 4)
        gamma = self.name("gamma")
        stats = [self.rng.uniform(0.5, 1.0, cout), self.rng.standard_normal(cout) * 0.1,
                 self.rng.standard_normal(cout) * 0.1, self.rng.uniform(0.5, 1.5, cout)]
        names = [gamma, self.name("beta"), self.name("mean"), self.name("var")]
        self.inits.extend(numpy_helper.from_array(v.astype("float32"), n) for n, v in zip(names, stats, strict=True))
        y = self.node("BatchNormalization", [y, *names], epsilon=1e-5)
        return self.node("Relu", [y]) if relu else y


def resnet50_onnx(image=224, num_classes=1000):
    """torchvision's ResNet-50 as an ONNX model with random weights (see the module docstring)."""
    b = _OnnxBuilder()
    x = b.conv_bn("data", 3, 64, 7, 2)
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, (blocks, width) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512), strict=True)):
        for block in range(blocks):
            stride = 2 if stage > 0 and block == 0 else 1
            y = b.conv_bn(x, cin, width, 1, 1)
            y = b.conv_bn(y, width, width, 3, stride)
            y = b.conv_bn(y, width, width * 4, 1, 1, relu=False)
            shortcut = b.conv_bn(x, cin, width * 4, 1, stride, relu=False) if block == 0 else x
            x = b.node("Relu", [b.node("Add", [y, shortcut])])
            cin = width * 4
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)
    fc_w, fc_b = b.weight("fc_w", (num_classes, cin), cin ** -0.5), b.weight("fc_b", (num_classes,), 0.01)
    logits = b.node("Gemm", [x, fc_w, fc_b], transB=1)
    graph = helper.make_graph(b.nodes, "resnet50", [helper.make_tensor_value_info("data", TensorProto.FLOAT,
                                                                                 [1, 3, image, image])],
                              [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [1, num_classes])], b.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def best_ms(fn, number, rounds_done, settle=0.0):
    """Append the milliseconds per call of ``number`` consecutive calls of ``fn`` to ``rounds_done``, after
    ``settle`` idle seconds (the other contender's worker threads stop spinning and yield the cores) and one untimed
    call."""
    time.sleep(settle)
    fn()
    start = time.perf_counter()
    for _ in range(number):
        fn()
    rounds_done.append((time.perf_counter() - start) / number * 1e3)


def conv_flops(shapes) -> float:
    """Floating-point operations of a convolution kernel from its argument shapes (data, weight, ..., output), for
    NCHW/OIHW and the blocked NCHW[x]c/OIHW[y]i[x]o layouts alike: 2 * weight elements * output pixels."""
    weight, out = shapes[1], shapes[-1]
    oh, ow = (out[2], out[3])
    return 2.0 * float(np.prod(weight)) * oh * ow


def per_layer(lib, graph_json, rounds=20):
    """Time every kernel of the graph on its own (random arguments of the graph's shapes, best of ``rounds`` calls)
    and print them, slowest total first, with GFLOP/s for convolutions; returns the summed best milliseconds."""
    import json

    graph = json.loads(graph_json)
    attrs = graph["attrs"]
    shapes, dtypes, rows = attrs["shape"][1], attrs["dltype"][1], graph["node_row_ptr"]
    rng = np.random.default_rng(0)
    kernels: dict = {}
    for nid, node in enumerate(graph["nodes"]):
        if node["op"] != "tvm_op" or node["attrs"]["func_name"] == "__nop":
            continue
        entries = [rows[src] + k for src, k, *_ in node["inputs"]] + list(range(rows[nid], rows[nid + 1]))
        name = node["attrs"]["func_name"]
        entry = kernels.setdefault(name, {"count": 0, "entries": entries})
        entry["count"] += 1
    lib_mod = lib.get_lib()
    total = 0.0
    report = []
    for name, entry in kernels.items():
        arrays = [kiln.nd.array(rng.standard_normal(shapes[e]).astype(dtypes[e])) for e in entry["entries"]]
        func = lib_mod[name]
        best = float("inf")
        for _ in range(rounds):
            start = time.perf_counter()
            func(*arrays)
            best = min(best, time.perf_counter() - start)
        ms = best * 1e3 * entry["count"]
        total += ms
        arg_shapes = [tuple(shapes[e]) for e in entry["entries"]]
        rate = f"{conv_flops(arg_shapes) * entry['count'] / (ms * 1e-3) / 1e9:7.1f} GFLOP/s" if "conv2d" in name else ""
        report.append((ms, f"{ms:8.3f} ms  x{entry['count']:<2d} {rate:15s} {name.removeprefix('tvmgen_default_')}  "
                           f"{arg_shapes[0]} -> {arg_shapes[-1]}"))
    for _, line in sorted(report, reverse=True):
        print(line)
    print(f"{total:8.3f} ms  kernels in total (each timed alone)")
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--number", type=int, default=3, help="inferences per timed round")
    parser.add_argument("--image", type=int, default=224)
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0: its default)")
    parser.add_argument("--settle", type=float, default=0.2,
                        help="idle seconds before each timed round (lets the other runtime's threads go to sleep)")
    parser.add_argument("--per-layer", action="store_true",
                        help="also time each kernel alone: milliseconds and convolution GFLOP/s per layer")
    parser.add_argument("--save-onnx", metavar="FILE",
                        help="only write the ONNX model to FILE (for kiln compile FILE; kiln run --profile)")
    args = parser.parse_args()
    if args.save_onnx:
        import onnx

        onnx.save(resnet50_onnx(args.image), args.save_onnx)
        print(f"wrote {args.save_onnx}")
        return
    import onnxruntime as ort

    model = resnet50_onnx(args.image)
    x = np.random.default_rng(1).standard_normal((1, 3, args.image, args.image)).astype("float32")

    start = time.perf_counter()
    mod, params = relay.frontend.from_onnx(model, {"data": x.shape})
    imported = time.perf_counter() - start
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=args.target, params=params)
    built = time.perf_counter() - start - imported
    m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    m.set_input("data", x)

    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feeds = {"data": x}

    m.run()
    got = m.get_output(0).numpy()
    want = session.run(None, feeds)[0]
    error = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
    print(f"ResNet-50, batch 1, {args.image}x{args.image}, target {args.target}: import {imported:.1f} s, "
          f"relay.build {built:.1f} s, {len(lib.get_lib().list_functions())} kernels; "
          f"max relative difference to onnxruntime {error:.2e}")
    kiln_ms, ort_ms = [], []
    for _ in range(args.rounds):
        best_ms(m.run, args.number, kiln_ms, args.settle)
        best_ms(lambda: session.run(None, feeds), args.number, ort_ms, args.settle)
    k, o = min(kiln_ms), min(ort_ms)
    print(f"kiln        {k:8.2f} ms per inference (median of rounds {sorted(kiln_ms)[len(kiln_ms) // 2]:.2f})")
    print(f"onnxruntime {o:8.2f} ms per inference (median of rounds {sorted(ort_ms)[len(ort_ms) // 2]:.2f})")
    print(f"kiln / onnxruntime = {k / o:.2f}x the time")
    if args.per_layer:
        per_layer(lib, lib.get_graph_json())


if __name__ == "__main__":
    main()
