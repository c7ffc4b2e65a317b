"""The runtime graph executor (kiln/runtime/graph_executor.py), the factory module
(kiln/runtime/graph_executor_factory.py) and parameter dictionaries (kiln/runtime/params.py), driven by hand-written
graphs over kernels built with kiln.build, independently of relay.build."""

import json
import struct

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.error import KilnError, RuntimeArgumentError
from kiln.runtime import load_param_dict, save_param_dict
from kiln.runtime.graph_executor import GraphExecutor
from kiln.runtime.graph_executor_factory import GraphExecutorFactoryModule


@pytest.fixture(scope="module")
def addone():
    a = te.placeholder((2, 3), name="A")
    b = te.compute((2, 3), lambda i, j: a[i, j] + 1.0, name="B")
    return kiln.build(te.create_schedule(b.op), [a, b], "llvm", name="addone")


def _null(name):
    return {"op": "null", "name": name, "inputs": []}


def _kernel(name, inputs):
    return {"op": "tvm_op", "name": name, "inputs": [[n, 0, 0] for n in inputs],
            "attrs": {"func_name": "addone", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}}


def chain_graph(length=3, storage=None):
    """x -> addone -> addone ... with the given storage ids (default: two alternating buffers)."""
    nodes = [_null("x")] + [_kernel(f"k{i}", [i]) for i in range(length)]
    storage = storage or [0] + [1 + (i % 2) for i in range(length)]
    return json.dumps({
        "nodes": nodes, "arg_nodes": [0], "heads": [[length, 0, 0]],
        "attrs": {"dltype": ["list_str", ["float32"] * (length + 1)], "storage_id": ["list_int", storage],
                  "shape": ["list_shape", [[2, 3]] * (length + 1)]},
        "node_row_ptr": list(range(length + 2)),
    })


def test_run_chain_with_shared_storage(addone):
    m = GraphExecutor(chain_graph(3), addone, kiln.cpu(0))
    x = np.arange(6, dtype="float32").reshape(2, 3)
    m.set_input("x", x)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), x + 3)
    assert np.shares_memory(m.data[1], m.data[3]) and not np.shares_memory(m.data[1], m.data[2])
    assert m.get_num_inputs() == 1 and m.get_num_outputs() == 1
    assert all(d.ctypes.data % 64 == 0 for d in m.data)


def test_set_input_checks_and_forms(addone):
    m = GraphExecutor(chain_graph(1), addone)
    x = np.ones((2, 3), "float32")
    m.set_input(0, kiln.nd.array(x))
    m.set_input("x", [[1, 2, 3], [4, 5, 6]])  # Python lists take the input's dtype
    np.testing.assert_array_equal(m.get_input("x").numpy(), [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(RuntimeArgumentError, match="'x'.*shape \\(2, 3\\) and dtype float32.*shape \\(3, 2\\)"):
        m.set_input("x", np.ones((3, 2), "float32"))
    with pytest.raises(RuntimeArgumentError, match="'x'.*dtype float64"):
        m.set_input("x", np.ones((2, 3)))
    with pytest.raises(KilnError, match="no input named 'y'; inputs: x"):
        m.set_input("y", x)
    with pytest.raises(KilnError, match="index 3 is out of range"):
        m.set_input(3, x)
    with pytest.raises(RuntimeArgumentError, match="expected an NDArray"):
        m.set_input("x", "data")
    assert m.get_input_index("x") == 0 and m.get_input_index("nope") == -1


def test_get_output_copies_and_fills_out(addone):
    m = GraphExecutor(chain_graph(2), addone)
    m.set_input("x", np.zeros((2, 3), "float32"))
    m.run()
    first = m.get_output(0)
    first.handle[...] = 7
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.full((2, 3), 2, "float32"))
    out = kiln.nd.empty((2, 3))
    assert m.get_output(0, out) is out and out.numpy()[0, 0] == 2
    arr = np.empty((2, 3), "float32")
    assert m.get_output(0, arr) is arr and arr[1, 2] == 2
    with pytest.raises(RuntimeArgumentError, match="out has shape \\(3,\\)"):
        m.get_output(0, np.empty(3, "float32"))
    with pytest.raises(KilnError, match="output index 1 is out of range"):
        m.get_output(1)
    view = m.get_input(0)
    view.handle[...] = 5  # get_input shares the executor's storage, as in TVM
    m.run()
    assert m.get_output(0).numpy()[0, 0] == 7


def test_packed_functions(addone):
    m = GraphExecutor(chain_graph(1), addone)
    assert isinstance(m, kiln.runtime.Module) and "set_input" in m.list_functions()
    m["set_input"](0, np.full((2, 3), 1, "float32"))
    m["run"]()
    assert m["get_output"](0).numpy()[0, 0] == 2
    assert m["get_num_outputs"]() == 1 and m["get_num_inputs"]() == 1
    assert m["addone"] is not None  # the library is imported
    shapes, dtypes = m["get_input_info"]()
    assert shapes == {"x": (2, 3)} and dtypes == {"x": "float32"}


def test_bad_graphs(addone):
    graph = json.loads(chain_graph(1))
    del graph["heads"]
    with pytest.raises(KilnError, match="no 'heads'"):
        GraphExecutor(json.dumps(graph), addone)
    graph = json.loads(chain_graph(1))
    graph["attrs"]["shape"][1].pop()
    with pytest.raises(KilnError, match="'shape' has 1 entries, the graph has 2"):
        GraphExecutor(json.dumps(graph), addone)
    with pytest.raises(KilnError, match="not valid JSON"):
        GraphExecutor("{nodes", addone)
    graph = json.loads(chain_graph(1))
    graph["nodes"][1]["attrs"]["func_name"] = "missing"
    with pytest.raises(KilnError, match="no function 'missing'"):
        GraphExecutor(json.dumps(graph), addone)
    with pytest.raises(KilnError, match="no library was given"):
        GraphExecutor(chain_graph(1), None)


def test_param_dict_round_trip_every_dtype():
    params = {
        "f32": np.arange(6, dtype="float32").reshape(2, 3), "f16": np.array([1.5, -2], "float16"),
        "f64": np.array(3.25), "i8": np.array([-3, 4], "int8"), "u8": np.array([255], "uint8"),
        "i64": np.arange(4, dtype="int64").reshape(1, 2, 2), "b": np.array([True, False]),
        "nd": kiln.nd.array(np.ones((0, 3), "float32")),
    }
    loaded = load_param_dict(save_param_dict(params))
    assert list(loaded) == list(params)
    for name, value in params.items():
        want = value.numpy() if isinstance(value, kiln.nd.NDArray) else value
        got = loaded[name].numpy()
        assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)


def test_param_dict_is_tvms_binary_format():
    blob = save_param_dict({"w": np.array([1.0, 2.0], "float32")})
    expected = (struct.pack("<QQQ", 0xF7E58D4F05049CB7, 0, 1) + struct.pack("<Q", 1) + b"w" + struct.pack("<Q", 1)
                + struct.pack("<QQiii", 0xDD5E40F096B4A13F, 0, 1, 0, 1) + struct.pack("<BBH", 2, 32, 1)
                + struct.pack("<qq", 2, 8) + np.array([1.0, 2.0], "<f4").tobytes())
    assert blob == expected
    assert kiln.relay.save_param_dict is save_param_dict and kiln.relay.load_param_dict is load_param_dict


def test_param_dict_errors():
    with pytest.raises(KilnError, match="bad magic"):
        load_param_dict(b"\0" * 24)
    with pytest.raises(KilnError, match="ends early"):
        load_param_dict(save_param_dict({"w": np.ones(4, "float32")})[:-3])
    with pytest.raises(KilnError, match="takes bytes"):
        load_param_dict("text")
    with pytest.raises(KilnError, match="names must be str"):
        save_param_dict({1: np.ones(2)})
    with pytest.raises(KilnError, match="dtype complex64"):
        save_param_dict({"c": np.ones(2, "complex64")})


def test_load_params_marks_parameters(addone):
    m = GraphExecutor(chain_graph(1), addone)
    m.load_params(save_param_dict({"x": np.full((2, 3), 4, "float32"), "not_an_input": np.ones(1)}))
    m.run()
    assert m.get_output(0).numpy()[0, 0] == 5
    assert m.get_input_info() == ({}, {})  # x is now a parameter


def test_factory_module_serialization_and_export(addone, tmp_path):
    params = {"x": np.full((2, 3), 1, "float32")}
    factory = GraphExecutorFactoryModule(chain_graph(2), addone, params, "net")
    m = factory["net"](kiln.cpu(0))
    m.run()
    assert m.get_output(0).numpy()[0, 0] == 3
    with pytest.raises(KilnError, match="pass the device"):
        factory["net"]()
    loader = kiln.get_global_func("runtime.module.loadbinary_GraphExecutorFactory")
    copy = loader(factory.save_to_bytes())
    assert copy.get_graph_json() == factory.get_graph_json() and copy.module_name == "net"
    assert np.array_equal(copy.get_params()["x"].numpy(), params["x"])
    with pytest.raises(KilnError, match="corrupt"):
        loader(b"garbage!" * 3)
    path = factory.export_library(tmp_path / "model.so")
    loaded = kiln.runtime.load_module(path)
    assert isinstance(loaded, GraphExecutorFactoryModule) and loaded.get_lib().list_functions() == ["addone"]
    m2 = loaded["net"](kiln.device("llvm", 0))
    m2.run()
    assert m2.get_output(0).numpy()[1, 1] == 3


def test_kernel_errors_name_the_kernel(addone):
    graph = json.loads(chain_graph(1))
    graph["attrs"]["shape"][1] = [[2, 3], [3, 2]]  # the kernel's output entry has the wrong shape
    m = GraphExecutor(json.dumps(graph), addone)
    m.set_input(0, np.zeros((2, 3), "float32"))
    with pytest.raises(RuntimeArgumentError, match="addone"):
        m.run()


def test_factory_create_takes_name_array_pairs(addone):
    create = kiln.get_global_func("tvm.graph_executor_factory.create")
    x = np.full((2, 3), 1, "float32")
    factory = create(chain_graph(2), addone, "net", "x", x)
    assert np.array_equal(factory.get_params()["x"].numpy(), x)
    with pytest.raises(KilnError, match="name, array pairs; got 3 values"):
        create(chain_graph(2), addone, "net", "x", x, "y")


def test_run_with_unset_inputs_names_them(addone):
    # TVM runs on whatever the storage holds; kiln refuses, naming the inputs
    m = GraphExecutor(chain_graph(2), addone, kiln.cpu(0))
    with pytest.raises(KilnError, match="run: input 'x' was never set"):
        m.run()
    with pytest.raises(KilnError, match="profile: input 'x' was never set"):
        m.require_inputs("profile")
    m.set_input("x", np.zeros((2, 3), "float32"))
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.full((2, 3), 2.0, "float32"))


def test_an_input_nothing_reads_may_stay_unset():
    """A parameter the function ignores (TVM's ``fn (%x) { () }``) cannot reach a result, so run() does not ask for
    it; the inputs the kernels read are still required."""
    from kiln import relay

    x, y = relay.var("x", shape=(16,)), relay.var("y", shape=(4,))
    lib = relay.build(kiln.IRModule.from_expr(relay.Function([x], relay.Tuple([]))), "llvm")
    kiln.contrib.graph_executor.GraphModule(lib["default"](kiln.cpu(0))).run()
    lib = relay.build(kiln.IRModule.from_expr(relay.Function([x, y], relay.exp(y))), "llvm")
    m = kiln.contrib.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    with pytest.raises(KilnError, match="run: input 'y' was never set"):
        m.run()
    m.set_input("y", np.zeros(4, "float32"))
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.ones(4, "float32"))
