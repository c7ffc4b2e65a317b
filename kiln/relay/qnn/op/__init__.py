"""kiln.relay.qnn.op: the quantized operators (TVM's ``relay.qnn.op``); see :mod:`.qnn`."""

from ...transform import layout_rules_qnn  # noqa: F401  (their layout rules, beside the other operators')
from . import (  # noqa: F401  (the operators, their canonical forms and values)
    canonicalize,
    fake_quantization,  # their rules for FakeQuantizationToInteger
    fake_quantization_ops,
    legalizations,  # their target-specific forms for relay.qnn.transform.Legalize
    qnn,
    reference,
)
from .qnn import (
    BroadcastAttrs,
    DequantizeAttrs,
    QuantizeAttrs,
    RequantizeAttrs,
    abs,
    add,
    avg_pool2d,
    batch_matmul,
    concatenate,
    conv2d,
    conv2d_transpose,
    dense,
    dequantize,
    erf,
    exp,
    hardswish,
    leaky_relu,
    log,
    mul,
    quantize,
    requantize,
    rsqrt,
    sigmoid,
    softmax,
    sqrt,
    subtract,
    tanh,
)
from .requantize_config import RequantizeConfig, current_requantize_config, requantize_config

__all__ = ["quantize", "dequantize", "requantize", "requantize_config", "current_requantize_config",
           "RequantizeConfig", "add", "mul", "dense", "conv2d", "subtract", "concatenate",
           "batch_matmul", "conv2d_transpose", "avg_pool2d", "sqrt", "rsqrt", "exp", "erf", "sigmoid", "tanh", "log",
           "abs", "hardswish", "leaky_relu", "softmax", "QuantizeAttrs",
           "DequantizeAttrs", "RequantizeAttrs", "BroadcastAttrs"]
