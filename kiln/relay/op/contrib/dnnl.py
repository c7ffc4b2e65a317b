"""Which Relay operators the DNNL (oneDNN) external code generator takes: each listed operator's
``target.dnnl`` attribute accepts a call unless an argument is int64 or, for pooling, ``ceil_mode`` is set (oneDNN
has neither). kiln ships no DNNL code generator (``relay.ext.dnnl`` is not registered), so these rules only decide
what ``AnnotateTarget("dnnl")`` marks; a partitioned DNNL function cannot be built here.
"""

from ....ir.op import has_op, register_op_attr

SUPPORTED_OPS = (
    "nn.batch_norm", "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv2d_transpose", "nn.conv3d_transpose",
    "nn.dense", "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.max_pool3d", "nn.avg_pool3d",
    "abs", "clip", "exp", "log", "sqrt", "round", "nn.relu", "nn.leaky_relu", "tanh", "sigmoid", "nn.softmax",
    "add", "multiply", "nn.layer_norm", "nn.batch_matmul",
)


def _supports(call) -> bool:
    """Whether oneDNN can compute ``call`` (a typed call of one of SUPPORTED_OPS)."""
    for arg in call.args:
        ty = getattr(arg, "checked_type_", None)
        if ty is not None and getattr(ty, "dtype", None) == "int64":
            return False
    if "pool" in call.op.name and bool(getattr(call.attrs, "ceil_mode", False)):
        return False
    return True


for _name in SUPPORTED_OPS:
    if has_op(_name):  # an operator kiln lacks stays unregistered rather than becoming an empty one
        register_op_attr(_name, "target.dnnl", _supports)
