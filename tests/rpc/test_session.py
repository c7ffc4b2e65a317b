"""kiln.rpc sessions, in this process (LocalSession) and over TCP to a thread server: files, modules, remote
arrays, calls with copy-in/copy-out of local arrays, errors, timing, and the session table behind remote devices."""

import numpy as np
import pytest

import kiln
from kiln import rpc, te
from kiln.error import KilnError, RPCError, RuntimeArgumentError


@pytest.fixture(scope="module")
def addone_so(tmp_path_factory):
    a = te.placeholder((2, 3), name="A")
    b = te.compute((2, 3), lambda i, j: a[i, j] + 1.0, name="B")
    path = tmp_path_factory.mktemp("rpc") / "addone.so"
    kiln.build(te.create_schedule(b.op), [a, b], "llvm", name="addone").export_library(str(path))
    return str(path)


@pytest.fixture(scope="module")
def server():
    srv = rpc.Server("127.0.0.1", port=9300, port_end=9400, process=False, silent=True)
    yield srv
    srv.terminate()


@pytest.fixture(params=["local", "tcp"])
def remote(request, server):
    if request.param == "local":
        return rpc.LocalSession()
    return rpc.connect(server.host, server.port)


def test_files(remote, addone_so, tmp_path):
    remote.upload(addone_so)
    remote.upload(bytearray(b"hello"), target="sub/greeting.txt")
    assert remote.listdir(".") == "addone.so,sub" and remote.listdir("sub") == "greeting.txt"
    assert remote.download("sub/greeting.txt") == bytearray(b"hello")
    remote.remove("sub")
    assert remote.listdir(".") == "addone.so"
    for bad in ("/etc/passwd", "../x"):
        with pytest.raises(RPCError, match="paths are relative to the server's working directory"):
            remote.download(bad)
    with pytest.raises(RPCError, match="no file 'missing'"):
        remote.download("missing")
    with pytest.raises(KilnError, match="give target="):
        remote.upload(b"x")


def test_remote_arrays(remote):
    dev = remote.cpu(0)
    assert dev.is_remote and dev._rpc_sess is remote and str(dev).endswith(":cpu(0)")
    data = np.arange(12, dtype="int16").reshape(3, 4)
    a = kiln.nd.array(data, dev)
    assert isinstance(a, rpc.RemoteNDArray) and (a.shape, a.dtype, a.device) == ((3, 4), "int16", dev)
    np.testing.assert_array_equal(a.numpy(), data)
    b = kiln.nd.empty((3, 4), "int16", dev)
    np.testing.assert_array_equal(b.numpy(), np.zeros((3, 4), "int16"))
    b.copyfrom(a)
    np.testing.assert_array_equal(b.numpy(), data)
    b.copyfrom(data * 2)
    local = a.copyto(kiln.cpu(0))
    assert type(local) is kiln.nd.NDArray and np.array_equal(local.numpy(), data)
    np.testing.assert_array_equal(kiln.nd.empty((3, 4), "int16").copyfrom(b).numpy(), data * 2)
    with pytest.raises(KilnError, match="lives in the RPC server"):
        a.handle
    with pytest.raises(KilnError, match="shape mismatch"):
        b.copyfrom(np.zeros(3))
    with pytest.raises(KilnError, match="kiln servers run on CPUs"):
        remote.cuda(0)


def test_calls_and_copy_back(remote, addone_so):
    remote.upload(addone_so)
    lib = remote.load_module("addone.so")
    assert lib.type_key == "rpc" and lib.remote_type_key == "library" and lib.list_functions() == ["addone"]
    addone = lib["addone"]
    dev = remote.cpu()
    x = np.random.default_rng(1).standard_normal((2, 3)).astype("float32")
    a, b = kiln.nd.array(x, dev), kiln.nd.empty((2, 3), "float32", dev)
    addone(a, b)
    np.testing.assert_allclose(b.numpy(), x + 1)
    out = kiln.nd.empty((2, 3))  # local arrays go by value; what the call wrote comes back
    addone(kiln.nd.array(x), out)
    np.testing.assert_allclose(out.numpy(), x + 1)
    raw = np.zeros((2, 3), "float32")
    addone(b, raw)
    np.testing.assert_allclose(raw, x + 2)
    with pytest.raises(RuntimeArgumentError, match="remote RuntimeArgumentError: addone: expected 2 arguments"):
        addone(a)
    with pytest.raises(RPCError, match="no global function 'no.such'"):
        remote.get_function("no.such")
    with pytest.raises(KilnError, match="has no function 'nope'"):
        lib["nope"]
    with pytest.raises(KilnError, match="local function cannot be passed"):
        addone(print, b)
    result = lib.time_evaluator("addone", dev, number=2, repeat=3)(a, b)
    assert isinstance(result, kiln.runtime.module.BenchmarkResult) and len(result.results) == 3
    assert result.mean > 0


def test_dropped_objects_are_freed_in_the_server(remote):
    dev = remote.cpu()
    arrays = [kiln.nd.array(np.ones(4, "float32"), dev) for _ in range(3)]
    handles = [a._handle for a in arrays]
    del arrays
    remote.listdir(".")  # the next request carries the frees
    with pytest.raises(RPCError, match="no live object has handle"):
        remote._request({"op": "nd_get", "h": handles[0]})


def test_objects_of_another_session_are_refused(remote, addone_so):
    remote.upload(addone_so)
    addone = remote.load_module("addone.so")["addone"]
    other = rpc.LocalSession()
    a = kiln.nd.array(np.ones((2, 3), "float32"), other.cpu())
    with pytest.raises(KilnError, match="belongs to another RPC session"):
        addone(a, kiln.nd.empty((2, 3), "float32", remote.cpu()))
    with pytest.raises(KilnError, match="belongs to another RPC session"):
        remote.empty((2,), "float32", other.cpu())


def test_session_timeout_and_closed_sessions(server):
    import time

    remote = rpc.connect(server.host, server.port, session_timeout=0.5)
    assert remote.listdir(".") == ""
    time.sleep(1.0)
    with pytest.raises(RPCError, match="closed"):
        remote.listdir(".")
    with pytest.raises(RPCError, match="cannot reach a kiln RPC server"):
        rpc.connect("127.0.0.1", 1)


def test_server_in_a_child_process(addone_so):
    srv = rpc.Server("127.0.0.1", port=9400, port_end=9500, silent=True)  # TVM's default: a separate process
    try:
        assert srv.proc is not None and srv.proc.poll() is None
        remote = rpc.connect(srv.host, srv.port, session_timeout=60)
        remote.upload(addone_so)
        dev = remote.cpu()
        a, b = kiln.nd.array(np.full((2, 3), 2, "float32"), dev), kiln.nd.empty((2, 3), "float32", dev)
        remote.load_module("addone.so")["addone"](a, b)
        np.testing.assert_array_equal(b.numpy(), np.full((2, 3), 3, "float32"))
    finally:
        srv.terminate()
    assert srv.proc is None
    with pytest.raises(RPCError, match="closed"):
        b.numpy()
