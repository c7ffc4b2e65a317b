"""The client's stand-ins for objects living in an RPC server: arrays, modules, functions, and anything else.

Each holds its session and the server's handle for the object; when it is garbage collected the handle is queued
and the next request tells the server to drop the object (never from ``__del__`` itself, which may run in the
middle of another request).
"""

import numpy as np

from ..error import KilnError
from ..runtime.device import Device
from ..runtime.module import BenchmarkResult, Module
from ..runtime.ndarray import NDArray
from ..runtime.packed_func import PackedFunc

__all__ = ["RemoteNDArray", "RemoteModule", "RemoteFunction", "RemoteObject"]


def _release(session, handle):
    if session is not None:
        session._release(handle)


class RemoteNDArray(NDArray):
    """An NDArray in an RPC server's memory, on a remote device (``remote.cpu(0)``).

    ``numpy()`` copies it here, ``copyfrom`` copies into it; passed to a remote function it is passed by handle.
    """

    __slots__ = ("_session", "_handle", "_shape", "_dtype")

    def __init__(self, session, handle, shape, dtype, device: Device):
        super().__init__(None, device)
        self._session, self._handle = session, handle
        self._shape, self._dtype = tuple(int(s) for s in shape), str(dtype)

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def dtype(self) -> str:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def handle(self):
        raise KilnError(f"an NDArray on {self.device} lives in the RPC server; .numpy() copies it here")

    def numpy(self) -> np.ndarray:
        """A numpy copy of the remote contents."""
        return self._session._nd_get(self)

    asnumpy = numpy

    def copyfrom(self, source) -> "RemoteNDArray":
        """Copy ``source`` (an NDArray here or in the same session, or array-like) into the remote array."""
        if isinstance(source, RemoteNDArray) and source._session is self._session:
            if source.shape != self.shape:
                raise KilnError(f"copyfrom: shape mismatch, array has {self.shape}, source has {source.shape}")
            self._session._nd_copy(self, source)
            return self
        src = np.asarray(source)
        if tuple(src.shape) != self.shape:
            raise KilnError(f"copyfrom: shape mismatch, array has {self.shape}, source has {tuple(src.shape)}")
        self._session._nd_set(self, src.astype(self._dtype, copy=False))
        return self

    def copyto(self, target) -> NDArray:
        """Copy into ``target`` (an NDArray, or a Device for a new array there)."""
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        from ..runtime.ndarray import array

        return array(self.numpy(), device=target)

    def __array__(self, dtype=None, copy=None):
        data = self.numpy()
        return data if dtype is None else data.astype(dtype)

    def __dlpack__(self, *args, **kwargs):
        raise KilnError("an NDArray in an RPC server cannot be shared through DLPack; .numpy() copies it here")

    def __dlpack_device__(self):
        return (self.device.device_type, self.device.device_id)

    def __repr__(self):
        return f"<kiln.nd.NDArray shape={self.shape}, {self.device}>\n{self.numpy()!r}"

    def __str__(self):
        return str(self.numpy())

    def __del__(self):
        _release(getattr(self, "_session", None), getattr(self, "_handle", None))


class RemoteFunction(PackedFunc):
    """A function of an RPC server; calling it runs it there (arguments and results are sent as
    :mod:`kiln.rpc.protocol` describes)."""

    __slots__ = ("_session", "_handle")

    def __init__(self, session, handle, name=""):
        super().__init__(None, name)
        self._session, self._handle = session, handle

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise KilnError(f"remote function {self.name or '?'}: arguments are passed by position "
                            f"(got keywords {', '.join(kwargs)})")
        return self._session._call(self, args)

    def __repr__(self):
        return f"<RemoteFunction {self.name} of {self._session}>"

    def __del__(self):
        _release(getattr(self, "_session", None), getattr(self, "_handle", None))


class RemoteModule(Module):
    """A runtime module of an RPC server (what ``remote.load_module`` returns; type key ``"rpc"``).

    ``m["f"]`` is a :class:`RemoteFunction`; ``m.time_evaluator`` times in the server.
    """

    type_key = "rpc"

    def __init__(self, session, handle, remote_type_key):
        super().__init__()
        self._session, self._handle = session, handle
        self.remote_type_key = remote_type_key
        self._info = None

    def _module_info(self) -> dict:
        if self._info is None:
            self._info = self._session._module_info(self)
        return self._info

    def get_own_function(self, name):
        return self._session._get_module_function(self, name)

    def own_function_names(self) -> list:
        return list(self._module_info()["functions"])

    @property
    def entry_name(self) -> str:
        return self._module_info()["entry"] or ""

    def import_module(self, module):
        raise KilnError("a remote module's imports live in the server; import modules before uploading them")

    def save_to_bytes(self) -> bytes:
        raise KilnError("a remote module lives in the RPC server; export the module you uploaded instead")

    def export_library(self, file_name, fcompile=None, **kwargs):
        raise KilnError("a remote module lives in the RPC server; export the module you uploaded instead")

    def time_evaluator(self, func_name, dev=None, number=10, repeat=1, min_repeat_ms=0, **kwargs):
        """A function timing ``func_name`` in the server (as :meth:`kiln.runtime.Module.time_evaluator`, the clock
        and the runs on the server's side) and returning a :class:`~kiln.runtime.module.BenchmarkResult`."""
        def evaluate(*args) -> BenchmarkResult:
            return self._session._time(self, func_name, number, repeat, min_repeat_ms, args)

        return evaluate

    def __repr__(self):
        return f"Module(rpc, {self.remote_type_key} in {self._session})"

    def __del__(self):
        _release(getattr(self, "_session", None), getattr(self, "_handle", None))


class RemoteObject:
    """Any other object of an RPC server (a VM closure, say): it can only be passed back to the server."""

    __slots__ = ("_session", "_handle", "type_name", "remote_repr")

    def __init__(self, session, handle, type_name, remote_repr):
        self._session, self._handle = session, handle
        self.type_name, self.remote_repr = type_name, remote_repr

    def __repr__(self):
        return f"<remote {self.type_name}: {self.remote_repr}>"

    def __del__(self):
        _release(getattr(self, "_session", None), getattr(self, "_handle", None))
