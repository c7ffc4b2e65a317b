"""If with a compile-time or run-time condition (kiln/relay/frontend/onnx/control.py)."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from kiln import relay
from kiln.error import OpNotImplemented


def _branch(name, op, extra=None):
    out = helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, None)
    nodes = [helper.make_node(op, ["x"] + ([extra] if extra else []), [f"{name}_out"])]
    return helper.make_graph(nodes, name, [], [out])


def _if_model(ox, cond_nodes, inputs, inits, else_op="Neg"):
    nodes = cond_nodes + [helper.make_node("If", ["cond"], ["y"], then_branch=_branch("then", "Relu"),
                                           else_branch=_branch("else", else_op))]
    return ox.make_model(nodes, inputs, ["y"], inits, opset=13)


@pytest.mark.parametrize("rows,taken", [(2, "Relu"), (3, "Neg")])
def test_if_on_a_shape_condition_takes_one_branch(ox, rows, taken):
    cond = [helper.make_node("Shape", ["x"], ["shape"]), helper.make_node("Gather", ["shape", "zero"], ["rows"]),
            helper.make_node("Equal", ["rows", "two"], ["cond"])]
    x = np.random.default_rng(0).standard_normal((rows, 3)).astype("float32")
    model = _if_model(ox, cond, {"x": x}, {"zero": np.array(0, "int64"), "two": np.array(2, "int64")})
    ox.check(model, {"x": x})
    mod, _ = relay.frontend.from_onnx(model)
    calls = []
    relay.analysis.post_order_visit(mod["main"], lambda e: calls.append(e.op.name) if isinstance(e, relay.Call) else 0)
    assert calls == [{"Relu": "nn.relu", "Neg": "negative"}[taken]]


def test_if_on_a_graph_input_is_a_relay_if(ox):
    model = _if_model(ox, [], {"x": ((2,), "float32"), "cond": ((), "bool")}, {})
    mod, _ = relay.frontend.from_onnx(model)
    assert isinstance(mod["main"].body, relay.If)
    for cond in (True, False):
        ox.check(model, {"x": np.array([-1, 2], "float32"), "cond": np.array(cond)})


def test_unsupported_operators_inside_branches_are_listed(ox):
    model = _if_model(ox, [], {"x": ((2,), "float32"), "cond": ((), "bool")}, {}, else_op="FancyOp")
    with pytest.raises(OpNotImplemented, match="not supported for frontend ONNX: FancyOp"):
        relay.frontend.from_onnx(model)


def test_loop_whose_scan_output_has_a_run_time_length(ox):
    """Each step's scan output is ``x[:k] * i`` (its length ``k`` a graph input), and the carried value grows from
    ``(1,)`` to ``(k,)``: compiled once, run at two trip counts and lengths against onnxruntime."""
    graph_value = helper.make_tensor_value_info
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Slice", ["x", "zero", "k"], ["head"]),
         helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["head", "fi"], ["scan"]),
         helper.make_node("Add", ["acc_in", "scan"], ["acc_out"])],
        "body", [graph_value("i", TensorProto.INT64, []), graph_value("cond_in", TensorProto.BOOL, []),
                 graph_value("acc_in", TensorProto.FLOAT, None)],
        [graph_value("cond_out", TensorProto.BOOL, []), graph_value("acc_out", TensorProto.FLOAT, None),
         graph_value("scan", TensorProto.FLOAT, None)])
    loop = helper.make_node("Loop", ["M", "", "acc"], ["total", "steps"], body=body)
    model = ox.make_model([loop], {"M": ((), "int64"), "x": ((6,), "float32"), "k": ((1,), "int64"),
                                   "acc": ((1,), "float32")}, ["total", "steps"], {"zero": np.array([0], "int64")},
                          opset=13)
    x = np.random.default_rng(1).standard_normal(6).astype("float32")
    acc = np.array([0.5], "float32")
    feeds = [{"M": np.array(m, "int64"), "x": x, "k": np.array([k], "int64"), "acc": acc} for m, k in ((3, 2), (4, 5))]
    assert ox.check_compiled_once(model, feeds).uses_vm
