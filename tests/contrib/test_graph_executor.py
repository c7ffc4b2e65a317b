"""GraphModule (kiln/contrib/graph_executor.py) with TVM's API, and the seed's script as written for TVM, run with
``import kiln as tvm`` on a Relay-built model and on an ONNX model."""

import numpy as np
import pytest

import kiln
import kiln as tvm
from kiln import relay
from kiln.contrib import graph_executor
from kiln.error import KilnError, RuntimeArgumentError

RNG = np.random.default_rng(5)


@pytest.fixture(scope="module")
def two_output_lib():
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(3, 4))
    func = relay.Function([x, w], relay.Tuple([relay.nn.dense(x, w), relay.nn.relu(x)]))
    w_value = RNG.uniform(-1, 1, (3, 4)).astype("float32")
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(func, target="llvm", params={"w": w_value})
    return lib, w_value


def test_set_input_run_get_output(two_output_lib):
    lib, w = two_output_lib
    m = graph_executor.GraphModule(lib["default"](tvm.cpu(0)))
    x = RNG.uniform(-1, 1, (2, 4)).astype("float32")
    m.set_input("x", x)
    m.run()
    assert m.get_num_outputs() == 2 and m.get_num_inputs() == 2  # x and the parameter p0, as TVM counts
    np.testing.assert_allclose(m.get_output(0).numpy(), x @ w.T, rtol=1e-5, atol=1e-6)
    out = tvm.nd.empty((2, 4))
    assert m.get_output(1, out) is out and np.array_equal(out.numpy(), np.maximum(x, 0))
    m.run(x=np.zeros((2, 4), "float32"))  # inputs given to run
    assert not m.get_output(0).numpy().any()
    m.set_input(0, x)  # by index
    np.testing.assert_array_equal(m.get_input(0).numpy(), x)
    np.testing.assert_array_equal(m.get_input("x").numpy(), x)
    assert m.get_input_index("x") == 0 and m.get_input_info() == ({"x": (2, 4)}, {"x": "float32"})
    assert m["get_num_outputs"]() == 2


def test_params_by_keyword_and_load_params(two_output_lib):
    lib, w = two_output_lib
    m = graph_executor.GraphModule(lib["default"](tvm.cpu(0)))
    zero = {"p0": np.zeros((3, 4), "float32"), "not_in_graph": np.ones(2, "float32")}
    m.set_input(x=np.ones((2, 4), "float32"), **zero)  # unknown weight names are skipped, as in TVM
    m.run()
    assert not m.get_output(0).numpy().any()
    m.load_params(relay.save_param_dict(lib.get_params()))
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), np.ones((2, 4)) @ w.T, rtol=1e-5)
    m.load_params(bytearray(relay.save_param_dict({"p0": zero["p0"]})))
    m.run()
    assert not m.get_output(0).numpy().any()


def test_set_input_errors(two_output_lib):
    lib, _ = two_output_lib
    m = graph_executor.GraphModule(lib["default"](tvm.cpu(0)))
    with pytest.raises(RuntimeArgumentError, match="set_input 'x'.*shape \\(2, 4\\).*shape \\(4, 2\\)"):
        m.set_input("x", np.ones((4, 2), "float32"))
    with pytest.raises(RuntimeArgumentError, match="set_input 'x'.*dtype float32.*dtype int64"):
        m.set_input("x", np.ones((2, 4), "int64"))
    with pytest.raises(KilnError, match="no input named 'data'"):
        m.set_input("data", np.ones((2, 4), "float32"))
    with pytest.raises(KilnError, match="run: the graph has no input named 'data'; its inputs are 'x'"):
        m.run(data=np.ones((2, 4), "float32"))  # unlike set_input(**params), run(**inputs) names only inputs
    with pytest.raises(RuntimeArgumentError, match=r"set_input 'x'.*shape \(2, 4\).*shape \(2, 4, 1\)"):
        m.set_input("x", np.ones((2, 4, 1), "float32"))  # a shape of another rank
    with pytest.raises(KilnError, match="no value given for input 'x'"):
        m.set_input("x")
    # found by the bad-input probe: TVM drops a value given without a key; a ragged list raised numpy's ValueError
    with pytest.raises(KilnError, match="a value was given without the input's name or index"):
        m.set_input(None, np.ones((2, 4), "float32"))
    for call in (lambda: m.set_input("x", [[1, 2], [3]]), lambda: m.set_input(x=[[1, 2], [3]]),
                 lambda: m.run(x=[[1, 2], [3]])):
        with pytest.raises(RuntimeArgumentError, match="set_input 'x': the value is not a float32 array"):
            call()
    with pytest.raises(KilnError, match="wraps a graph executor module"):
        graph_executor.GraphModule(lib)  # the factory itself, not lib["default"](dev)
    assert isinstance(graph_executor.GraphModule(lib["default"](tvm.cpu(0))).module, kiln.runtime.Module)


def test_benchmark(two_output_lib):
    lib, _ = two_output_lib
    m = graph_executor.GraphModule(lib["default"](tvm.cpu(0)))
    x = np.ones((2, 4), "float32")
    result = m.benchmark(tvm.cpu(0), repeat=3, number=2, x=x)
    assert isinstance(result, graph_executor.BenchmarkResult) and len(result.results) == 3
    assert 0 < result.min <= result.median <= result.max and result.std >= 0 and result.mean > 0
    assert "mean (ms)" in str(result)
    e2e = m.benchmark(tvm.cpu(0), repeat=2, number=1, end_to_end=True, x=x)
    assert len(e2e.results) == 2 and e2e.mean > 0
    timed = m.benchmark(tvm.cpu(0), repeat=1, number=1, min_repeat_ms=5)
    assert timed.results[0] > 0


def test_create_from_graph_json_and_library(two_output_lib, tmp_path):
    lib, w = two_output_lib
    path = tmp_path / "kernels.so"
    lib.get_lib().export_library(path)
    m = graph_executor.create(lib.get_graph_json(), tvm.runtime.load_module(path), tvm.cpu(0))
    m.set_input(**lib.get_params())
    m.set_input("x", np.ones((2, 4), "float32"))
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), np.ones((2, 4)) @ w.T, rtol=1e-5)


def _onnx_cnn():
    from onnx import TensorProto, helper, numpy_helper

    inits = {"w1": RNG.standard_normal((8, 3, 3, 3)).astype("float32") * 0.3, "b1": RNG.standard_normal(8),
             "fw": RNG.standard_normal((10, 8)), "fb": RNG.standard_normal(10)}
    inits = {k: v.astype("float32") for k, v in inits.items()}
    n = helper.make_node
    nodes = [n("Conv", ["data", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), n("Relu", ["c1"], ["r1"]),
             n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             n("GlobalAveragePool", ["p1"], ["g"]), n("Flatten", ["g"], ["f"]),
             n("Gemm", ["f", "fw", "fb"], ["logits"], transB=1), n("Softmax", ["logits"], ["prob"], axis=1)]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 10])],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _relay_cnn():
    data = relay.var("data", shape=(1, 3, 16, 16))
    w1, b1 = relay.var("w1", shape=(8, 3, 3, 3)), relay.var("b1", shape=(8,))
    y = relay.nn.max_pool2d(relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(data, w1, padding=(1, 1)), b1)),
                            (2, 2), (2, 2))
    y = relay.nn.dense(relay.nn.batch_flatten(relay.nn.global_avg_pool2d(y)), relay.var("fw", shape=(10, 8)))
    func = relay.Function(relay.analysis.free_vars(y), relay.nn.softmax(y))
    params = {p.name_hint: tvm.nd.array(RNG.standard_normal(p.type_annotation.shape).astype("float32"))
              for p in func.params if p.name_hint != "data"}
    return tvm.IRModule.from_expr(func), params


def seed_script(mod, params, tmp_path, x, target="llvm"):
    """The seed's script, line for line as written for TVM (paths under ``tmp_path``)."""
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target, params=params)
    lib.export_library(str(tmp_path / "model.so"))
    with open(tmp_path / "model.params", "wb") as f:
        f.write(relay.save_param_dict(lib.get_params()))
    with open(tmp_path / "model.json", "w") as f:
        f.write(lib.get_graph_json())
    dev = tvm.device(target, 0)
    m = graph_executor.GraphModule(lib["default"](dev))
    m.set_input("data", x)
    m.run()
    out = m.get_output(0).numpy()
    m2 = graph_executor.GraphModule(tvm.runtime.load_module(str(tmp_path / "model.so"))["default"](dev))
    m2.set_input("data", tvm.nd.array(x))
    m2.run()
    return out, m2.get_output(0).numpy()


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_seed_script_with_a_relay_model(tmp_path, target):
    mod, params = _relay_cnn()
    x = RNG.standard_normal((1, 3, 16, 16)).astype("float32")
    out, out2 = seed_script(mod, params, tmp_path, x, target)
    want = relay.create_executor("debug", mod=mod, params=params).evaluate()(x).numpy()
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out2, out)
    loaded = relay.load_param_dict(open(tmp_path / "model.params", "rb").read())
    m3 = graph_executor.create(open(tmp_path / "model.json").read(),
                               tvm.runtime.load_module(tmp_path / "model.so").get_lib(), tvm.cpu(0))
    m3.set_input(**loaded)
    m3.run(data=x)
    np.testing.assert_array_equal(m3.get_output(0).numpy(), out)


def test_seed_script_with_an_onnx_model(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    onnx_model = _onnx_cnn()
    mod, params = relay.frontend.from_onnx(onnx_model, {"data": (1, 3, 16, 16)})
    x = RNG.standard_normal((1, 3, 16, 16)).astype("float32")
    out, out2 = seed_script(mod, params, tmp_path, x)
    want = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"data": x})[0]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out2, out)
