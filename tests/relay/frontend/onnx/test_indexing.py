"""Indexing converters (kiln/relay/frontend/onnx/indexing.py) against onnxruntime."""

import numpy as np
import pytest

RNG = np.random.default_rng(6)


def f32(*shape):
    return RNG.standard_normal(shape).astype("float32")


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_with_negative_indices(ox, axis):
    idx = np.array([[0, -1], [2, -3]], "int64")
    ox.check_node("Gather", {"x": f32(3, 4, 5)}, {"axis": axis}, initializers={"i": idx})
    ox.check_node("Gather", {"x": f32(3, 4, 5), "i": idx}, {"axis": axis})  # indices computed at run time
    ox.check_node("Gather", {"x": f32(3, 4, 5)}, {"axis": axis}, initializers={"i": np.array(-2, "int64")})


def test_gather_elements(ox):
    idx = np.array([[0, -1, 2], [1, 0, -3]], "int64")
    ox.check_node("GatherElements", {"x": f32(2, 3)}, {"axis": 1}, initializers={"i": idx})
    ox.check_node("GatherElements", {"x": f32(3, 3), "i": np.array([[2, 0, -1]], "int64")}, {"axis": 0})


@pytest.mark.parametrize("xshape,idx,batch_dims", [
    ((2, 3, 4), [[0, 1], [1, -1]], 0), ((2, 3, 4), [[[1], [0]], [[-1], [1]]], 0), ((2, 3, 4), [[1], [2]], 1),
    ((2, 3, 4), [[1, 3], [0, 0]], 1),
])
def test_gather_nd(ox, xshape, idx, batch_dims):
    ox.check_node("GatherND", {"x": f32(*xshape)}, {"batch_dims": batch_dims},
                  initializers={"i": np.array(idx, "int64")})
    ox.check_node("GatherND", {"x": f32(*xshape), "i": np.array(idx, "int64")}, {"batch_dims": batch_dims})


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(ox, axis):
    idx = np.array([[0, 3], [-1, 2]], "int64")
    ox.check_node("OneHot", {"i": idx}, {"axis": axis},
                  initializers={"d": np.array(4, "int64"), "v": np.array([-1.0, 2.0], "float32")})


def test_nonzero_and_compress_of_constants(ox):
    cond = np.array([1, 0, 1], bool)
    ox.check_node("NonZero", {}, initializers={"x": np.array([[1, 0], [3, 4]], "float32")}, out_dtype="int64")
    ox.check_node("Compress", {"x": f32(3, 2)}, {"axis": 0}, initializers={"c": cond})
    ox.check_node("Compress", {"x": f32(2, 2)}, initializers={"c": np.array([0, 1, 1], bool)})
    # NonZero and Compress of graph inputs (argwhere, run on the VM): tests/relay/frontend/onnx/test_dynamic.py


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "min", "max"])
def test_scatter_elements(ox, reduction):
    idx = np.array([[1, -1], [0, 2]], "int64")
    opset = 11 if reduction == "none" else 18
    attrs = {"axis": 1} if reduction == "none" else {"axis": 1, "reduction": reduction}
    ox.check_node("ScatterElements", {"x": f32(2, 3), "u": f32(2, 2)}, attrs, initializers={"i": idx},
                  input_names=["x", "i", "u"], opset=opset)


def test_scatter_nd(ox):
    idx = np.array([[0, 1], [2, -1]], "int64")
    ox.check_node("ScatterND", {"x": f32(3, 4, 2), "u": f32(2, 2)}, initializers={"i": idx},
                  input_names=["x", "i", "u"])
    ox.check_node("ScatterND", {"x": f32(3, 4, 2), "u": f32(2, 4, 2)}, {"reduction": "add"},
                  initializers={"i": np.array([[0], [0]], "int64")}, input_names=["x", "i", "u"], opset=16)
