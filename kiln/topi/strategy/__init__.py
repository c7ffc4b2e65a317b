"""kiln.topi.strategy: how Relay operators lower to tensor expressions and schedules.

Importing this package registers, for every Relay operator (by name, through ``kiln.ir.register_op_attr``):
``FTVMCompute`` (:data:`~kiln.topi.strategy.compute.COMPUTES`), ``FTVMSchedule``
(:func:`~kiln.topi.strategy.x86.fschedule_auto`) and ``FTVMStrategy``
(:data:`~kiln.topi.strategy.x86.STRATEGIES`). LowerTE uses :class:`ScheduleBuilder` for each fused group, or
:func:`select_implementation` per call.
"""

from .base import (
    OpImplementation,
    OpStrategy,
    register_compute,
    register_schedule,
    register_strategy,
    select_implementation,
)
from .builder import ScheduleBuilder
from .compute import COMPUTES, tensors_of
from .x86 import STRATEGIES, fschedule_auto

__all__ = ["OpImplementation", "OpStrategy", "ScheduleBuilder", "select_implementation", "register_compute",
           "register_schedule", "register_strategy", "COMPUTES", "STRATEGIES", "tensors_of", "register_all"]


def register_all():
    """Register ``FTVMCompute``, ``FTVMSchedule`` and ``FTVMStrategy`` of every operator topi implements (once)."""
    from ...ir.op import Op, list_op_names

    known = set(list_op_names())
    for name, fcompute in COMPUTES.items():
        if name in known and Op.get(name).has_attr("FTVMCompute"):
            continue  # registered already (the package was imported before)
        register_compute(name, fcompute)
        register_schedule(name, fschedule_auto)
        register_strategy(name, STRATEGIES[name])


register_all()
