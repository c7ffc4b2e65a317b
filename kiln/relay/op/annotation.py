"""Annotation operators (TVM's ``relay.annotation``): ``annotation.checkpoint``.

``checkpoint(data)`` is the identity on values. It marks ``data`` as a point where reverse-mode AD may recompute
the forward computation instead of keeping it; kiln's AD keeps every forward value, so to ``gradient`` it is the
identity too (its gradient passes ``grad`` through). It is opaque to fusion, so it stays visible in compiled code.
"""

from .op import OpPattern, make_call, register_relay_op
from .type_relations import identity_rel

register_relay_op("annotation.checkpoint", 1, identity_rel, OpPattern.OPAQUE)


def checkpoint(data):
    """Mark ``data`` (a tensor) as a checkpoint for automatic differentiation; the value is ``data`` itself."""
    return make_call("annotation.checkpoint", [data])


__all__ = ["checkpoint"]
