"""Graph executors and VMs running in an RPC server (graph_executor.create / lib["default"] / VirtualMachine on a
remote device), compared with the same module run here."""

import numpy as np
import pytest

import kiln
from kiln import relay, rpc, runtime
from kiln.contrib import graph_executor
from kiln.error import KilnError
from kiln.relay.testing import mlp


@pytest.fixture(scope="module")
def server():
    srv = rpc.Server("127.0.0.1", port=9500, port_end=9600, process=False, silent=True)
    yield srv
    srv.terminate()


@pytest.fixture(params=["local", "tcp"])
def remote(request, server):
    return rpc.LocalSession() if request.param == "local" else rpc.connect(server.host, server.port)


@pytest.fixture(scope="module")
def mlp_lib(tmp_path_factory):
    mod, params = mlp.get_workload(1)
    lib = relay.build(mod, target="llvm", params=params)
    path = tmp_path_factory.mktemp("rpc") / "mlp.so"
    lib.export_library(str(path))
    return lib, str(path)


def test_graph_executor_in_the_server(remote, mlp_lib):
    lib, path = mlp_lib
    remote.upload(path)
    rlib = remote.load_module("mlp.so")
    dev = remote.cpu()
    data = np.random.default_rng(0).uniform(size=(1, 1, 28, 28)).astype("float32")
    here = graph_executor.GraphModule(lib["default"](kiln.cpu()))
    here.run(data=data)
    want = here.get_output(0).numpy()
    there = graph_executor.GraphModule(rlib["default"](dev))
    there.set_input("data", kiln.nd.array(data, dev))
    there.run()
    out = there.get_output(0)
    assert out.device == dev
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    filled = kiln.nd.empty((1, 10))
    there.get_output(0, filled)  # a local array filled by the remote executor
    np.testing.assert_allclose(filled.numpy(), want, rtol=1e-6)
    assert there.get_num_outputs() == 1 and there.get_input_index("data") == 0
    created = graph_executor.create(lib.get_graph_json(), rlib, dev)  # TVM's form: executor made in the server
    created.set_input("data", data)
    created.set_input(**lib.get_params())
    created.run()
    np.testing.assert_allclose(created.get_output(0).numpy(), want, rtol=1e-6)
    assert there.benchmark(dev, func_name="run", repeat=2, number=1).mean > 0
    assert len(there.benchmark(dev, data=data, repeat=2, number=1, end_to_end=True).results) == 2


def _vm_exec(tmp_path, shape=(3, 2)):
    x = relay.var("x", shape=shape)
    y = relay.var("y", shape=shape)
    func = relay.Function([x, y], relay.Tuple([x + y, x * y]))
    exe = relay.vm.compile(kiln.IRModule.from_expr(func), target="llvm")
    path = tmp_path / "vm.so"
    exe.mod.export_library(str(path))
    return str(path)


def test_vm_in_the_server(remote, tmp_path):
    remote.upload(_vm_exec(tmp_path))
    rexec = remote.load_module("vm.so")
    dev = remote.cpu()
    vm = runtime.vm.VirtualMachine(rexec, dev)
    rng = np.random.default_rng(2)
    x, y = (rng.standard_normal((3, 2)).astype("float32") for _ in range(2))
    total, product = vm.invoke("main", kiln.nd.array(x, dev), y=kiln.nd.array(y, dev))
    np.testing.assert_allclose(total.numpy(), x + y, rtol=1e-6)
    np.testing.assert_allclose(product.numpy(), x * y, rtol=1e-6)
    outs = [kiln.nd.empty((3, 2), "float32", dev) for _ in range(2)]
    vm.invoke_with_outputs("main", input_args={"x": kiln.nd.array(x, dev), "y": kiln.nd.array(y, dev)},
                           output_args=outs)
    np.testing.assert_allclose(outs[1].numpy(), x * y, rtol=1e-6)
    vm.set_one_input("main", "y", kiln.nd.array(x, dev))
    vm.invoke_stateful("main")
    assert vm.get_num_outputs() == 2
    np.testing.assert_allclose(vm.get_output(1).numpy(), x * x, rtol=1e-6)
    assert vm.benchmark(dev, func_name="main", repeat=2, number=1).mean > 0


def test_local_vm_refuses_a_remote_device(remote, tmp_path):
    x = relay.var("x", shape=(2,))
    exe = relay.vm.compile(kiln.IRModule.from_expr(relay.Function([x], x + x)), target="llvm")
    with pytest.raises(KilnError, match="is a device of an RPC session"):
        runtime.vm.VirtualMachine(exe, remote.cpu())
