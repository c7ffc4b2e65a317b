"""kiln.relay.qnn.op: the quantized operators (TVM's ``relay.qnn.op``); see :mod:`.qnn`."""

from ...transform import layout_rules_qnn  # noqa: F401  (their layout rules, beside the other operators')
from . import (  # noqa: F401  (the operators, their canonical forms and values)
    canonicalize,
    fake_quantization,  # noqa: F401  (their rules for FakeQuantizationToInteger)
    qnn,
    reference,
)
from .qnn import (
    BroadcastAttrs,
    DequantizeAttrs,
    QuantizeAttrs,
    RequantizeAttrs,
    add,
    conv2d,
    dense,
    dequantize,
    mul,
    quantize,
    requantize,
)

__all__ = ["quantize", "dequantize", "requantize", "add", "mul", "dense", "conv2d", "QuantizeAttrs",
           "DequantizeAttrs", "RequantizeAttrs", "BroadcastAttrs"]
