"""Operator strategies (TVM's ``relay/op/strategy``): how each Relay operator lowers to a topi compute and schedule.

:mod:`.generic` adapts every operator's attribute record to its topi compute; :mod:`.x86` picks, per call, the
compute and schedule for a CPU target, and holds the x86 layout hook of ``nn.conv2d``. Importing this package
registers, for every operator with a compute, ``FTVMCompute``, ``FTVMSchedule`` (the schedule of the group's anchor
tag) and ``FTVMStrategy``; ``kiln.relay`` imports it after the operators. LowerTE builds each fused group with
:class:`kiln.relay.backend.schedule_builder.ScheduleBuilder`, which calls :func:`select_implementation` per call.
"""

from ....ir.op import Op

# arm_cpu: the Arm GEMM convolutions over the CPU strategies, and their layout hook; x86_legalize: FTVMLegalize of
# nn.conv2d and nn.dense
from . import arm_cpu, x86_legalize  # noqa: F401
from .base import (
    OpImplementation,
    OpStrategy,
    register_compute,
    register_schedule,
    register_strategy,
    select_implementation,
)
from .generic import COMPUTES, default_strategy, fschedule_by_tag, tensors_of
from .x86 import STRATEGIES, alter_conv2d_layout

__all__ = ["OpImplementation", "OpStrategy", "select_implementation", "register_compute", "register_schedule",
           "register_strategy", "COMPUTES", "STRATEGIES", "default_strategy", "fschedule_by_tag", "tensors_of",
           "alter_conv2d_layout", "register_all"]


def register_all():
    """Register ``FTVMCompute``, ``FTVMSchedule`` and ``FTVMStrategy`` of every operator with a compute (once)."""
    for name, fcompute in COMPUTES.items():
        if Op.get(name).has_attr("FTVMCompute"):
            continue  # registered already (the package was imported before)
        register_compute(name, fcompute)
        register_schedule(name, fschedule_by_tag)
        register_strategy(name, STRATEGIES[name])


register_all()
