"""``tvm.tir.schedule``'s place: kiln has no TensorIR scheduler; :mod:`.testing` holds TVM's comparison helper."""

from . import testing  # noqa: F401
