"""kiln.contrib.debugger: the debug executor (TVM's ``tvm.contrib.debugger``): per-kernel profiles and the output
of any node."""

from . import debug_executor  # noqa: F401
