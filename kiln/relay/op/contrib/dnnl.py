"""Which Relay operators the DNNL (oneDNN) external code generator takes: each listed operator's
``target.dnnl`` attribute accepts a call unless an argument is int64 or, for pooling, ``ceil_mode`` is set (oneDNN
has neither), and its pattern table, the fused operations oneDNN computes as one primitive (for
``MergeComposite``). kiln ships no DNNL code generator (``relay.ext.dnnl`` is not registered), so these rules only
decide what ``AnnotateTarget("dnnl")`` and ``MergeComposite`` mark; a partitioned DNNL function cannot be built here.
"""

from ....error import KilnError
from ....ir.op import Op, has_op, register_op_attr
from ...expr import Call
from .register import defer_pattern_table

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


# -- the fused operations oneDNN computes as one primitive (MergeComposite patterns, TVM's dnnl.pattern_table) --
SUPPORTED_POST_ELTWISE = ("nn.relu", "tanh", "sigmoid", "clip", "gelu", "swish", "mish", None)


def append_eltwise_ops(op, eltwise):
    """``op`` followed by the element-wise post-operation ``eltwise`` (gelu, swish and mish as their formulas)."""
    from ...dataflow_pattern import is_op, wildcard

    if eltwise == "gelu":
        erf = is_op("add")(is_op("erf")(is_op("divide")(op, wildcard())), wildcard())
        return is_op("multiply")(is_op("multiply")(op, erf), wildcard())
    if eltwise == "swish":
        return is_op("multiply")(op, is_op("sigmoid")(op))
    if eltwise == "mish":
        softplus = is_op("log")(is_op("add")(is_op("exp")(op), wildcard()))
        return is_op("multiply")(op, is_op("tanh")(softplus))
    return is_op(eltwise)(op) if eltwise else op


def _check_post_eltwise(eltwise):
    if eltwise not in SUPPORTED_POST_ELTWISE:
        raise KilnError(f"DNNL: unsupported element-wise post-operation {eltwise!r}; supported: "
                        f"{[e for e in SUPPORTED_POST_ELTWISE if e]}")


def make_conv_pattern(conv_name, with_bias=True, with_eltwise=None):
    """``conv_name(data, weight)`` [+ bias] [then ``with_eltwise``]."""
    from ...dataflow_pattern import is_op, wildcard

    _check_post_eltwise(with_eltwise)
    out = is_op(conv_name)(wildcard(), wildcard())
    if with_bias:
        out = is_op("add")(out, wildcard())
    return append_eltwise_ops(out, with_eltwise)


def make_dense_pattern(with_bias=True, with_eltwise=None):
    """``nn.dense(data, weight)`` [+ bias] [then ``with_eltwise``]."""
    return make_conv_pattern("nn.dense", with_bias, with_eltwise)


def make_conv_bias_sum_relu_pattern(conv_type, has_relu=True):
    """``conv(data, weight) + bias + other`` [then relu]: a convolution summed into another tensor."""
    from ...dataflow_pattern import is_op, wildcard

    out = is_op("add")(is_op("add")(is_op(conv_type)(wildcard(), wildcard()), wildcard()), wildcard())
    return is_op("nn.relu")(out) if has_relu else out


def make_dense_bias_sum_pattern():
    """``("dnnl.dense_bias_sum", dense(data, weight) + bias + other)``."""
    from ...dataflow_pattern import is_op, wildcard

    out = is_op("add")(is_op("add")(is_op("nn.dense")(wildcard(), wildcard()), wildcard()), wildcard())
    return "dnnl.dense_bias_sum", out


def _shape(expr):
    return tuple(int(d) for d in expr.checked_type.shape)


def add_checker(attrs, args, op_name):
    """Whether an ``add`` is what the pattern means: a ``"sum"`` of two tensors of one shape, or a ``"bias_add"``
    of one value per output channel of a 2-D convolution."""
    if op_name == "sum":
        first = args[0]
        if not (isinstance(first, Call) and isinstance(first.op, Op) and first.op.name == "add"):
            return False
        return _shape(args[0]) == _shape(args[1])
    if op_name == "bias_add":
        first = args[0]
        if attrs is None or not (isinstance(first, Call) and isinstance(first.op, Op) and first.op.name == "nn.conv2d"):
            return False
        channels = getattr(attrs, "channels", None)
        size = 1
        for d in _shape(args[1]):
            size *= d
        return channels is not None and int(channels) == size
    return True


def _strip_relu(expr):
    return expr.args[0] if isinstance(expr.op, Op) and expr.op.name == "nn.relu" else expr


def make_sum_pattern_predicate(checker):
    """The check of a conv + bias + sum match: the sum and the bias add are what they seem."""

    def predicate(expr):
        expr = _strip_relu(expr)
        for e, what in ((expr, "sum"), (expr.args[0], "bias_add")):
            if not checker(getattr(e.args[0], "attrs", None), e.args, what):
                return False
        return True

    return predicate


def make_bias_add_pattern_predicate(checker):
    """The check of a conv + bias match: the add is a per-channel bias."""

    def predicate(expr):
        expr = _strip_relu(expr)
        if isinstance(expr.op, Op) and expr.op.name == "add":
            return checker(getattr(expr.args[0], "attrs", None), expr.args, "bias_add")
        return True

    return predicate


def make_dnnl_pattern(op_name, with_bias, with_eltwise):
    """``(name, pattern[, check])`` for ``op_name`` with an optional bias and post-operation, named as TVM's
    (``dnnl.conv2d_bias_relu``, ``dnnl.deconv2d_sigmoid``, ``dnnl.dense_bias``)."""
    name = op_name.replace("nn", "dnnl")
    if "_transpose" in op_name:
        name = "dnnl.deconv" + op_name.split("_")[0][-2:]
    name += "_bias" if with_bias else ""
    name += ("_" + with_eltwise.split(".")[-1]) if with_eltwise else ""
    if "conv" in op_name:
        return name, make_conv_pattern(op_name, with_bias, with_eltwise), \
            make_bias_add_pattern_predicate(add_checker)
    if op_name == "nn.dense":
        return name, make_dense_pattern(with_bias, with_eltwise)
    raise KilnError(f"DNNL patterns exist for convolutions and nn.dense, not {op_name}")


def pattern_table():
    """The DNNL pattern table (floating-point operations; the quantized qnn patterns are not included)."""
    table = [
        make_dense_bias_sum_pattern(),
        ("dnnl.conv2d_bias_sum_relu", make_conv_bias_sum_relu_pattern("nn.conv2d"),
         make_sum_pattern_predicate(add_checker)),
        ("dnnl.conv2d_bias_sum", make_conv_bias_sum_relu_pattern("nn.conv2d", False),
         make_sum_pattern_predicate(add_checker)),
    ]
    for with_bias in (True, False):
        for elt in SUPPORTED_POST_ELTWISE:
            if not with_bias and not elt:
                continue
            for conv in ("nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv2d_transpose", "nn.conv3d_transpose"):
                table.append(make_dnnl_pattern(conv, with_bias, elt))
            table.append(make_dnnl_pattern("nn.dense", with_bias, elt))
    return table


defer_pattern_table("dnnl", pattern_table)
