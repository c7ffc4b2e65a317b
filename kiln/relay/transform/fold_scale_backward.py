"""BackwardFoldScaleAxis: fold a per-channel scale applied to the *output* of conv2d/dense into the weight.

``relu(bias_add(conv2d(x, w), b)) * s`` with a positive constant ``s`` of shape ``(C, 1, 1)`` becomes
``relu(bias_add(conv2d(x, w * s'), b * s))``, ``s'`` being ``s`` laid along the weight's output-channel axis.

Three steps over the dataflow (TVM's ``fold_scale_axis.cc`` does the last two in one recursive transform; here
they are two loops, so long chains need no recursion):

1. Prepare (forward, producers first): an expression used exactly once may receive a
   :class:`~.fold_scale_util.Message` saying on which axes it could absorb a scale: conv2d on its output channels,
   dense on its units; relu/leaky_relu pass their input's message on (now requiring a positive scale); add/subtract
   pass it when the other operand is a per-channel bias or when both operands have the same message; bias_add when
   its axis is the message's. An expression used twice never gets one: scaling it would change the other user.
2. Plan (backward, consumers first): ``multiply(y, const)`` whose ``y`` has a message and whose constant broadcasts
   along the message's axes (and is positive if needed) assigns its scale to ``y`` and disappears; an expression
   with an assigned scale hands it to its operands that have messages, and notes which other operand (a bias) must
   be multiplied by the scale instead.
3. Rewrite (forward): the assigned conv2d/dense multiply their weight; biases noted in step 2 are multiplied;
   absorbed multiplies are replaced by their scaled operand.
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
    expand_bias_to_match_axis,
    match_broadcast_to_left_axes,
    reshape_or_expand_to_match_axis,
    scale_of,
)

PREP = op_table("BackwardFoldScaleAxis preparation")
_register = PREP.register


@_register("nn.conv2d", "nn.conv3d")
def prep_conv2d(call, in_messages):
    """conv2d/conv3d absorb a scale on their output channels (plain or depthwise convolution only)."""
    info = conv_scale_info(call, output=True)
    return Message(info.data_axes, False) if info is not None else None


@_register("nn.dense")
def prep_dense(call, in_messages):
    """dense absorbs a scale on its units (the last axis of its result)."""
    return Message((call.checked_type.ndim - 1,), False)


@_register("nn.relu", "nn.leaky_relu")
def prep_relu(call, in_messages):
    """relu(x) * s == relu(x * s) needs s > 0."""
    return Message(in_messages[0].axes, True) if in_messages[0] is not None else None


@_register("add", "subtract")
def prep_add_sub(call, in_messages):
    """``(x + b) * s == x * s + b * s`` for a per-channel ``b``, or both operands scaled alike."""
    lhs, rhs = (a.checked_type.shape for a in call.args)
    lmsg, rmsg = in_messages
    if lmsg is not None and match_broadcast_to_left_axes(lhs, rhs, lmsg.axes) is not None:
        return lmsg
    if rmsg is not None and match_broadcast_to_left_axes(rhs, lhs, rmsg.axes) is not None:
        return rmsg
    if lmsg is not None and rmsg is not None and lmsg.axes == rmsg.axes and lhs == rhs:
        return Message(lmsg.axes, lmsg.require_positive or rmsg.require_positive)
    return None


@_register("nn.bias_add")
def prep_bias_add(call, in_messages):
    """``bias_add(x, b) * s == bias_add(x * s, b * s)`` when the bias axis is the scaled one."""
    msg = in_messages[0]
    ndim = call.checked_type.ndim
    if msg is not None and len(msg.axes) == 1 and call.attrs.axis % ndim == msg.axes[0]:
        return msg
    return None


def _use_counts(func) -> dict:
    counts: dict = {}

    def count(node):
        for child in expr_children(node):
            counts[child] = counts.get(child, 0) + 1

    post_order_visit(func, count)
    return counts


def backward_prep(func):
    """Step 1: the messages, and the expressions in post-DFS order."""
    order: list[RelayExpr] = []
    post_order_visit(func, order.append)
    uses = _use_counts(func)
    messages: dict = {}
    for node in order:
        if not isinstance(node, Call) or not isinstance(node.op, Op) or uses.get(node, 0) != 1:
            continue
        prep = PREP.get(node.op.name)
        if prep is None:
            continue
        message = prep(node, [messages.get(a) for a in node.args])
        if defined(message):
            messages[node] = message
    return messages, order


class _Plan:
    """Step 2's result: the scale each expression absorbs, the absorbed multiplies and the operands to rescale."""

    def __init__(self):
        self.scale: dict = {}  # expression -> (message, scale vector)
        self.absorbed: dict = {}  # multiply -> index of the operand that replaces it
        self.operand_scale: dict = {}  # call -> {argument index: multiplier expression}


def _plan_multiply(call, messages, plan):
    lhs, rhs = call.args
    for value, other in ((lhs, rhs), (rhs, lhs)):
        msg = messages.get(value)
        if msg is None:
            continue
        # the scale part is not rewritten: it holds no scale chance of its own (as in TVM)
        scale = scale_of(other, other.checked_type, value.checked_type.shape, msg.axes, msg.require_positive)
        if scale is not None and value.checked_type.shape == call.checked_type.shape:
            plan.scale[value] = (msg, scale)
            plan.absorbed[call] = 0 if value is lhs else 1
        return  # as TVM: only the first operand with a message is tried


def _plan_scaled(call, messages, plan):
    msg, scale = plan.scale[call]
    name = call.op.name
    if name in ("nn.relu", "nn.leaky_relu"):
        plan.scale[call.args[0]] = (msg, scale)
    elif name in ("add", "subtract"):
        lhs, rhs = call.args
        lmsg, rmsg = messages.get(lhs), messages.get(rhs)
        if lmsg is not None and rmsg is not None:
            plan.scale[lhs] = plan.scale[rhs] = (msg, scale)
        else:
            scaled, index = (lhs, 1) if lmsg is not None else (rhs, 0)
            plan.scale[scaled] = (msg, scale)
            shape = scaled.checked_type.shape
            plan.operand_scale[call] = {index: reshape_or_expand_to_match_axis(scale, shape, msg.axes)}
    elif name == "nn.bias_add":
        plan.scale[call.args[0]] = (msg, scale)
        plan.operand_scale[call] = {1: scale}


def backward_plan(messages, order) -> _Plan:
    """Step 2: walk consumers before producers, handing each absorbed scale down to its operands."""
    plan = _Plan()
    for node in reversed(order):
        if not isinstance(node, Call) or not isinstance(node.op, Op):
            continue
        if node in plan.scale:
            _plan_scaled(node, messages, plan)
        elif node.op.name == "multiply":
            _plan_multiply(node, messages, plan)
    return plan


class _BackwardRewriter(ExprMutator):
    def __init__(self, plan):
        super().__init__()
        self.plan = plan

    def visit_call(self, call):
        new = super().visit_call(call)
        plan = self.plan
        index = plan.absorbed.get(call)
        if index is not None:
            return new.args[index]
        extra = plan.operand_scale.get(call)
        if extra:
            new = new.with_fields(args=tuple(
                _op.multiply(a, extra[i]) if i in extra else a for i, a in enumerate(new.args)))
        entry = plan.scale.get(call)
        if entry is not None and call.op.name in ("nn.conv2d", "nn.conv3d", "nn.dense"):
            scale = entry[1]
            data, weight = new.args
            wtype = call.args[1].checked_type
            if call.op.name != "nn.dense":
                wscale = conv_weight_scale(scale, conv_scale_info(call, output=True), wtype)
            else:
                wscale = expand_bias_to_match_axis(scale, 2, (0,))
            new = new.with_fields(args=(data, _op.multiply(weight, wscale)))
        return new


def backward_fold_scale_axis(func):
    """Fold output scales into the conv2d/dense producing them in the typed function ``func``.

    Returns ``func`` itself when nothing folds; otherwise an untyped rebuilt function.
    """
    messages, order = backward_prep(func)
    if not messages:
        return func
    plan = backward_plan(messages, order)
    if not plan.absorbed:
        return func
    return _BackwardRewriter(plan).visit(func)
