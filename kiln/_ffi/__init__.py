"""kiln._ffi: TVM's ``tvm._ffi`` namespace, kept so TVM programs that name it (``tvm._ffi.base.TVMError``,
``tvm._ffi.register_func``) run. kiln has no C boundary; everything here is the Python object of the same name."""

from ..runtime.packed_func import get_global_func, register_func
from . import base

__all__ = ["base", "get_global_func", "register_func"]
