"""Reduction, arg-reduction, TopK and cumulative converters (kiln/relay/frontend/onnx/reduce.py) against
onnxruntime."""

import numpy as np
import pytest

RNG = np.random.default_rng(4)

REDUCTIONS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
              "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]


def positive(*shape):
    return RNG.uniform(0.5, 2.0, shape).astype("float32")


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("axes,keepdims", [([1], 1), ([0, 2], 0), (None, 1), ([-1], 0)])
def test_reduce_axes_attribute(ox, op, axes, keepdims):
    attrs = {"keepdims": keepdims} if axes is None else {"axes": axes, "keepdims": keepdims}
    ox.check_node(op, {"x": positive(2, 3, 4)}, attrs, opset=11, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", REDUCTIONS)
def test_reduce_axes_input(ox, op):
    ox.check_node(op, {"x": positive(2, 3, 4)}, {"keepdims": 0}, opset=18,
                  initializers={"axes": np.array([0, -1], "int64")}, rtol=1e-5, atol=1e-5)


def test_reduce_sum_axes_input_from_opset_13(ox):
    x = positive(2, 3, 4)
    ox.check_node("ReduceSum", {"x": x}, opset=13, initializers={"axes": np.array([1], "int64")})
    # no axes: everything, unless noop_with_empty_axes
    ox.check_node("ReduceSum", {"x": x}, opset=13)
    out = ox.check_node("ReduceSum", {"x": x}, {"noop_with_empty_axes": 1}, opset=13)[0]
    np.testing.assert_array_equal(out, x)


def test_reduce_max_of_only_infinities(ox):
    x = np.full((2, 3), -np.inf, "float32")
    x[1, 1] = 2.0
    out = ox.check_node("ReduceMax", {"x": x}, {"axes": [1], "keepdims": 0}, opset=13)[0]
    assert out.tolist() == [-np.inf, 2.0]


def test_reduce_integers(ox):
    x = RNG.integers(-5, 5, (3, 4)).astype("int32")
    for op in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"):
        ox.check_node(op, {"x": x}, {"axes": [1]}, opset=11, out_dtype="int32")


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("attrs", [{}, {"axis": 1, "keepdims": 0}, {"axis": -1, "select_last_index": 1}])
def test_arg_reductions_are_int64(ox, op, attrs):
    x = RNG.integers(0, 3, (3, 4, 5)).astype("float32")  # ties
    ox.check_node(op, {"x": x}, attrs, out_dtype="int64")


@pytest.mark.parametrize("attrs", [{}, {"axis": 0}, {"largest": 0}, {"axis": 1, "largest": 0}])
def test_topk(ox, attrs):
    x = RNG.integers(0, 5, (4, 6)).astype("float32")  # ties keep the lower index first
    model = ox.make_model([ox.helper.make_node("TopK", ["x", "k"], ["v", "i"], **attrs)], {"x": x},
                          ["v", ("i", "int64")], {"k": np.array([3], "int64")}, opset=11)
    ox.check(model, {"x": x})


@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
@pytest.mark.parametrize("attrs", [{}, {"exclusive": 1}, {"reverse": 1}, {"exclusive": 1, "reverse": 1}])
def test_cumulative(ox, op, attrs):
    if op == "CumProd":
        x = positive(3, 4)
        model = ox.node_model(op, {"x": x}, attrs, initializers={"axis": np.array(1, "int64")}, opset=26)
        want = np.cumprod(x[:, ::-1] if attrs.get("reverse") else x, axis=1)
        if attrs.get("exclusive"):
            want = np.concatenate([np.ones((3, 1), "float32"), want[:, :-1]], axis=1)
        if attrs.get("reverse"):
            want = want[:, ::-1]
        np.testing.assert_allclose(ox.run_kiln(model, {"x": x})[0], want, rtol=1e-5)
    else:
        ox.check_node(op, {"x": positive(3, 4)}, attrs, initializers={"axis": np.array(-1, "int32")})
