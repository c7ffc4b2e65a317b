"""ForwardFoldScaleAxis: fold a per-channel scale applied to the *input* of conv2d/dense into the weight.

``conv2d(relu(x * s + b), w)`` with a positive constant ``s`` of shape ``(C, 1, 1)`` becomes
``conv2d(relu(x + b / s), w * s')``, ``s'`` being ``s`` laid along the weight's input-channel axis; FoldConstant then
folds ``w * s'`` when ``w`` is a constant.

Two phases, as TVM's ``fold_scale_axis.cc``:

1. Prepare (backward over the dataflow): every consumer tells each argument which axes it could absorb a scale on
   (a :class:`~.fold_scale_util.Message`). conv2d asks for its data's channel axes; relu/leaky_relu pass their
   demand on, requiring a positive scale; add/subtract pass it to the operand that the other one (a per-channel
   bias) broadcasts to; every other use asks for nothing. A tensor's message is the intersection over its users,
   so one user that cannot absorb the scale (the function output, an exp, a tuple) blocks the fold.
2. Rewrite (forward): ``multiply(x, const)`` whose message allows it becomes a pending *scaled value*
   ``(x, axes, scale)``; relu and add carry it forward (the bias is divided by the scale); conv2d/dense consume it
   by multiplying their weight. A scaled value reaching anything else is realized as ``x * scale`` again, so the
   rewrite is always correct even where the messages were optimistic.
"""

from ...ir.expr import RelayExpr
from ...ir.op import Op
from ...ir.registry import op_table
from .. import op as _op
from ..expr import Call
from ..expr_functor import ExprMutator, expr_children, post_order_visit
from .fold_scale_util import (
    Message,
    conv_scale_info,
    conv_weight_scale,
    defined,
    intersect,
    match_broadcast_to_left_axes,
    reshape_or_expand_to_match_axis,
    scale_of,
)

# ---- phase 1: which axes may carry a scale ------------------------------------------------------------------------
PREP = op_table("ForwardFoldScaleAxis preparation")
REWRITE = op_table("ForwardFoldScaleAxis rewrite")


def _register(table, *names):
    return table.register(*names)


@_register(PREP, "nn.relu", "nn.leaky_relu")
def prep_relu(call, out_message):
    """relu(x * s) == relu(x) * s needs s > 0."""
    return [Message(out_message.axes, True) if out_message is not None else None]


@_register(PREP, "add", "subtract")
def prep_add_sub(call, out_message):
    """A per-channel bias on one side lets the scale through the other: ``x * s + b == (x + b / s) * s``."""
    if out_message is not None:
        lhs, rhs = (a.checked_type.shape for a in call.args)
        if match_broadcast_to_left_axes(lhs, rhs, out_message.axes) is not None:
            return [out_message, None]
        if match_broadcast_to_left_axes(rhs, lhs, out_message.axes) is not None:
            return [None, out_message]
    return [None, None]


@_register(PREP, "nn.conv2d", "nn.conv3d")
def prep_conv2d(call, out_message):
    """conv2d/conv3d absorb a scale on their data's channel axes (plain or depthwise convolution only)."""
    info = conv_scale_info(call, output=False)
    return [Message(info.data_axes, False) if info is not None else None, None]


@_register(PREP, "nn.dense")
def prep_dense(call, out_message):
    """dense absorbs a scale on the reduction (last) axis of its data."""
    return [Message((call.args[0].checked_type.ndim - 1,), False), None]


def forward_prep(func) -> dict:
    """Phase 1: the message of every expression of ``func`` (absent: no scaling possible)."""
    order: list[RelayExpr] = []
    post_order_visit(func, order.append)
    messages: dict = {}

    def update(node, message):
        messages[node] = intersect(messages[node], message) if node in messages else message

    update(func, None)
    for node in reversed(order):  # consumers before producers
        op = node.op if isinstance(node, Call) else None
        if isinstance(node, Call) and isinstance(op, Op):
            prep = PREP.get(op.name)
            in_messages = prep(node, messages.get(node)) if prep is not None else [None] * len(node.args)
            for arg, message in zip(node.args, in_messages, strict=True):
                update(arg, message)
            continue
        for child in expr_children(node):
            update(child, None)
    return messages


# ---- phase 2: rewrite ------------------------------------------------------------------------------------------
class _Scaled:
    """A value pending a scale: the original tensor is ``value`` times ``scale`` along ``axes``."""

    __slots__ = ("axes", "scale", "shape", "value")

    def __init__(self, value, axes, scale, shape):
        self.value, self.axes, self.scale, self.shape = value, axes, scale, shape


@_register(REWRITE, "multiply")
def rewrite_multiply(call, args, message):
    """``x * s`` becomes the scaled value ``(x, axes, s)`` when the consumers asked for it (``s`` a positive
    constant when a relu is on the way)."""
    if not defined(message) or any(isinstance(a, _Scaled) for a in args):
        return None
    shapes = [a.checked_type.shape for a in call.args]
    for value, scale_arg, value_shape in ((0, 1, shapes[0]), (1, 0, shapes[1])):
        if value_shape != call.checked_type.shape:
            continue
        scale = scale_of(args[scale_arg], call.args[scale_arg].checked_type, value_shape, message.axes,
                         message.require_positive)
        if scale is not None:
            return _Scaled(args[value], message.axes, scale, value_shape)
    return None


@_register(REWRITE, "nn.relu", "nn.leaky_relu")
def rewrite_relu(call, args, message):
    """``relu(x * s) -> relu(x) * s`` (s > 0 was checked when the scale was made)."""
    (data,) = args
    if not isinstance(data, _Scaled):
        return None
    return _Scaled(call.with_fields(args=(data.value,)), data.axes, data.scale, data.shape)


@_register(REWRITE, "add", "subtract")
def rewrite_add_sub(call, args, message):
    """``x * s + b -> (x + b / s) * s`` (and the mirror image)."""
    lhs, rhs = args
    if isinstance(lhs, _Scaled) == isinstance(rhs, _Scaled):
        return None
    scaled, other = (lhs, rhs) if isinstance(lhs, _Scaled) else (rhs, lhs)
    other_shape = call.args[1 if scaled is lhs else 0].checked_type.shape
    if match_broadcast_to_left_axes(scaled.shape, other_shape, scaled.axes) is None:
        return None
    divided = _op.divide(other, reshape_or_expand_to_match_axis(scaled.scale, scaled.shape, scaled.axes))
    new_args = (scaled.value, divided) if scaled is lhs else (divided, scaled.value)
    return _Scaled(call.with_fields(args=new_args), scaled.axes, scaled.scale, scaled.shape)


@_register(REWRITE, "nn.conv2d", "nn.conv3d")
def rewrite_conv2d(call, args, message):
    """``conv2d(x * s, w) -> conv2d(x, w * s')`` with ``s`` along the weight's input channels (conv3d alike)."""
    data, weight = args
    if not isinstance(data, _Scaled) or isinstance(weight, _Scaled):
        return None
    info = conv_scale_info(call, output=False)
    wtype = call.args[1].checked_type
    if info is None or data.axes != info.data_axes:
        return None
    new_weight = _op.multiply(weight, conv_weight_scale(data.scale, info, wtype))
    return call.with_fields(args=(data.value, new_weight))


@_register(REWRITE, "nn.dense")
def rewrite_dense(call, args, message):
    """``dense(x * s, w) -> dense(x, w * s)`` (``s`` along the reduction axis, the weight's last)."""
    data, weight = args
    if not isinstance(data, _Scaled) or isinstance(weight, _Scaled) or data.axes != (len(data.shape) - 1,):
        return None
    return call.with_fields(args=(data.value, _op.multiply(weight, data.scale)))


class _ForwardRewriter(ExprMutator):
    """Rebuilds the function; ``visit_scaled`` may return a :class:`_Scaled`, ``visit`` always an expression."""

    def __init__(self, messages):
        super().__init__()
        self.messages = messages
        self.realized: dict = {}

    def visit(self, expr):
        return self.realize(ExprMutator.visit(self, expr))

    def visit_scaled(self, expr):
        return ExprMutator.visit(self, expr)

    def realize(self, value):
        """A scaled value as an expression: ``value * scale`` (only reached when a fold was not possible)."""
        if not isinstance(value, _Scaled):
            return value
        out = self.realized.get(id(value))
        if out is None:
            scale = reshape_or_expand_to_match_axis(value.scale, value.shape, value.axes)
            out = self.realized[id(value)] = (value, _op.multiply(value.value, scale))
        return out[1]

    def visit_call(self, call):
        if not isinstance(call.op, Op):
            return super().visit_call(call)
        args = [self.visit_scaled(a) for a in call.args]
        rule = REWRITE.get(call.op.name)
        if rule is not None:
            out = rule(call, args, self.messages.get(call))
            if out is not None:
                return out
        return call.with_fields(args=tuple(self.realize(a) for a in args))


def forward_fold_scale_axis(func):
    """Fold scales into the conv2d/dense that consume them in the typed function ``func``.

    Returns ``func`` itself when nothing folds; otherwise an untyped rebuilt function.
    """
    messages = forward_prep(func)
    if not any(defined(m) for m in messages.values()):
        return func
    return _ForwardRewriter(messages).visit(func)
