"""kiln.relay.qnn: quantized operators (TVM's ``relay.qnn``): ``relay.qnn.op.quantize`` and the others of
:mod:`.op`."""

from . import op, transform

__all__ = ["op", "transform"]
