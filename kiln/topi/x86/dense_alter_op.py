"""TVM's ``topi.x86.dense_alter_op``: the x86 alteration of ``nn.dense`` under TVM's name.

``_alter_dense_layout(attrs, inputs, tinfos, out_type)`` is what TVM registers as ``dense_alter_layout`` for CPUs: a
product computed packed becomes ``nn.contrib_dense_pack`` of the weight transformed to ``NC{b}n``. kiln builds that
Relay call in ``kiln.relay.op.strategy.x86`` (topi is below Relay) and registers it for the ``"cpu"`` key of the
target-generic :func:`kiln.topi.nn.dense_alter_layout`; this function dispatches to it under the current target.
"""

from ..nn.alter_layout import dense_alter_layout

__all__ = ["_alter_dense_layout"]


def _alter_dense_layout(attrs, inputs, tinfos, out_type):
    """The x86 alteration of a dense call (None without a CPU target; see the module docstring)."""
    return dense_alter_layout(attrs, inputs, tinfos, out_type)
