"""Calling compiled functions: the DLPack/packed-function ABI in ctypes, and the argument checks of plain functions.

A kiln shared library exports, per function, a C symbol returning an ``int32_t`` status, plus
``KilnGetLastError()``, the message of the last failure. Its metadata (see :mod:`kiln.runtime.module`) says how
each function is called:

* ``"packed"`` (after ``MakePackedAPI``): TVM's ``int32_t f(TVMValue* args, int32_t* type_codes, int32_t num_args,
  TVMValue* ret, int32_t* ret_code, void* resource)``. Arrays travel as ``DLTensor*`` (type code 7), integers as
  int64 (code 0), floats as double (code 2), None as a null handle (code 4). The function checks the number,
  shapes, dtypes and alignment of its arguments itself and reports a mismatch through its status and message.
* ``"plain"``: each buffer's data pointer and each scalar passed directly; the checks are done here in Python
  against the recorded parameter descriptions (symbolic dimensions must agree with the scalar parameters).

Either way a bad call raises :class:`kiln.error.RuntimeArgumentError` naming the function and the argument, and
never reaches memory it should not. A numpy array (rather than an NDArray) that is not C-contiguous or not aligned is
copied into an aligned array for the call and copied back afterwards, so numpy arrays are accepted as they are.
"""

import ctypes
import hashlib
import pathlib
import struct

import numpy as np

from ..error import KilnError, RuntimeArgumentError
from .ndarray import ALIGNMENT, NDArray, _aligned_empty


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
        ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
        ("byte_offset", ctypes.c_uint64),
    ]


class TVMValue(ctypes.Union):
    _fields_ = [("v_int64", ctypes.c_int64), ("v_float64", ctypes.c_double), ("v_handle", ctypes.c_void_p)]


TYPE_CODE_INT, TYPE_CODE_FLOAT, TYPE_CODE_NULL, TYPE_CODE_DLTENSOR = 0, 2, 4, 7
TYPE_CODE_HANDLE, TYPE_CODE_BOOL = 3, 15
_DL_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}
_PACKED_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p,
                              ctypes.c_void_p, ctypes.c_void_p)
_CTYPES = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
    "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double, "handle": ctypes.c_void_p,
}


def _dtype_name(dtype) -> str:
    return "bool" if dtype == np.bool_ else np.dtype(dtype).name


class _ArrayArg:
    """One array argument: the array passed to native code and, for a staged numpy copy, where to copy back."""

    __slots__ = ("array", "original")

    def __init__(self, value):
        arr = value.handle if isinstance(value, NDArray) else value
        self.original = None
        if not isinstance(value, NDArray) and (not arr.flags.c_contiguous or arr.ctypes.data % ALIGNMENT):
            staged = _aligned_empty(arr.shape, arr.dtype)
            np.copyto(staged, arr)
            self.original, arr = arr, staged
        self.array = arr

    def copy_back(self):
        if self.original is not None and self.original.flags.writeable:
            np.copyto(self.original, self.array)


def _is_array(value) -> bool:
    return isinstance(value, NDArray | np.ndarray)


def _describe(value) -> str:
    if _is_array(value):
        return f"an array of shape {tuple(value.shape)} and dtype {value.dtype}"
    return f"a {type(value).__name__}"


def _arg_name(func_name, specs, i) -> str:
    if i < len(specs):
        return f"{func_name}: argument {i} ({specs[i]['name']})"
    return f"{func_name}: argument {i}"


def _returned(ret, code):
    """The value a packed function returned with ``T.ret`` (None when it returned none)."""
    if code == TYPE_CODE_INT:
        return int(ret.v_int64)
    if code == TYPE_CODE_BOOL:
        return bool(ret.v_int64)
    if code == TYPE_CODE_FLOAT:
        return float(ret.v_float64)
    if code == TYPE_CODE_HANDLE:
        return ret.v_handle
    return None


class LibraryFunction:
    """A function of a loaded library, callable with NDArrays, numpy arrays and Python numbers."""

    def __init__(self, library, info):
        self.library = library
        self.name = info["name"]
        self.packed = info.get("calling_conv") == "packed"
        self.params = list(info.get("params", ()))
        symbol = getattr(library.cdll, self.name)
        if self.packed:
            self._fn = ctypes.cast(symbol, _PACKED_FN)
        else:
            symbol.restype = ctypes.c_int32
            symbol.argtypes = [_CTYPES.get(p["dtype"], ctypes.c_void_p) if p["kind"] == "scalar" else ctypes.c_void_p
                               for p in self.params]
            self._fn = symbol

    def __call__(self, *args):
        staged = []
        ret = TVMValue()
        ret_code = ctypes.c_int32(TYPE_CODE_NULL)
        try:
            status = self._call_packed(args, staged, ret, ret_code) if self.packed else \
                self._call_plain(args, staged)
            if status != 0:
                message = self.library.last_error()
                raise RuntimeArgumentError(f"{self.name}: {message}" if self.name not in message else message)
        finally:
            for arg in staged:
                arg.copy_back()
        return _returned(ret, ret_code.value)

    # ---- packed convention
    def _call_packed(self, args, staged, ret, ret_code):
        n = len(args)
        values = (TVMValue * max(n, 1))()
        codes = (ctypes.c_int32 * max(n, 1))()
        keep = []
        for i, value in enumerate(args):
            if _is_array(value):
                arg = _ArrayArg(value)
                staged.append(arg)
                values[i].v_handle = ctypes.addressof(_dltensor(arg.array, keep))
                codes[i] = TYPE_CODE_DLTENSOR
            elif value is None:
                values[i].v_handle = None
                codes[i] = TYPE_CODE_NULL
            elif isinstance(value, bool | int | np.integer):
                values[i].v_int64 = int(value)
                codes[i] = TYPE_CODE_INT
            elif isinstance(value, float | np.floating):
                values[i].v_float64 = float(value)
                codes[i] = TYPE_CODE_FLOAT
            else:
                raise RuntimeArgumentError(
                    f"{_arg_name(self.name, self.params, i)}: cannot pass {_describe(value)} to compiled code "
                    f"(expected an NDArray, a numpy array or a number)")
        return self._fn(values, codes, n, ctypes.byref(ret), ctypes.byref(ret_code), None)

    # ---- plain convention
    def _call_plain(self, args, staged):
        params = self.params
        if len(args) != len(params):
            names = ", ".join(p["name"] for p in params)
            raise RuntimeArgumentError(f"{self.name}: expects {len(params)} arguments ({names}), got {len(args)}")
        bound = {p["name"]: int(a) for p, a in zip(params, args, strict=True) if p["kind"] == "scalar"
                 and isinstance(a, int | np.integer) and not isinstance(a, bool)}
        native = []
        for i, (spec, value) in enumerate(zip(params, args, strict=True)):
            where = _arg_name(self.name, params, i)
            if spec["kind"] == "buffer":
                if not _is_array(value):
                    raise RuntimeArgumentError(f"{where}: expected an array, got {_describe(value)}")
                arg = _ArrayArg(value)
                staged.append(arg)
                _check_buffer(where, spec, arg.array, bound)
                native.append(arg.array.ctypes.data)
            elif spec["kind"] == "scalar":
                if _is_array(value) or not isinstance(value, int | float | bool | np.number):
                    raise RuntimeArgumentError(f"{where}: expected a {spec['dtype']} scalar, got {_describe(value)}")
                native.append(value)
            else:
                native.append(None if value is None else value)
        return self._fn(*native)


def _check_buffer(where, spec, arr, bound):
    if _dtype_name(arr.dtype) != spec["dtype"]:
        raise RuntimeArgumentError(f"{where}: expected dtype {spec['dtype']}, got {_dtype_name(arr.dtype)}")
    shape = spec["shape"]
    if arr.ndim != len(shape):
        raise RuntimeArgumentError(f"{where}: expected {len(shape)} dimensions (shape {tuple(shape)}), "
                                   f"got shape {tuple(arr.shape)}")
    for k, (want, got) in enumerate(zip(shape, arr.shape, strict=True)):
        if isinstance(want, str):
            if want not in bound:
                bound[want] = got
            want = bound[want]
        if want != got:
            raise RuntimeArgumentError(f"{where}: expected shape {tuple(spec['shape'])}, got {tuple(arr.shape)} "
                                       f"(dimension {k} should be {want})")
    if not arr.flags.c_contiguous:
        raise RuntimeArgumentError(f"{where}: the array must be C-contiguous")
    if arr.ctypes.data % spec.get("alignment", 1):
        raise RuntimeArgumentError(f"{where}: data must be aligned to {spec['alignment']} bytes")


_DTYPE_FIELDS: dict = {}  # numpy dtype -> DLDataType (code, bits, lanes)


def _dl_dtype(dtype) -> DLDataType:
    fields = _DTYPE_FIELDS.get(dtype)
    if fields is None:
        code = _DL_CODES.get(dtype.kind)
        if code is None:
            raise RuntimeArgumentError(f"cannot pass an array of dtype {dtype} to compiled code")
        fields = _DTYPE_FIELDS[dtype] = DLDataType(code, dtype.itemsize * 8, 1)
    return fields


_CPU_DEVICE = DLDevice(1, 0)


def _dltensor(arr, keep) -> DLTensor:
    """A DLTensor describing ``arr``; the arrays it points to are appended to ``keep`` (alive during the call)."""
    shape = (ctypes.c_int64 * max(arr.ndim, 1))(*arr.shape)
    keep.append(shape)
    strides = None
    if not arr.flags.c_contiguous:
        strides = (ctypes.c_int64 * max(arr.ndim, 1))(*(s // arr.dtype.itemsize for s in arr.strides))
        keep.append(strides)
        strides = ctypes.addressof(strides)
    tensor = DLTensor(arr.ctypes.data, _CPU_DEVICE, arr.ndim, _dl_dtype(arr.dtype), ctypes.addressof(shape), strides, 0)
    keep.append(tensor)
    return tensor


SEAL_MAGIC = b"KILNSEAL"
_SEAL = struct.Struct("<8sQ32s")  # magic, size of the sealed bytes, their SHA-256


def seal_library(path):
    """Append kiln's seal to the shared library at ``path``: its size and SHA-256 after a magic number (the dynamic
    loader ignores bytes past the ELF segments). :func:`check_seal` then refuses a truncated or altered file before
    ``dlopen`` maps it: a truncated library would crash the process with SIGBUS when its code is first touched."""
    path = pathlib.Path(path)
    data = path.read_bytes()
    with open(path, "ab") as f:
        f.write(_SEAL.pack(SEAL_MAGIC, len(data), hashlib.sha256(data).digest()))


def check_seal(path):
    """Raise KilnError unless the library at ``path`` carries an intact seal (see :func:`seal_library`)."""
    try:
        data = pathlib.Path(path).read_bytes()
    except OSError as exc:
        raise KilnError(f"load_module: cannot read {path} ({exc})") from None
    if len(data) < _SEAL.size or data[-_SEAL.size:][:len(SEAL_MAGIC)] != SEAL_MAGIC:
        raise KilnError(f"load_module: {path} is not a library built by kiln, or it was cut short (no seal at its "
                        f"end)")
    magic, size, digest = _SEAL.unpack(data[-_SEAL.size:])
    if size != len(data) - _SEAL.size or hashlib.sha256(memoryview(data)[:size]).digest() != digest:
        raise KilnError(f"load_module: {path} is damaged: its content does not match its seal ({len(data)} bytes, "
                        f"sealed at {size + _SEAL.size})")


_POOL = []  # the process's thread pool: the pointer the first library loaded handed out


def _share_thread_pool(cdll):
    """Make every kiln library of the process run its parallel loops on one thread pool (the first library's), so
    loading many libraries does not start as many sets of worker threads (:mod:`kiln.target.runtime_helper`)."""
    try:
        make, use = cdll.kiln_thread_pool, cdll.kiln_use_thread_pool
    except AttributeError:  # a library built before the pool existed: it keeps its own parallel runtime
        return
    make.restype, make.argtypes = ctypes.c_void_p, []
    use.restype, use.argtypes = None, [ctypes.c_void_p]
    if _POOL:
        use(_POOL[0])
    else:
        _POOL.append(make())


class SharedLibrary:
    """A loaded kiln shared library: the ctypes handle, its metadata and its functions.

    The file's seal is checked first (:func:`check_seal`), so a damaged library is refused, never mapped."""

    def __init__(self, path):
        self.path = str(path)
        check_seal(self.path)
        try:
            self.cdll = ctypes.CDLL(self.path)
        except OSError as exc:
            raise KilnError(f"load_module: cannot load the shared library {self.path} ({exc})") from exc
        try:
            self._last_error = self.cdll.KilnGetLastError
        except AttributeError:
            raise KilnError(f"load_module: {self.path} is not a library built by kiln (no KilnGetLastError)") from None
        self._last_error.restype = ctypes.c_char_p
        self._last_error.argtypes = []
        _share_thread_pool(self.cdll)

    def read_string(self, symbol):
        """The NUL-terminated string constant ``symbol``, or None when the library does not define it."""
        try:
            address = ctypes.addressof(ctypes.c_char.in_dll(self.cdll, symbol))
        except ValueError:
            return None
        return ctypes.string_at(address).decode()

    def read_blob(self):
        """The bytes between ``__kiln_blob`` and ``__kiln_blob_end`` (empty when absent)."""
        try:
            start = ctypes.addressof(ctypes.c_char.in_dll(self.cdll, "__kiln_blob"))
            end = ctypes.addressof(ctypes.c_char.in_dll(self.cdll, "__kiln_blob_end"))
        except ValueError:
            return b""
        return ctypes.string_at(start, end - start)

    def last_error(self) -> str:
        message = self._last_error()
        return message.decode(errors="replace") if message else "unknown error"
