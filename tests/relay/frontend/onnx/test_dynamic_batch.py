"""ONNX models exported with a symbolic batch import with a ``relay.Any`` dimension and, compiled once for the VM,
run at every batch size as onnxruntime does (SPEC §9)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln
from kiln import relay
from kiln.runtime.vm import VirtualMachine

ort = pytest.importorskip("onnxruntime")


def _small_cnn(rng):
    weights = {"W": rng.standard_normal((8, 3, 3, 3)).astype("float32"),
               "G": rng.standard_normal((512, 10)).astype("float32"),
               "B": rng.standard_normal((10,)).astype("float32")}
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("MatMul", ["f", "G"], ["m"]),
             helper.make_node("Add", ["m", "B"], ["a"]),
             helper.make_node("Softmax", ["a"], ["y"], axis=-1)]
    graph = helper.make_graph(nodes, "small_cnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
                              [numpy_helper.from_array(v, k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_symbolic_batch_compiles_once_and_matches_onnxruntime():
    rng = np.random.default_rng(0)
    model = _small_cnn(rng)
    mod, params = relay.frontend.from_onnx(model)
    assert mod["main"].params[0].type_annotation == relay.TensorType((relay.Any(), 3, 16, 16), "float32")
    vm = VirtualMachine(relay.vm.compile(mod, "llvm", params=params), kiln.cpu(0))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (1, 3, 8):
        x = rng.standard_normal((batch, 3, 16, 16)).astype("float32")
        np.testing.assert_allclose(vm.invoke("main", x).numpy(), session.run(None, {"x": x})[0], rtol=1e-4,
                                   atol=1e-5)


def test_a_shape_dict_still_specializes_the_batch():
    mod, _ = relay.frontend.from_onnx(_small_cnn(np.random.default_rng(0)), shape={"x": (2, 3, 16, 16)})
    assert mod["main"].params[0].type_annotation == relay.TensorType((2, 3, 16, 16), "float32")
