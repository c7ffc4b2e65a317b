"""Convolution, pooling and matrix-product converters (kiln/relay/frontend/onnx/nn.py) against onnxruntime."""

import numpy as np
import pytest

RNG = np.random.default_rng(2)


def f32(*shape):
    return RNG.standard_normal(shape).astype("float32")


@pytest.mark.parametrize("attrs,wshape", [
    ({}, (4, 3, 3, 3)),
    ({"pads": [1, 2, 0, 1], "strides": [2, 1]}, (4, 3, 3, 3)),
    ({"dilations": [2, 2], "pads": [2, 2, 2, 2]}, (4, 3, 3, 3)),
    ({"group": 3}, (6, 1, 3, 3)),
    ({"auto_pad": "SAME_UPPER", "strides": [2, 2]}, (4, 3, 4, 4)),
    ({"auto_pad": "SAME_LOWER", "strides": [2, 2]}, (4, 3, 4, 4)),
    ({"auto_pad": "VALID", "strides": [2, 3]}, (4, 3, 3, 2)),
])
def test_conv2d(ox, attrs, wshape):
    ox.check_node("Conv", {"x": f32(2, 3, 9, 10)}, attrs, initializers={"w": f32(*wshape), "b": f32(wshape[0])},
                  rtol=1e-4, atol=1e-4)


def test_conv1d_without_bias(ox):
    ox.check_node("Conv", {"x": f32(2, 4, 11)}, {"strides": [2], "pads": [1, 2], "dilations": [2]},
                  initializers={"w": f32(6, 4, 3)}, rtol=1e-4, atol=1e-4)
    ox.check_node("Conv", {"x": f32(2, 4, 11)}, {"group": 2}, initializers={"w": f32(6, 2, 3)}, rtol=1e-4, atol=1e-4)


def test_conv_weight_as_graph_input(ox):
    ox.check_node("Conv", {"x": f32(1, 2, 5, 5), "w": f32(3, 2, 3, 3)}, {"pads": [1, 1, 1, 1]}, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("attrs,wshape", [
    ({}, (3, 4, 3, 3)),
    ({"strides": [2, 2]}, (3, 4, 3, 3)),
    ({"strides": [2, 3], "pads": [1, 0, 2, 1], "output_padding": [1, 2]}, (3, 4, 3, 4)),
    ({"strides": [2, 2], "dilations": [2, 1]}, (3, 2, 3, 3)),
    ({"group": 3, "strides": [2, 2]}, (3, 2, 3, 3)),
    ({"strides": [2, 2], "output_shape": [10, 9]}, (3, 4, 3, 3)),
    ({"strides": [2, 2], "auto_pad": "SAME_UPPER"}, (3, 4, 3, 3)),
    ({"strides": [2, 2], "auto_pad": "SAME_LOWER"}, (3, 4, 4, 4)),
])
def test_conv_transpose(ox, attrs, wshape):
    ox.check_node("ConvTranspose", {"x": f32(2, 3, 4, 5)}, attrs,
                  initializers={"w": f32(*wshape), "b": f32(wshape[1] * attrs.get("group", 1))}, rtol=1e-4, atol=1e-4)


def test_conv_transpose_padding_beyond_the_kernel_crops(ox):
    ox.check_node("ConvTranspose", {"x": f32(1, 3, 6, 7)}, {"pads": [3, 3, 3, 2]}, initializers={"w": f32(3, 2, 3, 3)},
                  rtol=1e-4, atol=1e-4)


def test_conv_transpose_1d(ox):
    ox.check_node("ConvTranspose", {"x": f32(1, 2, 6)}, {"strides": [3], "pads": [1, 0]},
                  initializers={"w": f32(2, 3, 4)}, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool"])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 1, 1], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"},
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
])
def test_pool2d(ox, op, attrs):
    if op == "LpPool" and (attrs.get("ceil_mode") or "count_include_pad" in attrs):
        pytest.skip("LpPool has no ceil_mode/count_include_pad")
    attrs = {k: v for k, v in attrs.items() if not (op == "MaxPool" and k == "count_include_pad")}
    ox.check_node(op, {"x": f32(2, 3, 7, 8)}, attrs, rtol=1e-4, atol=1e-5)


def test_max_pool_dilations_and_1d(ox):
    ox.check_node("MaxPool", {"x": f32(1, 2, 9, 9)}, {"kernel_shape": [2, 2], "dilations": [2, 2]})
    ox.check_node("MaxPool", {"x": f32(1, 2, 9)}, {"kernel_shape": [3], "strides": [2], "pads": [1, 1]})
    ox.check_node("AveragePool", {"x": f32(1, 2, 9)}, {"kernel_shape": [3], "strides": [2]})


def test_ceil_mode_drops_a_window_starting_in_the_padding(ox):
    # the last ceil_mode window would start at the padded cell: ONNX drops it
    out = ox.check_node("MaxPool", {"x": f32(1, 1, 6, 6)},
                        {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 1, 1], "ceil_mode": 1})[0]
    assert out.shape == (1, 1, 3, 3)


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 7), (1, 2, 3, 4, 2)])
def test_global_pools(ox, op, shape):
    ox.check_node(op, {"x": f32(*shape)}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs,ashape,bshape,cshape", [
    ({}, (3, 4), (4, 5), (5,)),
    ({"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}, (4, 3), (5, 4), (3, 5)),
    ({"transB": 1}, (3, 4), (5, 4), (1, 5)),
    ({"beta": 0.0}, (3, 4), (4, 5), (5,)),
    ({"alpha": 2.0}, (3, 4), (4, 5), None),
])
def test_gemm(ox, attrs, ashape, bshape, cshape):
    inits = {"b": f32(*bshape)}
    if cshape:
        inits["c"] = f32(*cshape)
    ox.check_node("Gemm", {"a": f32(*ashape)}, attrs, initializers=inits, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ashape,bshape", [
    ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
    ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 6)), ((3, 4), (2, 4, 5)), ((4,), (2, 4, 5)),
    ((2, 2, 3, 4), (1, 4, 5)),
])
def test_matmul(ox, ashape, bshape):
    ox.check_node("MatMul", {"a": f32(*ashape), "b": f32(*bshape)}, rtol=1e-5, atol=1e-5)
    ox.check_node("MatMul", {"a": f32(*ashape)}, initializers={"b": f32(*bshape)}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd", [(2, 3, 4), (4, 5)]),
    ("bij,jk->bk", [(2, 3, 4), (4, 5)]),
])
def test_einsum(ox, equation, shapes):
    inputs = {f"x{i}": f32(*s) for i, s in enumerate(shapes)}
    ox.check_node("Einsum", inputs, {"equation": equation}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op_type,attrs,inits,message", [
    ("Conv", {"strides": [2]}, {"w": (4, 3, 3, 3)}, "strides has 1 values for 2 spatial axes"),
    ("Conv", {"dilations": [1, 1, 1]}, {"w": (4, 3, 3, 3)}, "dilations has 3 values for 2 spatial axes"),
    ("MaxPool", {"kernel_shape": [3]}, {}, "kernel_shape has 1 values for 2 spatial axes"),
    ("ConvTranspose", {"output_padding": [1]}, {"w": (3, 4, 3, 3)}, "output_padding has 1 values for 2 spatial axes"),
])
def test_spatial_attributes_of_the_wrong_length_are_named(ox, op_type, attrs, inits, message):
    from kiln.error import KilnError

    model = ox.node_model(op_type, {"x": f32(1, 3, 8, 8)}, attrs, initializers={k: f32(*s) for k, s in inits.items()})
    with pytest.raises(KilnError, match=f"ONNX node .*\\({op_type}\\): {message}"):
        ox.run_kiln(model, {"x": f32(1, 3, 8, 8)})
