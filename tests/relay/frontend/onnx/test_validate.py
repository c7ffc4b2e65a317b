"""Malformed ONNX models (kiln/relay/frontend/onnx/validate.py and the converters' own checks): each ends in one
KilnError naming what is wrong and where, before anything is allocated; what ONNX Runtime accepts is accepted."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.relay.testing import onnx_fuzz


def conv_model(**attrs):
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), "float32"), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def refused(model, fragment, **kwargs):
    with pytest.raises(KilnError) as info:
        relay.frontend.from_onnx(model, **kwargs)
    assert fragment in str(info.value), str(info.value)
    return str(info.value)


def test_initializer_data_must_match_its_dims_and_type():
    model = conv_model()
    model.graph.initializer[0].raw_data = model.graph.initializer[0].raw_data[:10]
    refused(model, "initializer 'w': its raw data has 10 bytes, its dims [4, 3, 3, 3] and type FLOAT need 432")
    model = conv_model()
    model.graph.initializer[0].data_type = TensorProto.INT64  # declared as another type of another size
    refused(model, "need 864")
    typed = helper.make_tensor("w", TensorProto.FLOAT, [2, 2], [1.0, 2.0, 3.0, 4.0])
    del typed.float_data[-1]
    model = conv_model()
    model.graph.initializer[0].CopyFrom(typed)
    refused(model, "initializer 'w': it holds 3 values in float_data, its dims [2, 2] need 4")


def test_absurd_sizes_are_refused_before_allocating():
    model = conv_model()
    model.graph.initializer[0].dims[0] = 1 << 40  # a flipped bit: 1.7e13 elements
    refused(model, "more than this machine's memory")
    model = conv_model()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1 << 44
    refused(model, "graph input 'x' declares")


@pytest.mark.parametrize("attrs, fragment", [
    ({"strides": [0, 1]}, "attribute 'strides' must be positive, got [0, 1]"),
    ({"dilations": [1, -1]}, "attribute 'dilations' must be positive"),
    ({"pads": [1, 1, -1, 1]}, "attribute 'pads' must not be negative"),
    ({"group": 0}, "attribute 'group' must be positive"),
    ({"kernel_shape": [5, 5]}, "kernel_shape [5, 5] contradicts the weight's spatial shape [3, 3]"),
])
def test_attribute_values_are_checked(attrs, fragment):
    message = refused(conv_model(**attrs), fragment)
    assert "ONNX node 'conv' (Conv)" in message


def test_pooling_pads_smaller_than_the_kernel():
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 3], name="pool")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    refused(helper.make_model(graph), "ONNX node 'pool' (AveragePool): pads [1, 1, 1, 3] must each be smaller than "
                                      "the kernel [3, 3]")


def test_attributes_of_the_wrong_type_or_unknown():
    model = conv_model()
    model.graph.node[0].attribute.append(helper.make_attribute("kernel_shape", "3x3"))
    refused(model, "Mismatched attribute type")
    model = conv_model(frobnicate=1)
    refused(model, "Unrecognized attribute: frobnicate")


def test_node_inputs_must_exist_and_suffice():
    model = conv_model()
    model.graph.node[0].input[1] = "nowhere"
    refused(model, "ONNX node 'conv' (Conv): input 'nowhere' is not produced by any node, graph input or initializer")
    model = conv_model()
    del model.graph.node[0].input[1]
    refused(model, "has input size 1 not in range [min=2, max=3]")


def test_opsets_and_required_attributes():
    model = conv_model()
    del model.opset_import[:]
    refused(model, "imports no opset for the default domain")
    relay.frontend.from_onnx(model, opset=13)  # the caller may give it
    node = helper.make_node("Slice", ["x"], ["y"], name="s")  # Slice 1 takes starts/ends as attributes
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    refused(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1)]), "Required attribute")


def test_text_that_is_not_utf8():
    model = conv_model()
    model.graph.node[0].attribute.append(helper.make_attribute("auto_pad", b"\xff\xfeSAME"))
    refused(model, "attribute 'auto_pad' is not valid UTF-8")
    data = bytearray(conv_model().SerializeToString())
    start = data.index(b"Conv")
    data[start:start + 4] = b"C\xffnv"
    refused(onnx.load_from_string(bytes(data)), "its op type is not valid UTF-8")


def test_nodes_out_of_order_are_sorted_with_a_warning():
    relu = helper.make_node("Relu", ["t"], ["y"], name="relu")
    neg = helper.make_node("Neg", ["x"], ["t"], name="neg")
    graph = helper.make_graph([relu, neg], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.warns(UserWarning, match="not in topological order; kiln sorted them"):
        mod, _ = relay.frontend.from_onnx(model)
    x = np.linspace(-2, 2, 5).astype("float32")
    got = relay.create_executor("debug", mod=mod).evaluate()(x).numpy()
    np.testing.assert_array_equal(got, np.maximum(-x, 0))
    cycle = helper.make_node("Neg", ["y"], ["t"], name="neg")
    graph = helper.make_graph([relu, cycle], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    refused(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), "has a cycle")


def test_types_the_operator_does_not_take():
    model = conv_model()
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.INT32
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.ones((4, 3, 3, 3), "int32"), "w"))
    refused(model, "ONNX node 'conv' (Conv): input 0 (X) is a tensor of int32; Conv takes double, float, float16")
    node = helper.make_node("Neg", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.INT32, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    refused(helper.make_model(graph), "graph output 'y' is declared as float32, the graph computes int32")


def test_input_types_and_shapes_the_caller_gives():
    model = conv_model()
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.UNDEFINED
    refused(model, "graph input 'x' has no element type in the model: give it with dtype={'x': 'float32'}")
    relay.frontend.from_onnx(model, dtype={"x": "float32"})
    refused(conv_model(), "graph input 'x' has rank 4 in the model; shape= gives it rank 3", shape={"x": (3, 8, 8)})
    refused(conv_model(), "has a negative dimension", shape={"x": (1, 3, -8, 8)})


def test_out_of_range_axes_and_permutations():
    node = helper.make_node("Softmax", ["x"], ["y"], axis=-7, name="sm")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    refused(helper.make_model(graph), "ONNX node 'sm' (Softmax): axis -7 is out of range for a tensor of rank 2")
    node = helper.make_node("Transpose", ["x"], ["y"], perm=[-1, 0], name="t")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    refused(helper.make_model(graph), "perm [-1, 0] is not a permutation of the 2 axes of its input")


def test_no_graph_or_no_outputs():
    refused(onnx.ModelProto(ir_version=8), "has no graph")
    model = conv_model()
    del model.graph.output[:]
    refused(model, "has no outputs")


def test_an_empty_batch_builds_and_runs():
    model = conv_model(pads=[1, 1, 1, 1])
    mod, params = relay.frontend.from_onnx(model, shape={"x": (0, 3, 8, 8)})
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    m = lib["default"](kiln.cpu(0))
    m["set_input"]("x", np.zeros((0, 3, 8, 8), "float32"))
    m["run"]()
    assert m["get_output"](0).numpy().shape == (0, 4, 8, 8)


def test_mutation_fuzzer_finds_no_bug():
    """A small budget of the importer's mutation fuzzer (``python -m kiln.relay.testing.onnx_fuzz`` runs more):
    every malformed model is refused with a KilnError or handled as ONNX Runtime handles it."""
    outcomes = onnx_fuzz.fuzz(seed=7, cases=40)
    bugs = [f"{o.kind} {o.mutation}: {o.detail} (replay: {o.replay()})" for o in outcomes if o.is_bug]
    assert not bugs, "\n".join(bugs)
    assert {o.kind for o in outcomes} >= {"ok", "refused"}


def test_slice_operands_must_be_one_dimensional():
    """Found by the mutation fuzzer (seed 5000, case 78): a flipped byte dropped the dims of Slice's ``starts``;
    ONNX Runtime refuses a scalar there, kiln read it as one value."""
    starts = numpy_helper.from_array(np.array(0, "int64"), "starts")
    ends = numpy_helper.from_array(np.array([2], "int64"), "ends")
    node = helper.make_node("Slice", ["x", "starts", "ends"], ["y"], name="s")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [starts, ends])
    refused(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
            "ONNX node 's' (Slice): starts must be a 1-D tensor, got one of shape ()")


@pytest.mark.parametrize("kwargs, fragment", [
    ({"shape": "x"}, "from_onnx: shape must be a dict of input name to shape, got str"),
    ({"shape": {"x": (1.5, 3, 8, 8)}}, "from_onnx: shape={'x': (1.5, 3, 8, 8)} is not a tuple of integers"),
    ({"dtype": 5}, "from_onnx: dtype must be a str or a dict of input name to dtype, got int"),
    ({"opset": "13"}, "from_onnx: opset must be an int, got '13'"),
])
def test_arguments_of_the_wrong_kind(kwargs, fragment):
    """Found by probing the API: a str shape and opset raised ValueError from inside, a float dimension was
    truncated and an int dtype ignored."""
    with pytest.raises(KilnError) as info:
        relay.frontend.from_onnx(conv_model(), **kwargs)
    assert fragment in str(info.value) and isinstance(info.value, TypeError)  # as a TypeError from TVM would be
    relay.frontend.from_onnx(conv_model(), shape={"x": (np.int64(1), 3, 8, 8)}, opset=np.int32(13))
