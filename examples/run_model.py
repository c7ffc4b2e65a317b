"""kiln's main job, end to end, written as TVM's classic deployment script with ``import kiln as tvm``:
import an ONNX model, compile it with ``relay.build`` under ``PassContext(opt_level=3)``, save the library, the
parameters and the graph, load the library back, run it with the graph executor, and check the result against
the reference interpreter (and against ONNX Runtime when it is installed).

    python examples/run_model.py [model.onnx] [--target llvm|c] [--input-shapes "data:[1,3,224,224]"]

Without a model it builds a small CNN (conv-batchnorm-relu-pool blocks, global pooling, a dense layer and softmax)
with ``onnx.helper`` and saves it as ``out/cnn.onnx`` first.

The inputs fed are the model's graph inputs that are not initializers (older exporters list the weights among the
inputs too), filled with random values. A dimension the model leaves symbolic (a batch size, say) is set to 1 unless
``--input-shapes`` gives the input's shape, and the script says so. Each output is summarized by its shape and its
five largest values. A file that is missing or not an ONNX model is reported in one line.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import kiln as tvm
from kiln import relay
from kiln.cli import parse_input_shapes
from kiln.cli.run import top_values
from kiln.contrib import graph_executor
from kiln.error import KilnError
from kiln.relay.frontend.onnx import load_model, model_inputs

OUT = Path("out")


def small_cnn(path, seed=0):
    """Write a small CNN for 1x3x32x32 images to ``path`` (random weights)."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(value.astype("float32"), name))
        return name

    x, cin = "data", 3
    for i, cout in enumerate((16, 32)):
        w = const(f"conv{i}.weight", rng.standard_normal((cout, cin, 3, 3)) * (2.0 / (9 * cin)) ** 0.5)
        bn = [const(f"bn{i}.{k}", v) for k, v in (("gamma", rng.uniform(0.5, 1.0, cout)),
                                                   ("beta", rng.standard_normal(cout) * 0.1),
                                                   ("mean", rng.standard_normal(cout) * 0.1),
                                                   ("var", rng.uniform(0.5, 1.5, cout)))]
        nodes += [helper.make_node("Conv", [x, w], [f"c{i}"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  helper.make_node("BatchNormalization", [f"c{i}", *bn], [f"b{i}"]),
                  helper.make_node("Relu", [f"b{i}"], [f"r{i}"]),
                  helper.make_node("MaxPool", [f"r{i}"], [f"p{i}"], kernel_shape=[2, 2], strides=[2, 2])]
        x, cin = f"p{i}", cout
    fc_w = const("fc.weight", rng.standard_normal((10, cin)) * 0.1)
    fc_b = const("fc.bias", rng.standard_normal(10) * 0.1)
    nodes += [helper.make_node("GlobalAveragePool", [x], ["gap"]),
              helper.make_node("Flatten", ["gap"], ["flat"]),
              helper.make_node("Gemm", ["flat", fc_w, fc_b], ["logits"], transB=1),
              helper.make_node("Softmax", ["logits"], ["prob"], axis=1)]
    graph = helper.make_graph(nodes, "small_cnn",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # readable by older ONNX Runtime releases too
    onnx.save(model, path)


def random_inputs(inputs, seed=1):
    """A random array for each model input (see ``model_inputs``), by name."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for item in inputs:
        if np.dtype(item.dtype).kind == "f":
            feeds[item.name] = rng.standard_normal(item.shape).astype(item.dtype)
        else:  # integer or boolean inputs (indices, masks): 0 and 1 are valid for any of them
            feeds[item.name] = rng.integers(0, 2, item.shape).astype(item.dtype)
    return feeds


def summary(name, value, count=5) -> str:
    """The output's dtype and shape and its ``count`` largest values (of the first batch item) with their indices."""
    text = f"{name}: {value.dtype} {value.shape}"
    if value.size == 0 or value.dtype.kind not in "biuf":
        return text
    best = top_values(value, count)
    where = " of the first batch item" if value.ndim > 1 else ""
    return f"{text}; top {len(best)}{where} (index: value): " + ", ".join(f"{i}: {v:.4g}" for i, v in best)


def compare(what, got, want):
    """Stop with one line when ``got`` differs from ``want`` (lists of arrays)."""
    if len(got) != len(want):
        sys.exit(f"run_model.py: error: {len(got)} outputs, {what} has {len(want)}")
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if g.shape != w.shape or not np.allclose(g, w, rtol=1e-4, atol=1e-5):
            diff = float(np.abs(g - w).max()) if g.shape == w.shape else f"shape {g.shape} vs {w.shape}"
            sys.exit(f"run_model.py: error: output {k} differs from {what} (max difference {diff})")
    print(f"== matches {what}")


def compare_with_onnxruntime(path, feeds, outputs):
    try:
        import onnxruntime
    except ImportError:
        print("== ONNX Runtime comparison skipped: onnxruntime is not installed (pip install onnxruntime)")
        return
    try:
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        expected = session.run(None, feeds)
    except Exception as exc:  # noqa: BLE001  (an ONNX Runtime limitation is not a kiln failure)
        print(f"== ONNX Runtime comparison skipped: it could not run the model ({' '.join(str(exc).split())[:200]})")
        return
    compare("ONNX Runtime", outputs, expected)


def run(args):
    OUT.mkdir(exist_ok=True)
    path = args.model or str(OUT / "cnn.onnx")
    if args.model is None:
        small_cnn(path)
    onnx_model = load_model(path)
    inputs = model_inputs(onnx_model, parse_input_shapes(args.input_shapes) if args.input_shapes else None)
    for item in inputs:
        for axis, symbol in item.chosen:
            print(f"== input {item.name}: symbolic dimension {symbol!r} (axis {axis}) set to 1; choose it with "
                  f"--input-shapes \"{item.name}:[...]\"")
    feeds = random_inputs(inputs)
    print("== inputs: " + ", ".join(f"{i.name} {i.dtype} {i.shape}" for i in inputs))

    mod, params = relay.frontend.from_onnx(onnx_model, {i.name: i.shape for i in inputs})
    start = time.perf_counter()
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=args.target, params=params)
    print(f"== relay.build for {args.target}: {time.perf_counter() - start:.1f} s")

    lib.export_library(str(OUT / "model.so"))
    (OUT / "model.params").write_bytes(relay.save_param_dict(lib.get_params()))
    (OUT / "model.json").write_text(lib.get_graph_json())
    print(f"== saved {OUT / 'model.so'}, {OUT / 'model.params'}, {OUT / 'model.json'}")

    dev = tvm.device("llvm", 0)
    module = graph_executor.GraphModule(tvm.runtime.load_module(str(OUT / "model.so"))["default"](dev))
    module.set_input(**feeds)
    module.run()
    outputs = [module.get_output(k).numpy() for k in range(module.get_num_outputs())]
    timing = module.benchmark(dev, number=10, repeat=3)
    print(f"== ran the reloaded library: {timing.mean * 1e3:.3f} ms per inference")

    reference = relay.create_executor("debug", mod=mod).evaluate()(**feeds, **params)
    compare("kiln's reference interpreter", outputs,
            [r.numpy() for r in (reference if isinstance(reference, tuple) else (reference,))])
    compare_with_onnxruntime(path, feeds, outputs)
    names = [o.name for o in onnx_model.graph.output]
    for name, value in zip(names, outputs, strict=True):
        print(summary(name, value))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", help="an ONNX model (default: a small CNN built on the fly)")
    parser.add_argument("--target", default="llvm", help="llvm or c (default llvm)")
    parser.add_argument("--input-shapes", metavar='"NAME:[D1,D2,...] ..."',
                        help='static shapes of inputs, e.g. "data:[1,3,224,224]" (symbolic dimensions default to 1)')
    try:
        run(parser.parse_args())
    except KilnError as exc:  # bad input (a missing or corrupt file, an unknown input name...): one line
        sys.exit(f"run_model.py: error: {' '.join(str(exc).split())}")


if __name__ == "__main__":
    main()
