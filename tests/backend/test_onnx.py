"""``kiln.backend.onnx``: the ONNX backend API over kiln (prepare, run, run_model, run_node, devices); each model
is compiled once, for the VM when a graph input decides a shape (SPEC §9: no more compiling per input value)."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.backend.base import Backend

import kiln.backend.onnx as backend
from kiln.error import KilnError, RuntimeArgumentError


def _model(nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, None) for n, t in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def add_relu():
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    return _model(nodes, [("a", TensorProto.FLOAT, [2, 3]), ("b", TensorProto.FLOAT, [3])],
                  [("y", TensorProto.FLOAT)])


def test_backend_api_shape():
    assert issubclass(backend.KilnBackend, Backend)
    assert backend.prepare == backend.KilnBackend.prepare and backend.run_model == backend.KilnBackend.run_model
    assert backend.supports_device("CPU") and backend.supports_device("CPU:0")
    assert not backend.supports_device("CUDA") and not backend.supports_device("TPU")
    with pytest.raises(KilnError, match="CPU only"):
        backend.prepare(add_relu(), "CUDA")


def test_prepare_and_run_with_lists_dicts_and_names():
    a = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    b = np.array([1, 1, 1], "float32")
    rep = backend.prepare(add_relu())
    want = np.maximum(a + b, 0)
    np.testing.assert_array_equal(rep.run([a, b])[0], want)
    out = rep.run({"b": b, "a": a})
    np.testing.assert_array_equal(out["y"], want)
    np.testing.assert_array_equal(backend.run_model(add_relu(), [a, b]).y, want)
    with pytest.raises(RuntimeArgumentError, match="takes 2 inputs"):
        rep.run([a])
    with pytest.raises(RuntimeArgumentError, match="missing inputs b"):
        rep.run({"a": a})


def test_run_node():
    node = helper.make_node("Sub", ["x", "z"], ["w"])
    x, z = np.ones((2, 2), "float32"), np.full((2, 2), 3, "float32")
    np.testing.assert_array_equal(backend.run_node(node, [x, z])[0], x - z)


def test_a_shape_given_as_input_is_compiled_once_for_the_vm():
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    model = _model(nodes, [("x", TensorProto.FLOAT, [2, 6]), ("shape", TensorProto.INT64, [2])],
                   [("y", TensorProto.FLOAT)])
    rep = backend.prepare(model)
    assert rep.uses_vm
    x = np.arange(12, dtype="float32").reshape(2, 6)
    np.testing.assert_array_equal(rep.run([x, np.array([3, 4], "int64")])[0], x.reshape(3, 4))
    np.testing.assert_array_equal(rep.run([x, np.array([-1, 2], "int64")])[0], x.reshape(6, 2))
    with pytest.raises(KilnError, match="dyn.reshape"):
        rep.run([x, np.array([5, 5], "int64")])


def test_static_models_use_the_graph_executor():
    assert not backend.prepare(add_relu()).uses_vm
