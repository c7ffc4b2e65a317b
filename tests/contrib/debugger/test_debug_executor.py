"""The debug executor (kiln/contrib/debugger/debug_executor.py): runs as GraphModule does, profiles every kernel
(time, share, calls, shapes, fused ops, GFLOP/s) and reads any node's output."""

import json

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.contrib.debugger import debug_executor
from kiln.error import KilnError
from kiln.runtime.profiling import Report

RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def built():
    """conv2d-bias-relu, then two dense layers sharing one kernel (same shapes), and a softmax."""
    x = relay.var("data", shape=(1, 3, 8, 8))
    w = relay.const(RNG.standard_normal((4, 3, 3, 3)).astype("float32"))
    b = relay.const(RNG.standard_normal(4).astype("float32"))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w, padding=(1, 1), channels=4, kernel_size=(3, 3)), b))
    y = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(y))
    for _ in range(2):
        y = relay.nn.relu(relay.nn.dense(y, relay.const(RNG.standard_normal((4, 4)).astype("float32"))))
    func = relay.Function([x], relay.nn.softmax(y))
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(func, target="llvm")
    return func, lib


def create(lib):
    m = debug_executor.create(lib.get_graph_json(), lib.get_lib(), kiln.cpu(0))
    m.set_input(**lib.get_params())
    return m


def test_runs_like_graph_module(built):
    func, lib = built
    x = RNG.standard_normal((1, 3, 8, 8)).astype("float32")
    m = create(lib)
    m.run(data=x)
    want = relay.create_executor("debug", mod=kiln.IRModule.from_expr(func)).evaluate()(x).numpy()
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-5, atol=1e-6)
    assert m["profile"] is not None and m.get_num_outputs() == 1


def test_profile_reports_every_kernel_call(built):
    _, lib = built
    graph = json.loads(lib.get_graph_json())
    kernels = [(nid, n) for nid, n in enumerate(graph["nodes"]) if n["op"] == "tvm_op"]
    m = create(lib)
    report = m.profile(repeat=3, data=RNG.standard_normal((1, 3, 8, 8)).astype("float32"))
    assert [c["Node"] for c in report.calls] == [nid for nid, _ in kernels]
    assert all(c["Duration (us)"] > 0 and c["Count"] == 1 for c in report.calls)
    total = report.total_us()
    assert total > 0 and report.device_metrics == {"cpu0": {"Duration (us)": total}}
    for call in report.calls:
        assert call["Percent"] == pytest.approx(100 * call["Duration (us)"] / total)
    conv = next(c for c in report.calls if "conv2d" in c["Name"])
    # on CPUs AlterOpLayout makes the conv its blocked form, as TVM's does
    assert conv["Relay Ops"].startswith(("nn.conv2d", "nn.contrib_conv2d_NCHWc")) and conv["FLOPs"] == 2 * 4 * 64 * 27
    dense = [c for c in report.calls if "dense" in c["Name"]]
    assert len(dense) == 2 and dense[0]["Name"] == dense[1]["Name"]  # one kernel, called twice
    assert dense[0]["FLOPs"] == 2 * 4 * 4 and dense[0]["Argument Shapes"].startswith("float32[1, 4], float32[4, 4]")
    pool = next(c for c in report.calls if "pool" in c["Name"])
    assert "FLOPs" not in pool and pool["Relay Ops"].startswith("nn.global_avg_pool2d")
    assert report.configuration == {"Executor": "Graph (debug)", "Number of runs": 3}


def test_profile_table_aggregates_kernels(built):
    _, lib = built
    report = create(lib).profile(repeat=2, data=np.zeros((1, 3, 8, 8), "float32"))
    table = str(report)
    lines = table.splitlines()
    dense = [line for line in lines if "dense" in line]
    assert len(dense) == 1 and dense[0].split()[3] == "2"  # two calls in one row
    assert lines[0].split()[:4] == ["Name", "Duration", "(us)", "Percent"] and "Node" not in lines[0]
    assert sum(line.startswith("tvmgen_") for line in lines) == len({c["Name"] for c in report.calls})
    assert any(line.startswith("Sum ") for line in lines) and any(line.startswith("Total ") for line in lines)


def test_debug_get_output(built):
    _, lib = built
    graph = json.loads(lib.get_graph_json())
    x = RNG.standard_normal((1, 3, 8, 8)).astype("float32")
    m = create(lib)
    m.set_input("data", x)
    np.testing.assert_array_equal(m.debug_get_output("data").numpy(), x)  # an input: read as set
    head = graph["heads"][0][0]
    last = m.debug_get_output(head)
    m.run()
    np.testing.assert_array_equal(last.numpy(), m.get_output(0).numpy())
    out = kiln.nd.empty(last.shape)
    assert m.debug_get_output(graph["nodes"][head]["name"], out) is out
    np.testing.assert_array_equal(out.numpy(), last.numpy())
    # an intermediate node: the relu of the first dense layer, before later kernels reuse its storage
    first_dense = next(i for i, n in enumerate(graph["nodes"]) if "dense" in n["name"])
    hidden = m.debug_get_output(first_dense).numpy()
    assert hidden.shape == (1, 4) and (hidden >= 0).all()
    with pytest.raises(KilnError, match=r"debug_get_output: out has shape \(2, 4\)"):
        m.debug_get_output(first_dense, kiln.nd.empty((2, 4)))


@pytest.mark.parametrize("node,message", [
    ("nosuchnode", "the graph has no node named 'nosuchnode'"),
    (10_000, "node index 10000 is out of range"),
    (1.5, "a node is named by a str or an int index"),
])
def test_debug_get_output_errors(built, node, message):
    with pytest.raises(KilnError, match=message):
        create(built[1]).debug_get_output(node)


def test_profile_errors(built):
    m = create(built[1])
    with pytest.raises(KilnError, match="input 'data' was never set"):
        m.profile()
    with pytest.raises(KilnError, match=r"debug_get_output: input\(s\) 'data' never set"):
        m.debug_get_output(len(m.nodes) - 1)
    m.set_input("data", np.zeros((1, 3, 8, 8), "float32"))
    with pytest.raises(KilnError, match="repeat must be a positive int"):
        m.profile(repeat=0)
    with pytest.raises(KilnError, match="kiln has no metric collectors"):
        m.profile(collectors=["PAPI"])


def test_report_exports(built):
    report = create(built[1]).profile(repeat=1, data=np.ones((1, 3, 8, 8), "float32"))
    assert Report.from_json(report.json()) == report
    csv = report.csv().splitlines()
    assert csv[0].startswith("Name,Node,Duration (us),Percent,Count,FLOPs,Relay Ops,Argument Shapes")
    assert len(csv) == 1 + len(report.calls)


def test_global_create_and_graph_module_refusal(built):
    _, lib = built
    executor = kiln.get_global_func("tvm.graph_executor_debug.create")(lib.get_graph_json(), lib.get_lib(),
                                                                        kiln.cpu(0))
    assert "debug_get_output" in executor.list_functions()
    plain = graph_executor.create(lib.get_graph_json(), lib.get_lib(), kiln.cpu(0)).module
    with pytest.raises(KilnError, match="GraphModuleDebug wraps a debug executor"):
        debug_executor.GraphModuleDebug(plain)
