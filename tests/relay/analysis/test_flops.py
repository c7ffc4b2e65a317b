"""Floating-point operations of convolutions and matrix products (kiln/relay/analysis/flops.py), and their way
into the graph through LowerTE and graph codegen."""

import json

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.relay.analysis.flops import estimate_flops
from kiln.relay.transform.infer_type import infer_type


def typed(params, body):
    return infer_type(relay.Function(params, body))


def test_conv2d_any_layout_and_groups():
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 3, 3, 3))
    assert estimate_flops(typed([x, w], relay.nn.conv2d(x, w))) == 2 * (4 * 6 * 6) * (3 * 3 * 3)
    x, w = relay.var("x", shape=(1, 8, 8, 3)), relay.var("w", shape=(3, 3, 3, 4))
    nhwc = relay.nn.conv2d(x, w, padding=(1, 1), data_layout="NHWC", kernel_layout="HWIO")
    assert estimate_flops(typed([x, w], nhwc)) == 2 * (8 * 8 * 4) * 27
    x, w = relay.var("x", shape=(1, 8, 5, 5)), relay.var("w", shape=(8, 2, 3, 3))
    grouped = relay.nn.conv2d(x, w, groups=4, channels=8, kernel_size=(3, 3))
    assert estimate_flops(typed([x, w], grouped)) == 2 * (8 * 3 * 3) * (2 * 3 * 3)
    x, w = relay.var("x", shape=(1, 1, 6, 6, 16)), relay.var("w", shape=(2, 1, 3, 3, 16, 16))
    blocked = relay.nn.conv2d(x, w, channels=32, kernel_size=(3, 3), data_layout="NCHW16c",
                              kernel_layout="OIHW16i16o", out_layout="NCHW16c")
    assert estimate_flops(typed([x, w], blocked)) == 2 * (32 * 4 * 4) * (16 * 3 * 3)


def test_matrix_products_sum_and_others_do_not_count():
    a, b = relay.var("a", shape=(2, 5)), relay.var("b", shape=(3, 5))
    c = relay.var("c", shape=(4, 7, 5))
    body = relay.Tuple([relay.nn.dense(a, b), relay.nn.matmul(a, b, transpose_b=True),
                        relay.nn.batch_matmul(c, relay.var("d", shape=(4, 6, 5))), relay.exp(a)])
    func = typed(relay.analysis.free_vars(body), body)
    assert estimate_flops(func) == 2 * 6 * 5 + 2 * 6 * 5 + 2 * (4 * 7 * 6) * 5
    x = relay.var("x", shape=(2, 3))
    assert estimate_flops(typed([x], relay.nn.relu(x) + x)) is None


@pytest.mark.parametrize("fuse", [True, False])
def test_graph_records_fused_ops_and_flops(fuse):
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.const(np.ones((4, 3, 3, 3), "float32"))
    body = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)) + relay.const(1.0))
    disabled = [] if fuse else ["FuseOps"]
    with kiln.transform.PassContext(opt_level=2, disabled_pass=disabled):
        lib = relay.build(relay.Function([x], body), target="llvm")
    nodes = [n for n in json.loads(lib.get_graph_json())["nodes"] if n["op"] == "tvm_op"]
    conv = next(n for n in nodes if "conv2d" in n["name"])
    assert conv["attrs"]["flops"] == str(2 * (4 * 8 * 8) * 27)
    assert conv["attrs"]["relay_ops"] == ("nn.conv2d,add,nn.relu" if fuse else "nn.conv2d")
    assert all("flops" not in n["attrs"] for n in nodes if n is not conv)


def test_total_mac_number_counts_transposed_and_grouped_convolutions():
    from kiln.relay.analysis import get_total_mac_number

    x = relay.var("x", shape=(2, 4, 5, 5))
    w = relay.var("w", shape=(4, 3, 3, 3))  # (in, out / groups, kh, kw), groups 2 -> 6 output channels
    y = relay.nn.conv2d_transpose(x, w, channels=6, kernel_size=(3, 3), groups=2)  # (2, 6, 7, 7)
    d = relay.nn.dense(relay.var("a", shape=(3, 10)), relay.var("b", shape=(8, 10)))
    func = relay.infer_type(relay.Function(relay.analysis.free_vars(relay.Tuple([y, d])), relay.Tuple([y, d])))
    # every output element of the transposed conv sums its group's 2 input channels over a 3x3 window
    assert get_total_mac_number(func) == 2 * 6 * 7 * 7 * 2 * 9 + 3 * 8 * 10
    assert get_total_mac_number(relay.infer_type(relay.Function([x], relay.nn.relu(x)))) == 0
