"""kiln's main job, end to end, written as TVM's classic deployment script with ``import kiln as tvm``:
import an ONNX model, compile it with ``relay.build`` under ``PassContext(opt_level=3)``, save the library, the
parameters and the graph, load the library back, run it with the graph executor, and check the result against
the reference interpreter (and against ONNX Runtime when it is installed).

    python examples/run_model.py [model.onnx] [--target llvm|c]

Without a model it builds a small CNN (conv-batchnorm-relu-pool blocks, global pooling, a dense layer and softmax)
with ``onnx.helper`` and saves it as ``out/cnn.onnx`` first.
"""

import argparse
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import kiln as tvm
from kiln import relay
from kiln.contrib import graph_executor

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", help="an ONNX model (default: a small CNN built on the fly)")
    parser.add_argument("--target", default="llvm", help="llvm or c (default llvm)")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    path = args.model or str(OUT / "cnn.onnx")
    if args.model is None:
        small_cnn(path)
    onnx_model = onnx.load(path)
    graph_input = onnx_model.graph.input[0]
    shape = [d.dim_value for d in graph_input.type.tensor_type.shape.dim]
    x = np.random.default_rng(1).standard_normal(shape).astype("float32")

    mod, params = relay.frontend.from_onnx(onnx_model, {graph_input.name: shape})
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
    module.set_input(graph_input.name, x)
    module.run()
    out = module.get_output(0).numpy()
    timing = module.benchmark(dev, number=10, repeat=3)
    print(f"== ran the reloaded library: output {out.shape} {out.dtype}, {timing.mean * 1e3:.3f} ms per inference")

    reference = relay.create_executor("debug", mod=mod).evaluate()(x, **params).numpy()
    np.testing.assert_allclose(out, reference, rtol=1e-4, atol=1e-5)
    print("== matches kiln's reference interpreter")
    try:
        import onnxruntime
    except ImportError:
        onnxruntime = None
    if onnxruntime is not None:
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        expected = session.run(None, {graph_input.name: x})[0]
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
        print("== matches ONNX Runtime")
    print(np.array2string(out, precision=4, suppress_small=True))


if __name__ == "__main__":
    main()
