"""kiln.contrib: user-facing wrappers kept apart from the core, as TVM's ``tvm.contrib`` (``graph_executor``)."""

from . import graph_executor  # noqa: F401
