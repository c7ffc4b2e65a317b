"""RNN, GRU and LSTM converters (kiln/relay/frontend/onnx/rnn.py) against onnxruntime."""

import numpy as np
import pytest
from onnx import helper

from kiln.error import OpNotImplemented

RNG = np.random.default_rng(12)
SEQ, BATCH, INPUT, HIDDEN = 4, 2, 3, 5


def f32(*shape, scale=0.5):
    return (RNG.standard_normal(shape) * scale).astype("float32")


def _model(ox, op, gates, attrs, dirs=1, with_initial=False, peepholes=False):
    x_shape = (SEQ, BATCH, INPUT)
    inits = {"W": f32(dirs, gates * HIDDEN, INPUT), "R": f32(dirs, gates * HIDDEN, HIDDEN),
             "B": f32(dirs, 2 * gates * HIDDEN)}
    names = ["x", "W", "R", "B", "", ""]
    if with_initial:
        h_shape = (dirs, BATCH, HIDDEN)
        inits["h0"] = f32(*h_shape)
        names[5] = "h0"
        if op == "LSTM":
            inits["c0"] = f32(*h_shape)
            names.append("c0")
    if peepholes:
        names += [""] * (7 - len(names)) + ["P"]
        inits["P"] = f32(dirs, 3 * HIDDEN)
    outputs = ["y", "y_h"] + (["y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, names, outputs, hidden_size=HIDDEN, **attrs)
    return ox.make_model([node], {"x": (x_shape, "float32")}, outputs, inits, opset=14), x_shape


@pytest.mark.parametrize("op,gates", [("RNN", 1), ("GRU", 3), ("LSTM", 4)])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
def test_recurrent_layers(ox, op, gates, direction, layout):
    dirs = 2 if direction == "bidirectional" else 1
    model, x_shape = _model(ox, op, gates, {"direction": direction}, dirs, with_initial=True)
    x = f32(*x_shape, scale=1.0)
    want = ox.check(model, {"x": x}, rtol=1e-4, atol=1e-5)
    if layout:  # onnxruntime has no batch-first layout: transpose the same model's data and compare with kiln
        model.graph.node[0].attribute.append(helper.make_attribute("layout", 1))
        for init in model.graph.initializer:
            if init.name in ("h0", "c0"):
                init.CopyFrom(ox.numpy_helper.from_array(ox.numpy_helper.to_array(init).transpose(1, 0, 2), init.name))
        del model.graph.input[0].type.tensor_type.shape.dim[:]
        model.graph.input[0].type.tensor_type.shape.dim.extend(
            helper.make_tensor_type_proto(1, [BATCH, SEQ, INPUT]).tensor_type.shape.dim)
        got = ox.run_kiln(model, {"x": x.transpose(1, 0, 2)})
        np.testing.assert_allclose(got[0], want[0].transpose(2, 0, 1, 3), rtol=1e-5, atol=1e-6)
        for g, w in zip(got[1:], want[1:], strict=True):
            np.testing.assert_allclose(g, w.transpose(1, 0, 2), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attrs", [{"linear_before_reset": 1}, {"clip": 0.5},
                                   {"activations": ["HardSigmoid", "LeakyRelu"], "activation_alpha": [0.3, 0.1],
                                    "activation_beta": [0.4]}])
def test_gru_options(ox, attrs):
    model, x_shape = _model(ox, "GRU", 3, attrs)
    ox.check(model, {"x": f32(*x_shape, scale=1.0)}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attrs,peepholes", [({}, True), ({"input_forget": 1}, False), ({"clip": 0.3}, False)])
def test_lstm_options(ox, attrs, peepholes):
    model, x_shape = _model(ox, "LSTM", 4, attrs, peepholes=peepholes)
    ox.check(model, {"x": f32(*x_shape, scale=1.0)}, rtol=1e-4, atol=1e-5)


def test_shorter_sequences_are_rejected(ox):
    inits = {"W": f32(1, HIDDEN, INPUT), "R": f32(1, HIDDEN, HIDDEN), "lens": np.array([4, 2], "int32")}
    node = helper.make_node("RNN", ["x", "W", "R", "", "lens"], ["y"], hidden_size=HIDDEN)
    model = ox.make_model([node], {"x": ((SEQ, BATCH, INPUT), "float32")}, ["y"], inits)
    with pytest.raises(OpNotImplemented, match=r"sequence_lens \[4, 2\]"):
        ox.run_kiln(model, {"x": f32(SEQ, BATCH, INPUT)})


def test_an_lstm_is_one_recurrence_with_two_gate_kernels_per_step(ox):
    """An LSTM step's four gates are slices fused into the two element-wise kernels that read them: the only split
    left is the one of the input projection into time steps (a split's tuple ends a fused group, so splitting the
    gates cost a kernel per step)."""
    import json

    import kiln
    from kiln import relay

    model, _ = _model(ox, "LSTM", 4, {})
    mod, params = relay.frontend.from_onnx(model)
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    kernels = [n["attrs"]["func_name"] for n in json.loads(lib.get_graph_json())["nodes"] if n["op"] == "tvm_op"]
    assert [k for k in kernels if "split" in k] == ["tvmgen_default_fused_reshape_split"], kernels
    assert sum("sigmoid" in k for k in kernels) == 2 * SEQ
    # Y, Y_h and Y_c are one recurrence: one input projection and a matrix product per step after the first (whose
    # state is zero), not three of each
    assert sum("dense" in k for k in kernels) == 1 + (SEQ - 1)
