"""Converters fed tensors whose dimensions are known only at run time (kiln/relay/frontend/onnx/{tensor,nn,dynamic}.py):
Split and Unsqueeze of a symbolic dimension, MatMul whose reduction or operands are symbolic, and Expand /
ConstantOfShape whose shape mixes run-time and constant entries (the constant ones stay static in the type). Each
model is compiled once and run at two sizes against onnxruntime."""

import numpy as np
from onnx import helper

from kiln import relay

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def test_split_of_a_symbolic_axis(ox):
    nodes = [helper.make_node("Split", ["x"], ["a", "b"], axis=1),
             helper.make_node("Split", ["x"], ["c", "d", "e"], axis=1, num_outputs=3)]
    model = ox.make_model(nodes, {"x": ([2, "n"], "float32")}, ["a", "b", "c", "d", "e"], opset=18)
    assert ox.check_compiled_once(model, [{"x": rand(2, 6)}, {"x": rand(2, 10)}]).uses_vm


def test_split_at_fixed_sizes_of_a_symbolic_axis(ox):
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=0)
    model = ox.make_model([node], {"x": (["n", 3], "float32")}, ["a", "b"], {"sizes": np.array([2, 3], "int64")},
                          opset=13)
    ox.check_compiled_once(model, [{"x": rand(5, 3)}])


def test_unsqueeze_keeps_symbolic_dimensions(ox):
    node = helper.make_node("Unsqueeze", ["x", "axes"], ["y"])
    model = ox.make_model([node], {"x": (["n", 3, "m"], "float32")}, ["y"], {"axes": np.array([0, -1, 2], "int64")},
                          opset=13)
    ox.check_compiled_once(model, [{"x": rand(2, 3, 4)}, {"x": rand(5, 3, 1)}])


def test_matmul_with_symbolic_reduction_and_batches(ox):
    nodes = [helper.make_node("MatMul", ["a", "b"], ["ab"]), helper.make_node("MatMul", ["c", "b"], ["cb"]),
             helper.make_node("MatMul", ["a", "v"], ["av"])]
    model = ox.make_model(nodes, {"a": (["n", 3, "k"], "float32"), "b": (["k", 2], "float32"),
                                  "c": ([2, "n", 3, "k"], "float32"), "v": (["k"], "float32")},
                          ["ab", "cb", "av"], opset=13)
    feeds = [{"a": rand(n, 3, k), "b": rand(k, 2), "c": rand(2, n, 3, k), "v": rand(k)} for n, k in ((1, 4), (3, 2))]
    ox.check_compiled_once(model, feeds, rtol=1e-5, atol=1e-5)


def test_expand_and_constant_of_shape_keep_the_known_entries_static(ox):
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "zero"], ["n"]),
             helper.make_node("Concat", ["n", "two_three"], ["shape"], axis=0),
             helper.make_node("Expand", ["row", "shape"], ["e"]),
             helper.make_node("ConstantOfShape", ["shape"], ["z"])]
    inits = {"zero": np.array([0], "int64"), "two_three": np.array([2, 3], "int64"),
             "row": np.arange(3, dtype="float32")}
    model = ox.make_model(nodes, {"x": (["n", 4], "float32")}, ["e", "z"], inits, opset=13)
    mod, _ = relay.frontend.from_onnx(model)
    ret = relay.transform.InferType()(mod)["main"].ret_type
    assert all(tuple(f.shape[1:]) == (2, 3) for f in ret.fields)
    ox.check_compiled_once(model, [{"x": rand(1, 4)}, {"x": rand(5, 4)}])
