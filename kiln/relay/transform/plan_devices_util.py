"""Helpers of ``PlanDevices``: reading and placing ``on_device`` annotations, and a pre-order walk."""

from ...error import InvalidIRError
from ...ir.expr import GlobalVar
from ...ir.op import Op
from ..expr import Call, Var
from ..function import Function
from ..op.device import on_device

__all__ = ["on_device_props", "maybe_on_device", "optimizable", "preorder"]


def on_device_props(expr):
    """The attributes of ``expr`` when it is an ``on_device`` call, else None."""
    if type(expr) is Call and isinstance(expr.op, Op) and expr.op.name == "on_device":
        return expr.attrs
    return None


def maybe_on_device(body, vd, constrain_result, constrain_body, force=False):
    """``on_device(body, vd, ...)``, except where it says nothing: nothing is known, or ``body`` is an operator, a
    variable, a global or a function (whose devices are tracked otherwise); an annotation of an annotation merges
    the two (TVM's ``MaybeOnDevice``). ``force`` wraps any expression (a projection PlanDevices moved)."""
    if vd.is_fully_unconstrained:
        return body
    if not force and isinstance(body, Op | Var | GlobalVar | Function):
        return body
    inner = on_device_props(body)
    if inner is not None:
        constrain_outer, constrain_inner = constrain_result, inner.constrain_body
        if constrain_outer and constrain_inner and inner.virtual_device != vd:
            raise InvalidIRError("PlanDevices: nested on_device annotations constrain one value to two devices")
        return on_device(body.args[0], vd if (constrain_inner or constrain_outer) else inner.virtual_device,
                         constrain_outer, constrain_inner)
    return on_device(body, vd, constrain_result, constrain_body)


def optimizable(func) -> bool:
    """Whether ``func`` is a Relay function passes may rewrite (not external, extern or marked to skip)."""
    if not isinstance(func, Function):
        return False
    attrs = func.attrs
    return attrs.get("Compiler", None) is None and not attrs.get("Extern", 0) and not attrs.get("SkipOptimization", 0)


def preorder(expr, handle):
    """Call ``handle(node)`` on every node reachable from ``expr`` once, parents before children, children left to
    right; ``handle`` returns the children to walk."""
    seen: set = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if node in seen or isinstance(node, Op):
            continue
        seen.add(node)
        stack.extend(reversed(tuple(handle(node))))
