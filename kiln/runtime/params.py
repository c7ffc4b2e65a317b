"""Parameter dictionaries in TVM's binary format (``tvm.runtime.save_param_dict`` / ``load_param_dict``).

The layout (little endian), so ``.params`` files move between TVM and kiln:

* ``uint64`` magic ``0xF7E58D4F05049CB7``, ``uint64`` reserved (0);
* the names: ``uint64`` count, then per name ``uint64`` length and its UTF-8 bytes;
* the arrays: ``uint64`` count, then per array TVM's ``NDArray::Save``: ``uint64`` magic ``0xDD5E40F096B4A13F``,
  ``uint64`` reserved, the DLDevice (``int32`` type, ``int32`` id), ``int32`` ndim, the DLDataType (``uint8`` code,
  ``uint8`` bits, ``uint16`` lanes), ``int64`` per dimension, ``int64`` byte size, then the bytes.

Booleans are TVM's ``uint1`` stored one byte per element.
"""

import math
import struct

import numpy as np

from ..error import KilnError
from .ndarray import NDArray
from .ndarray import array as nd_array

__all__ = ["save_param_dict", "load_param_dict"]

LIST_MAGIC = 0xF7E58D4F05049CB7
ARRAY_MAGIC = 0xDD5E40F096B4A13F
_CODES = {"i": 0, "u": 1, "f": 2}
_KINDS = {0: "int", 1: "uint", 2: "float"}


def _dl_type(dtype: np.dtype) -> tuple:
    if dtype == np.bool_:
        return 1, 1
    code = _CODES.get(dtype.kind)
    if code is None:
        raise KilnError(f"save_param_dict: arrays of dtype {dtype} cannot be saved")
    return code, dtype.itemsize * 8


def _np_dtype(code, bits, lanes, name) -> np.dtype:
    if lanes != 1:
        raise KilnError(f"load_param_dict: parameter {name!r} has a vector dtype ({lanes} lanes), which kiln does "
                        f"not load")
    if code == 1 and bits == 1:
        return np.dtype(np.bool_)
    if code not in _KINDS:
        raise KilnError(f"load_param_dict: parameter {name!r} has the unknown DLPack type code {code}")
    try:
        return np.dtype(f"{_KINDS[code]}{bits}")
    except TypeError:
        raise KilnError(f"load_param_dict: parameter {name!r} has the unsupported dtype {_KINDS[code]}{bits}") from None


def _as_array(value, name) -> np.ndarray:
    if isinstance(value, NDArray):
        return value.handle
    try:
        return np.asarray(value)
    except Exception as exc:  # an object numpy cannot convert: report which parameter
        raise KilnError(f"save_param_dict: parameter {name!r} is not an array ({exc})") from exc


def save_param_dict(params) -> bytearray:
    """Serialize ``{name: NDArray or numpy array}`` to a bytearray, as TVM returns it (see the module docstring).

    Examples
    --------
    >>> blob = save_param_dict(lib.get_params())                   # doctest: +SKIP
    >>> open("model.params", "wb").write(blob)                     # doctest: +SKIP
    """
    out = [struct.pack("<QQ", LIST_MAGIC, 0), struct.pack("<Q", len(params))]
    for name in params:
        if not isinstance(name, str):
            raise KilnError(f"save_param_dict: parameter names must be str, got {type(name).__name__}")
        data = name.encode()
        out.append(struct.pack("<Q", len(data)) + data)
    out.append(struct.pack("<Q", len(params)))
    for name, value in params.items():
        arr = _as_array(value, name)
        arr = arr if arr.flags.c_contiguous else arr.copy()  # (ascontiguousarray would make 0-d arrays 1-d)
        code, bits = _dl_type(arr.dtype)
        out.append(struct.pack("<QQiii", ARRAY_MAGIC, 0, 1, 0, arr.ndim))
        out.append(struct.pack("<BBH", code, bits, 1))
        out.append(struct.pack(f"<{arr.ndim}q", *arr.shape))
        payload = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        out.append(struct.pack("<q", len(payload)) + payload)
    return bytearray(b"".join(out))


class _Reader:
    def __init__(self, data):
        self.data = memoryview(data)
        self.pos = 0

    def take(self, fmt):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise KilnError("load_param_dict: the data ends early (truncated or not a parameter dictionary)")
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values

    def raw(self, size):
        if size < 0 or self.pos + size > len(self.data):
            raise KilnError("load_param_dict: the data ends early (truncated or not a parameter dictionary)")
        chunk = bytes(self.data[self.pos:self.pos + size])
        self.pos += size
        return chunk


def load_param_dict(data) -> dict:
    """Read a parameter dictionary written by :func:`save_param_dict` (or by TVM) into ``{name: NDArray}``."""
    if isinstance(data, bytearray | memoryview):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise KilnError(f"load_param_dict takes bytes, got {type(data).__name__}")
    reader = _Reader(data)
    magic, _ = reader.take("<QQ")
    if magic != LIST_MAGIC:
        raise KilnError("load_param_dict: the data is not a parameter dictionary (bad magic number)")
    (count,) = reader.take("<Q")
    names = []
    for k in range(count):
        (size,) = reader.take("<Q")
        try:
            names.append(reader.raw(size).decode())
        except UnicodeDecodeError:
            raise KilnError(f"load_param_dict: the name of parameter #{k} is not UTF-8 text (corrupt data)") from None
    (num_arrays,) = reader.take("<Q")
    if num_arrays != len(names):
        raise KilnError(f"load_param_dict: {len(names)} names but {num_arrays} arrays")
    params = {}
    for name in names:
        magic, _, _, _, ndim = reader.take("<QQiii")
        if magic != ARRAY_MAGIC:
            raise KilnError(f"load_param_dict: parameter {name!r} is not a saved array (bad magic number)")
        code, bits, lanes = reader.take("<BBH")
        if not 0 <= ndim <= 64:
            raise KilnError(f"load_param_dict: parameter {name!r} claims {ndim} dimensions (corrupt data)")
        shape = reader.take(f"<{ndim}q") if ndim else ()
        if any(d < 0 for d in shape):
            raise KilnError(f"load_param_dict: parameter {name!r} has the negative shape {tuple(shape)}")
        (size,) = reader.take("<q")
        dtype = _np_dtype(code, bits, lanes, name)
        expected = math.prod(shape) * dtype.itemsize
        if size != expected:
            raise KilnError(f"load_param_dict: parameter {name!r} of shape {tuple(shape)} and dtype {dtype} holds "
                            f"{size} bytes, expected {expected}")
        arr = np.frombuffer(reader.raw(size), dtype=dtype.newbyteorder("<")).astype(dtype).reshape(shape)
        params[name] = nd_array(arr)
    return params
