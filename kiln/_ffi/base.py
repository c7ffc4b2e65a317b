"""``tvm._ffi.base``: where TVM programs find ``TVMError`` (kiln's :class:`kiln.error.KilnError`)."""

from ..error import TVMError

__all__ = ["TVMError"]
