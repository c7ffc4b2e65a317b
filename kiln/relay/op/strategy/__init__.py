"""Relay-level, target-specific operator hooks (TVM's ``relay/op/strategy``).

The compute and schedule strategies of every operator only need topi, so they live in :mod:`kiln.topi.strategy`.
What needs Relay itself lives here: hooks that receive Relay calls and return Relay expressions, such as the x86
``FTVMAlterOpLayout`` of ``nn.conv2d`` (:mod:`.x86`). Importing this package registers them; ``kiln.relay`` does.
"""

from . import x86
from .x86 import alter_conv2d_layout

__all__ = ["x86", "alter_conv2d_layout"]
