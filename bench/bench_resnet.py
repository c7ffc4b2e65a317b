"""ResNet-50 (batch 1, 224 x 224, float32) compiled by kiln against onnxruntime on the same ONNX model.

The network is built with ``onnx.helper`` (torchvision's ResNet-50 v1: 7x7 stem, max pool, bottleneck stages of 3, 4,
6 and 3 blocks, global average pool, fully connected layer; random weights, batch norms with random statistics),
imported with ``relay.frontend.from_onnx`` and built by ``relay.build`` under ``PassContext(opt_level=3)`` for the
target given, then run by the graph executor. onnxruntime runs the same model with its default CPU provider and
``--threads`` intra-op threads (the default 0 lets it choose). Rounds alternate between the two so both see the same
machine load; each figure is the best round's milliseconds per inference. The outputs are compared first.

With ``--per-layer`` each kernel is then timed alone (random arguments of the graph's shapes, best of 20 calls) and
listed slowest first, with its GFLOP/s when it is a convolution or a matrix product.

Run: ``python bench/bench_resnet.py [--target llvm] [--rounds 5] [--number 3] [--image 224] [--threads 0]
[--settle 0.2] [--per-layer]``; ``--save-onnx resnet50.onnx`` only writes the model, for ``kiln compile``.
"""

import argparse
import time

import numpy as np
from _common import best_ms, per_kernel, relative_error
from model_zoo import OnnxBuilder

import kiln
from kiln import relay
from kiln.contrib import graph_executor


def resnet50_onnx(image=224, num_classes=1000):
    """torchvision's ResNet-50 as an ONNX model with random weights (see the module docstring)."""
    b = OnnxBuilder()
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
    logits = b.classifier(x, cin, num_classes)
    return b.model("resnet50", [("data", "float32", (1, 3, image, image))], [(logits, (1, num_classes))], opset=13)


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
    error = relative_error([got], [want])
    print(f"ResNet-50, batch 1, {args.image}x{args.image}, target {args.target}: import {imported:.1f} s, "
          f"relay.build {built:.1f} s, {len(lib.get_lib().list_functions())} kernels; "
          f"max relative difference to onnxruntime {error:.2e}")
    kiln_ms, ort_ms = [], []
    for _ in range(args.rounds):
        kiln_ms.append(best_ms(m.run, args.number, args.settle))
        ort_ms.append(best_ms(lambda: session.run(None, feeds), args.number, args.settle))
    k, o = min(kiln_ms), min(ort_ms)
    print(f"kiln        {k:8.2f} ms per inference (median of rounds {sorted(kiln_ms)[len(kiln_ms) // 2]:.2f})")
    print(f"onnxruntime {o:8.2f} ms per inference (median of rounds {sorted(ort_ms)[len(ort_ms) // 2]:.2f})")
    print(f"kiln / onnxruntime = {k / o:.2f}x the time")
    if args.per_layer:
        per_kernel(lib)


if __name__ == "__main__":
    main()
