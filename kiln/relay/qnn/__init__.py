"""kiln.relay.qnn: quantized operators (TVM's ``relay.qnn``): ``relay.qnn.op.quantize`` and the others of
:mod:`.op`, also reachable as ``relay.qnn.quantize`` (TVM re-exports them here)."""

from . import op, transform
from .op import *  # noqa: F403  (TVM's relay.qnn holds the operators too)
from .op import __all__ as _ops

__all__ = ["op", "transform", *_ops]
