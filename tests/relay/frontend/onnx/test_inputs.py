"""The inputs to feed an ONNX model (kiln/relay/frontend/onnx/inputs.py): graph inputs that are not initializers,
with symbolic dimensions set and recorded; and load_model's errors."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from kiln import relay
from kiln.error import KilnError, OpNotImplemented
from kiln.relay.frontend.onnx import load_model, model_inputs


def model_with(inputs, initializers=()):
    nodes = [helper.make_node("Identity", [inputs[0].name], ["y"])]
    graph = helper.make_graph(nodes, "m", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_inputs_skip_initializers_and_fill_symbolic_dims():
    weight = numpy_helper.from_array(np.ones(3, "float32"), "w")
    model = model_with([helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, None]),
                        helper.make_tensor_value_info("w", TensorProto.FLOAT, [3]),
                        helper.make_tensor_value_info("ids", TensorProto.INT64, [2])], [weight])
    inputs = model_inputs(model)
    assert [(i.name, i.shape, i.dtype, i.chosen) for i in inputs] == [
        ("x", (1, 3, 1), "float32", ((0, "batch"), (2, "?"))), ("ids", (2,), "int64", ())]
    inputs = model_inputs(model, {"x": (4, 3, 5)}, symbolic_dim=7)
    assert inputs[0].shape == (4, 3, 5) and inputs[0].chosen == ()
    assert model_inputs(model, symbolic_dim=7)[0].shape == (7, 3, 7)
    mod, _ = relay.frontend.from_onnx(model, {i.name: i.shape for i in model_inputs(model)})
    assert [p.name_hint for p in mod["main"].params] == ["x", "ids"]


def test_input_errors():
    model = model_with([helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                       [numpy_helper.from_array(np.ones(2, "float32"), "w")])
    with pytest.raises(KilnError, match=r"input shapes name 'w', which the model does not have as an input "
                                        r"\(its inputs: 'x'\)"):
        model_inputs(model, {"w": (2,)})
    shapeless = model_with([helper.make_tensor_value_info("x", TensorProto.FLOAT, None)])
    with pytest.raises(KilnError, match="graph input 'x' has no shape in the model"):
        model_inputs(shapeless)
    sequence = model_with([helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)])
    with pytest.raises(OpNotImplemented, match="graph input 's' is not a tensor"):
        model_inputs(sequence)


def test_load_model_names_the_file(tmp_path):
    model = model_with([helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])])
    onnx.save(model, tmp_path / "ok.onnx")
    assert load_model(tmp_path / "ok.onnx").graph.input[0].name == "x" and load_model(model) is model
    (tmp_path / "empty.onnx").write_bytes(b"")
    with pytest.raises(KilnError, match="empty.onnx' is not an ONNX model \\(it holds no graph\\)"):
        load_model(tmp_path / "empty.onnx")


def test_export_into_a_path_that_is_a_file(tmp_path):
    model = model_with([helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])])
    (tmp_path / "taken").write_text("")
    with pytest.raises(KilnError, match="cannot write the renamed model into the directory .*taken.* names a "
                                        "directory"):
        relay.frontend.from_onnx(model, export_node_renamed_model_path=tmp_path / "taken")
