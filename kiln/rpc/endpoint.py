"""The serving side of one RPC session: the objects the client holds handles to, its working directory, and the
requests (:mod:`kiln.rpc.protocol` describes the encoding).

Requests (``"op"`` of a request header):

* ``get_global`` ``name``: a global function (the session's file functions for ``tvm.rpc.server.*``);
* ``call`` ``h``, ``args``: call a function; ``get_function`` ``h``, ``name``: a module's function (None if none);
* ``module_info`` ``h``: a module's type key, function names and entry function;
* ``nd_empty``/``nd_array``: allocate an array (empty, or from a blob); ``nd_get``/``nd_set``/``nd_copy``: read,
  write, copy arrays;
* ``time`` ``h``, ``name``, ``number``, ``repeat``, ``min_repeat_ms``, ``args``: time a module's function here;
* every request may carry ``"free"``: handles the client dropped.

A reply is ``{"ok": true, "value": <tree>, "wb": {k: blob}}`` (``wb``: the arrays sent by value that the call
changed) or ``{"ok": false, "error": <type name>, "message": ...}``.
"""

import os
import pathlib
import shutil
import tempfile

import numpy as np

from ..error import KilnError, RPCError
from ..runtime.device import Device
from ..runtime.module import BenchmarkResult, Module, load_module
from ..runtime.ndarray import NDArray, _aligned_empty
from ..runtime.ndarray import array as nd_array
from ..runtime.packed_func import PackedFunc, get_global_func
from .protocol import array_blob, array_from_blob, decode_plain, encode_plain

__all__ = ["Endpoint"]


class Endpoint:
    """One session's server state (see the module docstring).

    Parameters
    ----------
    workdir : str, optional
        Where uploaded files go; a new temporary directory (removed by :meth:`close`) when None.
    """

    def __init__(self, workdir=None):
        self._objects: dict = {}
        self._next = 1
        self._own_dir = workdir is None
        self.workdir = pathlib.Path(tempfile.mkdtemp(prefix="kiln-rpc-") if workdir is None else workdir)
        self._files = {"tvm.rpc.server.upload": self.upload, "tvm.rpc.server.download": self.download,
                       "tvm.rpc.server.remove": self.remove, "tvm.rpc.server.listdir": self.listdir,
                       "tvm.rpc.server.load_module": self.load_module, "tvm.rpc.server.workpath": self.workpath}

    def close(self):
        """Drop every object of the session and its temporary directory."""
        self._objects.clear()
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # ------------------------------------------------------------------------------------------ the files
    def workpath(self, path) -> str:
        """The absolute path of ``path`` inside the working directory (which it may not leave)."""
        rel = pathlib.PurePosixPath(str(path))
        if rel.is_absolute() or ".." in rel.parts or not str(path):
            raise RPCError(f"RPC: {path!r}: paths are relative to the server's working directory and stay in it")
        return str(self.workdir / rel)

    def upload(self, path, blob):
        target = pathlib.Path(self.workpath(path))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bytes(blob))

    def download(self, path) -> bytearray:
        try:
            return bytearray(pathlib.Path(self.workpath(path)).read_bytes())
        except FileNotFoundError:
            raise RPCError(f"RPC: download: the server has no file {path!r}") from None

    def remove(self, path):
        target = pathlib.Path(self.workpath(path))
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()

    def listdir(self, path) -> str:
        folder = pathlib.Path(self.workpath(path)) if path not in ("", ".") else self.workdir
        return ",".join(sorted(os.listdir(folder)))

    def load_module(self, path) -> Module:
        return load_module(self.workpath(path))

    # ------------------------------------------------------------------------------------------ requests
    def handle(self, header, blobs) -> tuple:
        """The reply ``(header, blobs)`` to a request."""
        for handle in header.get("free", ()):
            self._objects.pop(handle, None)
        op = header.get("op")
        method = getattr(self, f"_op_{op}", None) if isinstance(op, str) else None
        try:
            if method is None:
                raise RPCError(f"RPC: unknown request {op!r}")
            out: list = []
            writeback: dict = {}
            value = method(header, blobs, out, writeback)
            return {"ok": True, "value": value, "wb": writeback}, out
        except Exception as exc:  # noqa: BLE001  (every error goes back to the client, which raises it)
            kind = type(exc).__name__ if isinstance(exc, KilnError) else f"{type(exc).__name__} (in the server)"
            return {"ok": False, "error": kind, "message": str(exc)}, []

    def _op_free(self, header, blobs, out, writeback):
        return None

    def _op_get_global(self, header, blobs, out, writeback):
        name = header["name"]
        func = self._files.get(name) or get_global_func(name, allow_missing=True)
        if func is None:
            raise RPCError(f"RPC: the server has no global function {name!r}")
        return self._encode(func if isinstance(func, PackedFunc) else PackedFunc(func, name), out)

    def _op_call(self, header, blobs, out, writeback):
        func = self._object(header["h"])
        if not callable(func):
            raise RPCError(f"RPC: handle {header['h']} is a {type(func).__name__}, not a function")
        sent: list = []
        args = [self._decode(a, blobs, sent) for a in header["args"]]
        result = func(*args)
        self._write_back(sent, out, writeback)
        return self._encode(result, out)

    def _op_get_function(self, header, blobs, out, writeback):
        module = self._module(header["h"])
        try:
            func = module.get_function(header["name"], header.get("query_imports", True))
        except KilnError:
            return None
        return self._encode(func, out)

    def _op_module_info(self, header, blobs, out, writeback):
        module = self._module(header["h"])
        return self._encode({"type_key": module.type_key, "functions": module.list_functions(),
                             "entry": module.entry_name}, out)

    def _op_nd_empty(self, header, blobs, out, writeback):
        arr = _aligned_empty(tuple(header["shape"]), np.dtype(header["dtype"]))
        arr[...] = 0
        return self._encode(NDArray(arr, self._device(header["dev"])), out)

    def _op_nd_array(self, header, blobs, out, writeback):
        data = array_from_blob(blobs[header["b"]], header["shape"], header["dtype"])
        return self._encode(nd_array(data, device=self._device(header["dev"])), out)

    def _op_nd_get(self, header, blobs, out, writeback):
        out.append(array_blob(self._array(header["h"]).handle))
        return len(out) - 1

    def _op_nd_set(self, header, blobs, out, writeback):
        target = self._array(header["h"])
        target.copyfrom(array_from_blob(blobs[header["b"]], target.shape, target.dtype))

    def _op_nd_copy(self, header, blobs, out, writeback):
        self._array(header["dst"]).copyfrom(self._array(header["src"]))

    def _op_time(self, header, blobs, out, writeback):
        module = self._module(header["h"])
        sent: list = []
        args = [self._decode(a, blobs, sent) for a in header["args"]]
        timer = module.time_evaluator(header["name"], None, number=header["number"], repeat=header["repeat"],
                                      min_repeat_ms=header["min_repeat_ms"])
        return self._encode(timer(*args), out)

    # ------------------------------------------------------------------------------------------ values
    def _object(self, handle):
        try:
            return self._objects[handle]
        except (KeyError, TypeError):
            raise RPCError(f"RPC: no live object has handle {handle!r} in this session") from None

    def _module(self, handle) -> Module:
        module = self._object(handle)
        if not isinstance(module, Module):
            raise RPCError(f"RPC: handle {handle} is a {type(module).__name__}, not a module")
        return module

    def _array(self, handle) -> NDArray:
        arr = self._object(handle)
        if not isinstance(arr, NDArray):
            raise RPCError(f"RPC: handle {handle} is a {type(arr).__name__}, not an NDArray")
        return arr

    @staticmethod
    def _device(tree) -> Device:
        return Device(int(tree["type"]), int(tree["id"]))

    def _keep(self, obj) -> int:
        handle = self._next
        self._next += 1
        self._objects[handle] = obj
        return handle

    def _encode(self, value, out):
        if isinstance(value, np.ndarray):
            value = nd_array(value)
        if isinstance(value, NDArray):
            return {"t": "nd_ref", "h": self._keep(value), "shape": list(value.shape), "dtype": value.dtype,
                    "dev": {"type": value.device.device_type, "id": value.device.device_id}}
        if isinstance(value, Device):
            return {"t": "dev", "type": value.device_type, "id": value.device_id}
        if isinstance(value, Module):
            return {"t": "mod_ref", "h": self._keep(value), "type_key": value.type_key}
        if isinstance(value, PackedFunc):
            return {"t": "fn_ref", "h": self._keep(value), "name": value.name}
        if isinstance(value, BenchmarkResult):
            return {"t": "bench", "v": list(value.results)}
        try:
            return encode_plain(value, out, lambda v: self._encode(v, out))
        except RPCError:  # anything else stays here; the client gets a handle it can pass back
            return {"t": "obj_ref", "h": self._keep(value), "type": type(value).__name__, "repr": repr(value)[:200]}

    def _decode(self, tree, blobs, sent):
        if not isinstance(tree, dict):
            return tree
        tag = tree["t"]
        if tag == "ref":
            return self._object(tree["h"])
        if tag == "dev":
            return self._device(tree)
        if tag == "nd":
            arr = nd_array(array_from_blob(blobs[tree["b"]], tree["shape"], tree["dtype"]))
            sent.append((tree["k"], arr, bytes(blobs[tree["b"]])))
            return arr
        value = decode_plain(tree, blobs, lambda t: self._decode(t, blobs, sent))
        if value is None:
            raise RPCError(f"RPC: a request holds a value tagged {tag!r} the server cannot take")
        return value

    @staticmethod
    def _write_back(sent, out, writeback):
        """Send back the arrays passed by value that the call changed (copy-in, copy-out)."""
        for k, arr, before in sent:
            blob = array_blob(arr.handle)
            if blob.tobytes() != before:
                out.append(blob)
                writeback[str(k)] = len(out) - 1
