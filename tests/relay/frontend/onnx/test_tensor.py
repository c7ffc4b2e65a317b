"""Shape and data-movement converters (kiln/relay/frontend/onnx/tensor.py) against onnxruntime."""

import numpy as np
import pytest

from kiln import relay

RNG = np.random.default_rng(5)


def f32(*shape):
    return RNG.standard_normal(shape).astype("float32")


def i64(*values):
    return np.array(values, "int64")


@pytest.mark.parametrize("shape,target,allowzero", [
    ((2, 3, 4), (6, 4), 0), ((2, 3, 4), (0, -1), 0), ((2, 3, 4), (-1,), 0), ((2, 3, 4), (4, 0, 2), 0),
    ((2, 0, 4), (0, 4), 1),
])
def test_reshape(ox, shape, target, allowzero):
    ox.check_node("Reshape", {"x": f32(*shape)}, {"allowzero": allowzero}, initializers={"s": i64(*target)},
                  opset=14)


def test_reshape_attribute_form(ox):
    x = f32(2, 3, 4)
    model = ox.node_model("Reshape", {"x": x}, {"shape": [4, -1]}, opset=4)
    np.testing.assert_array_equal(ox.run_kiln(model, {"x": x})[0], x.reshape(4, -1))


def test_shape_subgraph_folds_to_a_static_reshape(ox):
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape: the new shape is a constant, so the module holds a plain
    reshape of static shape and no shape computation."""
    h = ox.helper
    nodes = [
        h.make_node("Shape", ["x"], ["shape"]),
        h.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        h.make_node("Unsqueeze", ["batch", "axes"], ["batch1"]),
        h.make_node("Concat", ["batch1", "minus_one"], ["new_shape"], axis=0),
        h.make_node("Reshape", ["x", "new_shape"], ["y"]),
    ]
    x = f32(2, 3, 4)
    model = ox.make_model(nodes, {"x": x}, ["y"], {"zero": np.array(0, "int64"), "axes": i64(0),
                                                   "minus_one": i64(-1)})
    ox.check(model, {"x": x})
    mod, _ = relay.frontend.from_onnx(model)
    ops = []
    relay.analysis.post_order_visit(mod["main"], lambda e: ops.append(e.op.name) if isinstance(e, relay.Call) else 0)
    assert ops == ["reshape"]
    assert mod["main"].ret_type == relay.TensorType((2, 12), "float32")


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_flatten(ox, axis):
    ox.check_node("Flatten", {"x": f32(2, 3, 4)}, {"axis": axis})


def test_transpose_squeeze_unsqueeze(ox):
    x = f32(2, 1, 3, 1)
    ox.check_node("Transpose", {"x": x}, {"perm": [2, 0, 3, 1]})
    ox.check_node("Transpose", {"x": x})
    ox.check_node("Squeeze", {"x": x}, initializers={"a": i64(1)}, opset=13)
    ox.check_node("Squeeze", {"x": x}, opset=13)
    ox.check_node("Squeeze", {"x": x}, {"axes": [-1]}, opset=11)
    ox.check_node("Unsqueeze", {"x": x}, initializers={"a": i64(0, -1, 3)}, opset=13)
    ox.check_node("Unsqueeze", {"x": x}, {"axes": [1, 5]}, opset=11)


def test_concat(ox):
    ox.check_node("Concat", {"a": f32(2, 3), "b": f32(2, 1), "c": f32(2, 2)}, {"axis": -1})


@pytest.mark.parametrize("attrs,split,outputs,opset", [
    ({"axis": 1}, None, ("a", "b", "c"), 13),
    ({"axis": 1}, i64(1, 4, 1), ("a", "b", "c"), 13),
    ({"axis": 0, "split": [1, 1]}, None, ("a", "b"), 11),
    ({"axis": 1, "num_outputs": 4}, None, ("a", "b", "c", "d"), 18),
])
def test_split(ox, attrs, split, outputs, opset):
    x = f32(2, 6)
    inits = {} if split is None else {"s": split}
    model = ox.node_model("Split", {"x": x}, attrs, outputs=outputs, initializers=inits, opset=opset)
    if "num_outputs" in attrs:  # 6 into 4 parts: three of 2, then 0
        got = ox.run_kiln(model, {"x": x})
        assert [g.shape[1] for g in got] == [2, 2, 2, 0]
        np.testing.assert_array_equal(np.concatenate(got, axis=1), x)
    else:
        ox.check(model, {"x": x})


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ((1,), (3,), (0,), None), ((0, 1), (-1, 1000), (1, 2), None), ((-1,), (-1000,), (2,), (-1,)),
    ((5, 0), (-7, 3), (1, 0), (-2, 2)), ((0,), (9223372036854775807,), (-1,), (3,)), ((10,), (20,), (0,), None),
    ((2,), (0,), (1,), (1,)),
])
def test_slice(ox, starts, ends, axes, steps):
    inits = {"s": i64(*starts), "e": i64(*ends), "a": i64(*axes)}
    if steps is not None:
        inits["t"] = i64(*steps)
    ox.check_node("Slice", {"x": f32(4, 5, 6)}, initializers=inits)


def test_slice_attribute_form(ox):
    x = f32(4, 5)
    model = ox.node_model("Slice", {"x": x}, {"starts": [1, -3], "ends": [3, 100], "axes": [0, 1]}, opset=9)
    np.testing.assert_array_equal(ox.run_kiln(model, {"x": x})[0], x[1:3, -3:])


def test_shape_size_constant(ox):
    x = f32(2, 3, 4)
    ox.check_node("Shape", {"x": x}, out_dtype="int64")
    ox.check_node("Shape", {"x": x}, {"start": 1, "end": -1}, out_dtype="int64", opset=15)
    ox.check_node("Size", {"x": x}, out_dtype="int64")
    h = ox.helper
    for attrs, dtype in [({"value": h.make_tensor("v", ox.TensorProto.FLOAT, [2], [1.5, 2.5])}, "float32"),
                         ({"value_ints": [1, 2, 3]}, "int64"), ({"value_float": 2.0}, "float32"),
                         ({"value_int": 7}, "int64")]:
        model = ox.make_model([h.make_node("Constant", [], ["y"], **attrs)], {}, [("y", dtype)], opset=13)
        ox.check(model, {})
    model = ox.node_model("ConstantOfShape", {}, {"value": h.make_tensor("v", ox.TensorProto.INT32, [1], [3])},
                          out_dtype="int32", initializers={"s": i64(2, 3)})
    ox.check(model, {})


@pytest.mark.parametrize("to,dtype", [("FLOAT16", "float16"), ("INT32", "int32"), ("BOOL", "bool"),
                                      ("DOUBLE", "float64"), ("UINT8", "uint8"), ("FLOAT", "float32")])
def test_cast(ox, to, dtype):
    x = RNG.uniform(0, 5, (3, 4)).astype("float32")
    ox.check_node("Cast", {"x": x}, {"to": getattr(ox.TensorProto, to)}, out_dtype=dtype)
    ox.check_node("CastLike", {"x": x, "like": np.zeros(1, dtype)}, out_dtype=dtype, opset=15)


def test_expand_tile_where_range(ox):
    ox.check_node("Expand", {"x": f32(3, 1)}, initializers={"s": i64(2, 1, 4)})
    ox.check_node("Expand", {"x": f32(3, 4)}, initializers={"s": i64(4)})
    ox.check_node("Tile", {"x": f32(2, 3)}, initializers={"r": i64(2, 3)})
    cond = RNG.integers(0, 2, (2, 3)).astype(bool)
    ox.check_node("Where", {"c": cond, "a": f32(2, 3), "b": f32(3)})
    for start, limit, delta, dtype in [(0, 10, 3, "int64"), (1.0, -2.0, -0.7, "float32"), (5, 1, 1, "int32")]:
        inits = {"a": np.array(start, dtype), "b": np.array(limit, dtype), "d": np.array(delta, dtype)}
        ox.check_node("Range", {}, initializers=inits, out_dtype=dtype)


@pytest.mark.parametrize("mode,pads", [("constant", (1, 0, 2, 1)), ("edge", (2, 1, 0, 2)), ("reflect", (1, 2, 2, 1)),
                                       ("constant", (-1, 1, 0, -2)), ("wrap", (2, 1, 1, 3))])
def test_pad(ox, mode, pads):
    inits = {"p": i64(*pads)}
    if mode == "constant":
        inits["v"] = np.array(1.5, "float32")
    opset = 19 if mode == "wrap" else 13
    ox.check_node("Pad", {"x": f32(4, 5)}, {"mode": mode}, initializers=inits, opset=opset)


def test_pad_axes_and_attribute_forms(ox):
    ox.check_node("Pad", {"x": f32(2, 3, 4)}, initializers={"p": i64(1, 2, 0, 1), "v": np.array(0.0, "float32"),
                                                            "a": i64(0, 2)}, opset=18)
    x = f32(3, 4)
    model = ox.node_model("Pad", {"x": x}, {"pads": [0, 1, 1, 0], "value": 2.0}, opset=2)
    np.testing.assert_array_equal(ox.run_kiln(model, {"x": x})[0], np.pad(x, ((0, 1), (1, 0)), constant_values=2.0))


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(ox, mode):
    ox.check_node("DepthToSpace", {"x": f32(2, 8, 3, 4)}, {"blocksize": 2, "mode": mode})


def test_space_to_depth(ox):
    ox.check_node("SpaceToDepth", {"x": f32(2, 3, 4, 6)}, {"blocksize": 2})


@pytest.mark.parametrize("upper,k", [(1, 0), (0, 0), (1, 1), (0, -1)])
def test_trilu(ox, upper, k):
    ox.check_node("Trilu", {"x": f32(2, 4, 5)}, {"upper": upper}, initializers={"k": np.array(k, "int64")})


def test_eye_like(ox):
    ox.check_node("EyeLike", {"x": f32(3, 4)}, {"k": 1})
    ox.check_node("EyeLike", {"x": f32(4, 3)}, {"dtype": ox.TensorProto.INT32}, out_dtype="int32")


def test_slice_range_and_pad_inputs_of_the_wrong_length_are_named(ox):
    from kiln.error import KilnError

    x = f32(4, 5)
    model = ox.node_model("Slice", {"x": x}, initializers={"s": i64(0, 1), "e": i64(2, 3), "a": i64(0)})
    with pytest.raises(KilnError, match=r"\(Slice\): axes has 1 values, starts has 2"):
        ox.run_kiln(model, {"x": x})
    model = ox.node_model("Range", {}, initializers={"s": np.array(0, "int64"), "l": np.array(4, "int64")},
                          out_dtype="int64")
    with pytest.raises(KilnError, match=r"\(Range\): .*input size 2 not in range \[min=3, max=3\]"):
        ox.run_kiln(model, {})
    model = ox.node_model("Pad", {"x": x}, initializers={"p": i64(0, 1, 1)})
    with pytest.raises(KilnError, match=r"\(Pad\): pads has 3 values for 2 axes"):
        ox.run_kiln(model, {"x": x})
