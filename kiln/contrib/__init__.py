"""kiln.contrib: user-facing wrappers kept apart from the core, as TVM's ``tvm.contrib`` (``graph_executor``)."""

from . import cudnn, graph_executor  # noqa: F401  (tvm.contrib.cudnn.exists() is read without an import)
