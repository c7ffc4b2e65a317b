"""DNNL's operator rules and pattern table: what AnnotateTarget("dnnl") and MergeComposite mark."""

import numpy as np

import kiln
from kiln import relay
from kiln.relay.op.contrib import get_pattern_table


def _composites(mod):
    found = []
    relay.post_order_visit(mod["main"], lambda e: found.append(e.attrs["Composite"])
                           if isinstance(e, relay.Function) and "Composite" in e.attrs else None)
    return found


def _conv_bias_relu(bias_shape):
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.const(np.random.rand(4, 3, 3, 3).astype("float32"))
    b = relay.const(np.random.rand(*bias_shape).astype("float32"))
    conv = relay.nn.conv2d(x, w, kernel_size=(3, 3), channels=4, padding=(1, 1))
    return kiln.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.add(conv, b))))


def test_table_names_follow_tvm_and_fuse_conv_bias_relu():
    table = get_pattern_table("dnnl")
    names = [entry[0] for entry in table]
    assert names[:3] == ["dnnl.dense_bias_sum", "dnnl.conv2d_bias_sum_relu", "dnnl.conv2d_bias_sum"]
    assert {"dnnl.conv2d_bias_relu", "dnnl.deconv2d_sigmoid", "dnnl.dense_bias_gelu"} <= set(names)
    mod = relay.transform.InferType()(_conv_bias_relu((4, 1, 1)))
    merged = relay.transform.MergeComposite(table)(mod)
    assert _composites(merged) == ["dnnl.conv2d_bias_relu"]
    part = relay.transform.PartitionGraph()(relay.transform.AnnotateTarget("dnnl")(merged))
    assert [gv.name_hint for gv in part.functions if gv.name_hint != "main"] == ["tvmgen_default_dnnl_main_0"]


def test_bias_of_the_wrong_size_is_not_a_bias():
    mod = relay.transform.InferType()(_conv_bias_relu((1, 1, 1)))  # one value, not one per channel
    merged = relay.transform.MergeComposite(get_pattern_table("dnnl"))(mod)
    assert "dnnl.conv2d_bias_relu" not in _composites(merged)


def test_int64_calls_are_not_offloaded():
    a = relay.var("a", shape=(3,), dtype="int64")
    f = relay.var("f", shape=(3,))
    mod = kiln.IRModule.from_expr(relay.Function([a, f], relay.Tuple([relay.abs(a), relay.abs(f)])))
    annotated = relay.transform.AnnotateTarget("dnnl")(mod)
    abs_calls = []
    relay.post_order_visit(annotated["main"], lambda e: abs_calls.append(e) if isinstance(e, relay.Call) and
                           getattr(e.op, "name", "") == "abs" else None)
    by_dtype = {c.args[0].checked_type.dtype: c.args[0].attrs.compiler for c in abs_calls}
    assert by_dtype == {"int64": "default", "float32": "dnnl"}
