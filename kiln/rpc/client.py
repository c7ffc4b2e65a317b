"""RPC sessions (TVM's ``tvm.rpc.RPCSession``): ``rpc.connect(host, port)`` to a server over TCP, or
``rpc.LocalSession()`` in this process.

A session uploads files to the server's working directory, loads modules from there, makes remote devices
(``remote.cpu(0)``), and calls remote functions: arguments are encoded as :mod:`kiln.rpc.protocol` describes
(remote objects by handle, local arrays by value and copied back when the call changed them), results come back
as values or as stand-ins (:mod:`kiln.rpc.remote`). A session is used by one request at a time (a lock keeps
threads from interleaving requests).

Examples
--------
>>> server = rpc.Server("127.0.0.1")                         # doctest: +SKIP
>>> remote = rpc.connect(server.host, server.port)           # doctest: +SKIP
>>> lib.export_library("/tmp/lib.so"); remote.upload("/tmp/lib.so")   # doctest: +SKIP
>>> f = remote.load_module("lib.so")["addone"]               # doctest: +SKIP
>>> a = kiln.nd.array(np.ones(4, "float32"), remote.cpu())   # doctest: +SKIP
"""

import json
import os
import threading

import numpy as np

from .. import error as _errors
from ..error import KilnError, RPCError
from ..runtime.device import RPC_SESS_MASK, Device, register_rpc_session
from ..runtime.module import BenchmarkResult
from ..runtime.ndarray import NDArray
from ..runtime.packed_func import PackedFunc
from . import protocol
from .endpoint import Endpoint
from .remote import RemoteFunction, RemoteModule, RemoteNDArray, RemoteObject

__all__ = ["RPCSession", "LocalSession", "connect"]

_DEVICE_CODES = {"cpu": 1, "llvm": 1, "c": 1, "cuda": 2, "gpu": 2, "cl": 4, "opencl": 4, "vulkan": 7, "metal": 8,
                 "rocm": 10, "ext_dev": 12, "hexagon": 16, "webgpu": 15}


_REMOTE_ERRORS: dict = {}


def _remote_error(name, message) -> RPCError:
    """The exception for an error raised in the server: an RPCError that is also of the error's kiln class when
    it has one (``except RuntimeArgumentError`` catches a remote one too)."""
    base = getattr(_errors, name, None)
    if isinstance(base, type) and issubclass(base, KilnError) and base is not RPCError:
        if name not in _REMOTE_ERRORS:
            _REMOTE_ERRORS[name] = type(f"Remote{name}", (base, RPCError), {"__module__": __name__})
        return _REMOTE_ERRORS[name](f"remote {name}: {message}")
    return RPCError(f"remote {name}: {message}")


class _SocketTransport:
    def __init__(self, sock, where):
        self.sock, self.where = sock, where

    def request(self, header, blobs):
        if self.sock is None:
            raise RPCError(f"RPC: the session with {self.where} is closed")
        try:
            protocol.send_message(self.sock, header, blobs)
            return protocol.recv_message(self.sock)
        except (ConnectionError, OSError) as exc:
            self.close()
            raise RPCError(f"RPC: the session with {self.where} was closed ({exc}); the server may have ended it "
                           f"(session_timeout) or stopped") from None

    def close(self):
        if self.sock is not None:
            try:
                protocol.send_message(self.sock, {"op": "close"})
            except OSError:
                pass
            self.sock.close()
            self.sock = None


class _LocalTransport:
    """Requests handled by an :class:`Endpoint` in this process, through the same encoding as over a socket
    (headers through JSON, blobs copied), so a local session behaves as a remote one."""

    def __init__(self, endpoint):
        self.endpoint, self.where = endpoint, "this process"

    def request(self, header, blobs):
        if self.endpoint is None:
            raise RPCError("RPC: the local session is closed")
        reply, out = self.endpoint.handle(json.loads(json.dumps(header)), [bytearray(b) for b in blobs])
        return json.loads(json.dumps(reply)), [bytearray(b) for b in out]

    def close(self):
        if self.endpoint is not None:
            self.endpoint.close()
            self.endpoint = None


class RPCSession:
    """A session with an RPC server (made by :func:`connect` or :class:`LocalSession`, not directly)."""

    def __init__(self, transport):
        self._transport = transport
        self._lock = threading.RLock()
        self._pending_free: list = []
        self._remote_funcs: dict = {}
        self._tbl_index = register_rpc_session(self)

    # ------------------------------------------------------------------------------------------ TVM's API
    def get_function(self, name) -> RemoteFunction:
        """The server's global function ``name`` (RPCError when it has none)."""
        return self._request({"op": "get_global", "name": name})[0]

    def device(self, dev_type, dev_id=0) -> Device:
        """The server's device ``dev_type`` (a name such as ``"cpu"`` or a type code), ``dev_id``, as a device of
        this session."""
        if isinstance(dev_type, str):
            key = dev_type.split()[0]
            if key not in _DEVICE_CODES:
                raise KilnError(f"RPC: unknown device {dev_type!r}; known: {', '.join(sorted(_DEVICE_CODES))}")
            dev_type = _DEVICE_CODES[key]
        base = int(dev_type) % RPC_SESS_MASK
        if base not in (1, 12):
            raise KilnError(f"RPC: kiln servers run on CPUs; there is no device of type code {base} "
                            f"({', '.join(n for n, c in _DEVICE_CODES.items() if c == base) or 'unknown'})")
        return Device(base + (self._tbl_index + 1) * RPC_SESS_MASK, int(dev_id))

    def cpu(self, dev_id=0) -> Device:
        """The server's CPU."""
        return self.device("cpu", dev_id)

    def cuda(self, dev_id=0) -> Device:
        """The server's CUDA GPU (kiln servers have none: KilnError)."""
        return self.device("cuda", dev_id)

    def ext_dev(self, dev_id=0) -> Device:
        return self.device("ext_dev", dev_id)

    def upload(self, data, target=None):
        """Copy a local file (a path), or bytes/bytearray saved as ``target``, into the server's working
        directory (as ``target``, by default the file's name)."""
        if isinstance(data, bytes | bytearray | memoryview):
            if not target:
                raise KilnError("RPC upload: give target= (the remote name) when uploading bytes")
            blob = bytes(data)
        else:
            with open(os.fspath(data), "rb") as file:
                blob = file.read()
            target = target or os.path.basename(os.fspath(data))
        self._server_func("upload")(target, blob)

    def download(self, path) -> bytearray:
        """The contents of ``path`` in the server's working directory."""
        return self._server_func("download")(path)

    def remove(self, path):
        """Delete ``path`` (a file or folder) in the server's working directory."""
        self._server_func("remove")(path)

    def listdir(self, path=".") -> str:
        """The names in folder ``path`` of the server's working directory, joined by commas."""
        return self._server_func("listdir")(path)

    def load_module(self, path) -> RemoteModule:
        """Load the uploaded library ``path`` in the server; returns the remote module."""
        return self._server_func("load_module")(path)

    def system_lib(self):
        raise KilnError("RPC: kiln has no system library; upload a library and load_module it")

    def download_linked_module(self, path):
        raise KilnError("RPC: kiln exports linked shared libraries already; download the library itself")

    def close(self):
        """End the session (the server drops its objects and files)."""
        with self._lock:
            self._transport.close()

    def __repr__(self):
        return f"RPCSession({self._transport.where})"

    def _server_func(self, name):
        if name not in self._remote_funcs:
            self._remote_funcs[name] = self.get_function(f"tvm.rpc.server.{name}")
        return self._remote_funcs[name]

    # ------------------------------------------------------------------------------------------ internals
    def _release(self, handle):
        self._pending_free.append(handle)  # list.append is atomic: safe from __del__ in any thread

    def _request(self, header, blobs=(), local_arrays=()) -> tuple:
        """Send a request; returns ``(decoded value, reply header, reply blobs)`` or raises the remote error."""
        with self._lock:
            if self._pending_free:
                header["free"], self._pending_free = self._pending_free, []
            reply, out = self._transport.request(header, list(blobs))
        if not reply.get("ok"):
            raise _remote_error(reply.get("error", "error"), reply.get("message", ""))
        for k, index in reply.get("wb", {}).items():
            target = local_arrays[int(k)]
            np.copyto(target, protocol.array_from_blob(out[index], target.shape, target.dtype))
        return self._decode(reply["value"], out), reply, out

    def _call(self, func, args):
        blobs: list = []
        local: list = []
        encoded = [self._encode(a, blobs, local) for a in args]
        return self._request({"op": "call", "h": func._handle, "args": encoded}, blobs, local)[0]

    def _get_module_function(self, module, name):
        return self._request({"op": "get_function", "h": module._handle, "name": name})[0]

    def _module_info(self, module) -> dict:
        return self._request({"op": "module_info", "h": module._handle})[0]

    def _time(self, module, name, number, repeat, min_repeat_ms, args):
        blobs: list = []
        local: list = []
        encoded = [self._encode(a, blobs, local) for a in args]
        header = {"op": "time", "h": module._handle, "name": name, "number": int(number), "repeat": int(repeat),
                  "min_repeat_ms": float(min_repeat_ms or 0), "args": encoded}
        return self._request(header, blobs, local)[0]

    def array(self, src, device) -> RemoteNDArray:
        """A new remote array on ``device`` holding a copy of numpy array ``src``."""
        header = {"op": "nd_array", "shape": list(src.shape), "dtype": src.dtype.name, "b": 0,
                  "dev": self._device_tree(device)}
        return self._request(header, [protocol.array_blob(src)])[0]

    def empty(self, shape, dtype, device) -> RemoteNDArray:
        """A new remote array of ``shape`` and ``dtype`` on ``device`` (zero-filled)."""
        return self._request({"op": "nd_empty", "shape": list(shape), "dtype": dtype,
                              "dev": self._device_tree(device)})[0]

    def _nd_get(self, arr) -> np.ndarray:
        index, _, out = self._request({"op": "nd_get", "h": arr._handle})
        return protocol.array_from_blob(out[index], arr.shape, arr.dtype).copy()

    def _nd_set(self, arr, src):
        self._request({"op": "nd_set", "h": arr._handle, "b": 0}, [protocol.array_blob(src)])

    def _nd_copy(self, dst, src):
        self._request({"op": "nd_copy", "dst": dst._handle, "src": src._handle})

    def _device_tree(self, device) -> dict:
        if device.is_remote and device._rpc_sess is not self:
            raise KilnError(f"RPC: {device} belongs to another RPC session")
        return {"type": device.device_type % RPC_SESS_MASK, "id": device.device_id}

    def _mine(self, obj):
        if obj._session is not self:
            raise KilnError(f"RPC: {obj!r} belongs to another RPC session")
        return {"t": "ref", "h": obj._handle}

    def _encode(self, value, blobs, local):
        if isinstance(value, RemoteNDArray | RemoteModule | RemoteFunction | RemoteObject):
            return self._mine(value)
        if isinstance(value, Device):
            return {"t": "dev", **self._device_tree(value)}
        if isinstance(value, NDArray | np.ndarray):
            arr = value.handle if isinstance(value, NDArray) else value
            blobs.append(protocol.array_blob(arr))
            local.append(arr)
            return {"t": "nd", "shape": list(arr.shape), "dtype": arr.dtype.name, "b": len(blobs) - 1,
                    "k": len(local) - 1}
        if isinstance(value, PackedFunc) or callable(value):
            raise KilnError("RPC: a local function cannot be passed to the server")
        return protocol.encode_plain(value, blobs, lambda v: self._encode(v, blobs, local))

    def _decode(self, tree, blobs):
        if not isinstance(tree, dict):
            return tree
        tag = tree["t"]
        if tag == "nd_ref":
            dev = Device(tree["dev"]["type"] + (self._tbl_index + 1) * RPC_SESS_MASK, tree["dev"]["id"])
            return RemoteNDArray(self, tree["h"], tree["shape"], tree["dtype"], dev)
        if tag == "mod_ref":
            return RemoteModule(self, tree["h"], tree["type_key"])
        if tag == "fn_ref":
            return RemoteFunction(self, tree["h"], tree["name"])
        if tag == "obj_ref":
            return RemoteObject(self, tree["h"], tree["type"], tree["repr"])
        if tag == "bench":
            return BenchmarkResult(tree["v"])
        if tag == "dev":
            return self.device(tree["type"], tree["id"])
        value = protocol.decode_plain(tree, blobs, lambda t: self._decode(t, blobs))
        if value is None:
            raise RPCError(f"RPC: the server sent a value tagged {tag!r} this client does not know")
        return value

    def __del__(self):
        try:
            self._transport.close()
        except Exception:  # noqa: BLE001  (interpreter shutdown: the socket may already be gone)
            pass


class LocalSession(RPCSession):
    """An RPC session served in this process (TVM's ``rpc.LocalSession``): the same API and encoding as a remote
    session, handy to write code once for local and remote runs and to test it without a server."""

    def __init__(self):
        super().__init__(_LocalTransport(Endpoint()))


def connect(url, port, key="", session_timeout=0, session_constructor_args=None, enable_logging=False):
    """Connect to an RPC server (TVM's ``rpc.connect``).

    Parameters
    ----------
    url : str
        The server's host.
    port : int
        Its port.
    key : str
        Accepted for TVM compatibility (the key a tracker matches; a kiln server serves any).
    session_timeout : float
        Seconds after which the server ends the session (0: never).

    Returns
    -------
    RPCSession

    Raises
    ------
    RPCError
        When no kiln RPC server answers at ``url:port``.
    """
    if session_constructor_args:
        raise KilnError("rpc.connect: session_constructor_args (proxied sessions) are not supported by kiln")
    where = f"{url}:{port}"
    try:
        sock = protocol.connect_socket(url, int(port), timeout=60)
        protocol.send_message(sock, {"op": "hello", "version": protocol.VERSION, "key": key,
                                     "timeout": float(session_timeout or 0)})
        reply, _ = protocol.recv_message(sock)
    except (ConnectionError, OSError) as exc:
        raise RPCError(f"rpc.connect: cannot reach a kiln RPC server at {where} ({exc})") from None
    if not reply.get("ok"):
        sock.close()
        raise RPCError(f"rpc.connect: the server at {where} refused the session: {reply.get('message', '')}")
    return RPCSession(_SocketTransport(sock, where))
