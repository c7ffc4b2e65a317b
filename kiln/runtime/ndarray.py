"""NDArray: a tensor on a device, stored in a 64-byte aligned numpy array.

Alignment matters because compiled kernels may use aligned vector loads; every NDArray kiln allocates is aligned.
Exposed to users as ``kiln.nd``.
"""

import numpy as np

from ..error import KilnError
from .device import Device, cpu

ALIGNMENT = 64


def _aligned_empty(shape, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    shape = tuple(int(s) for s in shape)
    count = int(np.prod(shape, dtype=np.int64))
    nbytes = count * dtype.itemsize
    raw = np.empty(nbytes + dtype.itemsize + ALIGNMENT, dtype=np.uint8)
    offset = (-raw.ctypes.data) % ALIGNMENT
    # slice one element more and drop it: numpy gives an empty byte slice the base's address, not the aligned one
    return raw[offset : offset + nbytes + dtype.itemsize].view(dtype)[:count].reshape(shape)


def _numpy_dtype(dtype) -> np.dtype:
    try:
        return np.dtype(dtype)
    except TypeError as exc:
        raise KilnError(f"unknown dtype {dtype!r}") from exc


class NDArray:
    """A dense tensor on a :class:`Device`.

    Build one with :func:`array` or :func:`empty`; read it back with :meth:`numpy`.
    """

    __slots__ = ("_data", "device")

    def __init__(self, data: np.ndarray, device: Device | None = None):
        self._data = data
        self.device = device or cpu(0)

    @property
    def shape(self) -> tuple:
        """The shape as a tuple of ints."""
        return self._data.shape

    @property
    def dtype(self) -> str:
        """The element type name, such as ``"float32"``."""
        return self._data.dtype.name

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    @property
    def handle(self) -> np.ndarray:
        """The underlying numpy array (shares memory; used by executors and generated code)."""
        return self._data

    def numpy(self) -> np.ndarray:
        """Return a numpy copy of the contents."""
        return self._data.copy()

    asnumpy = numpy

    def copyfrom(self, source) -> "NDArray":
        """Copy ``source`` (NDArray or array-like) into this array; shapes must match."""
        src = source.handle if type(source) is NDArray else np.asarray(source)
        if tuple(src.shape) != self.shape:
            raise KilnError(f"copyfrom: shape mismatch, array has {self.shape}, source has {tuple(src.shape)}")
        np.copyto(self._data, src, casting="unsafe")
        return self

    def copyto(self, target) -> "NDArray":
        """Copy into ``target`` (an NDArray, or a Device for a new array)."""
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        return array(self._data, device=target)

    def __dlpack__(self, *args, **kwargs):
        return self._data.__dlpack__(*args, **kwargs)

    def to_dlpack(self):
        """A DLPack capsule sharing this array's memory (TVM's ``NDArray.to_dlpack``), for another framework's
        ``from_dlpack``; a capsule can be consumed once."""
        return self._data.__dlpack__()

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def __repr__(self):
        return f"<kiln.nd.NDArray shape={self.shape}, {self.device}>\n{self._data!r}"

    def __str__(self):
        return str(self._data)


def array(arr, device: Device | None = None, dtype=None) -> NDArray:
    """Copy ``arr`` (numpy array, NDArray or nested lists) into a new aligned NDArray.

    Examples
    --------
    >>> a = array(np.ones((2, 2), "float32"))
    >>> a.shape, a.dtype
    ((2, 2), 'float32')
    """
    src = arr.handle if type(arr) is NDArray else np.asarray(arr)  # a remote array's __array__ fetches it
    if dtype is not None:
        src = src.astype(_numpy_dtype(dtype))
    if device is not None and device.is_remote:
        return _session(device).array(src, device)
    out = _aligned_empty(src.shape, src.dtype)
    np.copyto(out, src)
    return NDArray(out, device)


def empty(shape, dtype="float32", device: Device | None = None) -> NDArray:
    """Return a new uninitialized NDArray of ``shape`` and ``dtype`` (on a remote device: in the server)."""
    if device is not None and device.is_remote:
        return _session(device).empty(tuple(int(s) for s in shape), _numpy_dtype(dtype).name, device)
    return NDArray(_aligned_empty(shape, _numpy_dtype(dtype)), device)


def _session(device):
    session = device._rpc_sess
    if session is None:
        raise KilnError(f"{device}: its RPC session is closed")
    return session


class _Capsule:
    """A bare DLPack capsule (what ``to_dlpack`` functions return) seen through the ``__dlpack__`` protocol numpy
    consumes; kiln's arrays live in host memory, so the tensor is on the CPU."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, *args, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(obj) -> NDArray:
    """Wrap a DLPack capsule, or any object implementing the DLPack protocol (``__dlpack__``), sharing its memory
    (TVM's ``tvm.nd.from_dlpack``). numpy marks the array of a bare (unversioned) capsule read-only: kernels can
    write into it, ``copyfrom`` cannot."""
    if type(obj).__name__ == "PyCapsule":
        obj = _Capsule(obj)
    elif not hasattr(obj, "__dlpack__"):
        raise KilnError(f"nd.from_dlpack: expected a DLPack capsule or an object with __dlpack__, got "
                        f"{type(obj).__name__}")
    return NDArray(np.from_dlpack(obj))
