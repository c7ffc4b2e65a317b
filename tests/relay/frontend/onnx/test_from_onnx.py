"""``relay.frontend.from_onnx`` (kiln/relay/frontend/onnx/__init__.py and graph.py): loading, parameters, shapes,
dtypes, the unsupported-operator report, node names and their export, opset dispatch, error messages."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from kiln import relay
from kiln.error import KilnError, OpNotImplemented
from kiln.relay.frontend.onnx import check_supported, node_names

RNG = np.random.default_rng(9)


def dense_model(ox, x_shape=(2, 4)):
    """y = relu(x @ w + b) with w, b initializers (w unused twice to test sharing)."""
    w, b = RNG.standard_normal((4, 3)).astype("float32"), RNG.standard_normal(3).astype("float32")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["z"]),
             helper.make_node("Relu", ["z"], ["y"])]
    unused = np.ones(2, "float32")
    return ox.make_model(nodes, {"x": (x_shape, "float32")}, ["y"], {"w": w, "b": b, "unused": unused}), w, b


def test_from_onnx_is_exported_and_loads_paths(ox, tmp_path):
    model, w, b = dense_model(ox)
    path = tmp_path / "dense.onnx"
    onnx.save(model, path)
    x = RNG.standard_normal((2, 4)).astype("float32")
    for source in (str(path), path, model):
        assert np.allclose(ox.run_kiln(source, {"x": x})[0], np.maximum(x @ w + b, 0), atol=1e-6)
    with pytest.raises(KilnError, match="no ONNX model file at .*missing.onnx"):
        relay.frontend.from_onnx(tmp_path / "missing.onnx")
    (tmp_path / "junk.onnx").write_bytes(b"not a protobuf \xff\xff")
    with pytest.raises(KilnError, match="junk.onnx"):
        relay.frontend.from_onnx(tmp_path / "junk.onnx")
    with pytest.raises(KilnError, match="ModelProto or a path"):
        relay.frontend.from_onnx(42)


def test_freeze_params_binds_initializers_as_constants(ox):
    model, _, _ = dense_model(ox)
    mod, params = relay.frontend.from_onnx(model, freeze_params=True)
    assert params == {}
    assert [p.name_hint for p in mod["main"].params] == ["x"]
    assert mod["main"].ret_type == relay.TensorType((2, 3), "float32")


def test_unfrozen_params_are_named_parameters(ox):
    model, w, b = dense_model(ox)
    mod, params = relay.frontend.from_onnx(model, freeze_params=False)
    assert [p.name_hint for p in mod["main"].params] == ["x", "w", "b"]  # inputs, then the used initializers
    assert sorted(params) == ["b", "w"]
    np.testing.assert_array_equal(params["w"].numpy(), w)
    x = RNG.standard_normal((2, 4)).astype("float32")
    out = relay.create_executor(mod=mod).evaluate()(x, **params).numpy()
    np.testing.assert_allclose(out, np.maximum(x @ w + b, 0), atol=1e-6)


def test_shape_values_may_come_from_unfrozen_initializers(ox):
    x = RNG.standard_normal((2, 6)).astype("float32")
    model = ox.node_model("Reshape", {"x": x}, initializers={"s": np.array([3, -1], "int64")})
    mod, params = relay.frontend.from_onnx(model, freeze_params=False)
    assert mod["main"].ret_type.shape == (3, 4)
    np.testing.assert_array_equal(ox.run_kiln(model, {"x": x}, freeze_params=False)[0], x.reshape(3, 4))


def test_initializer_listed_as_graph_input_is_a_parameter(ox):
    w = np.ones((3,), "float32")
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
                               helper.make_tensor_value_info("w", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
                              [onnx.numpy_helper.from_array(w, "w")])
    mod, params = relay.frontend.from_onnx(helper.make_model(graph))
    assert [p.name_hint for p in mod["main"].params] == ["x"] and params == {}


def test_symbolic_dimensions_are_dynamic_unless_a_shape_is_given(ox):
    graph = helper.make_graph([helper.make_node("Relu", ["data"], ["y"])], "g",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["batch", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph)
    mod, _ = relay.frontend.from_onnx(model)  # a symbolic dimension is known only at run time (SPEC §9)
    assert mod["main"].params[0].type_annotation == relay.TensorType((relay.Any(), 3), "float32")
    mod, _ = relay.frontend.from_onnx(model, shape={"data": (5, 3)})
    assert mod["main"].params[0].type_annotation == relay.TensorType((5, 3), "float32")
    with pytest.raises(KilnError, match="'input', which the model does not have.*inputs: data"):
        relay.frontend.from_onnx(model, shape={"input": (5, 3)})


def test_dtype_dict_overrides_the_model(ox):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    mod, _ = relay.frontend.from_onnx(helper.make_model(graph), dtype={"x": "float64"})
    assert mod["main"].ret_type == relay.TensorType((2,), "float64")
    mod, _ = relay.frontend.from_onnx(helper.make_model(graph), dtype="float16")  # the model's type wins
    assert mod["main"].ret_type == relay.TensorType((2,), "float32")


def test_every_unsupported_operator_is_listed_before_converting(ox):
    nodes = [
        helper.make_node("Reshape", ["x", "x"], ["r"]),  # would fail to convert (non-constant shape)
        helper.make_node("FancyOp", ["r"], ["a"]),
        helper.make_node("Unique", ["a"], ["b"]),
        helper.make_node("FancyOp", ["b"], ["c"]),
        helper.make_node("Gelu", ["c"], ["d"], domain="com.microsoft"),
        helper.make_node("Relu", ["d"], ["y"]),
    ]
    model = ox.make_model(nodes, {"x": ((2,), "float32")}, ["y"])
    with pytest.raises(OpNotImplemented) as info:
        relay.frontend.from_onnx(model)
    message = str(info.value)
    assert message.startswith("The following operators are not supported for frontend ONNX: ")
    assert "FancyOp, Unique, com.microsoft.Gelu" in message
    assert message.count("FancyOp") == 1 and "Relu" not in message and "Reshape" not in message


def test_operator_newer_than_the_model_opset_is_reported(ox):
    model = ox.node_model("Gelu", {"x": np.ones(2, "float32")}, opset=13)  # Gelu exists from opset 20
    with pytest.raises(OpNotImplemented, match=r"Gelu \(opset 13; kiln converts it from opset 20\)"):
        relay.frontend.from_onnx(model)


def test_node_names_and_export(ox, tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["b"], name="custom"),
             helper.make_node("Relu", ["b"], ["c"]), helper.make_node("Add", ["c", "a"], ["y"])]
    model = ox.make_model(nodes, {"x": ((2,), "float32")}, ["y"])
    assert node_names(model.graph) == ["Relu_0", "custom", "Relu_1", "Add_0"]
    folder = tmp_path / "exported" / "nested"  # a directory, created if missing, as TVM does
    relay.frontend.from_onnx(model, export_node_renamed_model_path=f"{folder}/")
    (path,) = folder.iterdir()
    assert path.name.startswith("kiln_exported_model_") and path.suffix == ".onnx"
    renamed = onnx.load(path)
    assert [n.name for n in renamed.graph.node] == ["Relu_0", "custom", "Relu_1", "Add_0"]
    assert [n.name for n in model.graph.node] == ["", "custom", "", ""]  # the caller's model is left alone
    x = np.array([-1.0, 2.0], "float32")
    np.testing.assert_array_equal(ox.run_kiln(renamed, {"x": x})[0], ox.run_kiln(model, {"x": x})[0])


def test_errors_name_the_node(ox):
    x = np.ones((2, 3), "float32")
    model = ox.node_model("Reshape", {"x": x}, initializers={"s": np.array([4, 4], "int64")})
    with pytest.raises(KilnError, match=r"ONNX node 'Reshape_0' \(Reshape\): cannot reshape \(2, 3\)"):
        relay.frontend.from_onnx(model)
    model = ox.make_model([helper.make_node("Relu", ["nowhere"], ["y"])], {"x": x}, ["y"])
    with pytest.raises(KilnError, match="input 'nowhere' is not produced"):
        relay.frontend.from_onnx(model)


def test_opset_argument_selects_the_converter_version(ox):
    x = RNG.standard_normal((2, 3, 4)).astype("float32")
    model = ox.node_model("Softmax", {"x": x}, opset=13)
    new = ox.run_kiln(model, {"x": x})[0]
    old = ox.run_kiln(model, {"x": x}, opset=11)[0]  # axis 1 of the 2-D view, the opset 11 meaning
    np.testing.assert_allclose(new.sum(-1), 1, rtol=1e-5)
    np.testing.assert_allclose(old.reshape(2, 12).sum(1), 1, rtol=1e-5)


def test_several_outputs_make_a_tuple(ox):
    x = RNG.standard_normal((2, 6)).astype("float32")
    model = ox.node_model("Split", {"x": x}, {"axis": 1}, outputs=("a", "b"), opset=13)
    mod, _ = relay.frontend.from_onnx(model)
    assert isinstance(mod["main"].body, relay.Tuple)
    ox.check(model, {"x": x})


def test_check_supported_accepts_function_operators(ox):
    model = ox.node_model("Swish", {"x": np.ones(2, "float32")}, opset=24)
    check_supported(model.graph, 24)
    with pytest.raises(OpNotImplemented, match="Swish"):
        check_supported(model.graph, 22)
