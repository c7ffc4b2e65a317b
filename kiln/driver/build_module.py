"""``build``, ``lower`` and ``schedule_to_module`` of TE schedules and PrimFuncs (TVM's
``tvm.driver.build_module``); they live in :mod:`kiln.target.build` and :mod:`kiln.te`."""

from ..target.build import build
from ..te import lower
from ..te.schedule_passes import schedule_to_module

__all__ = ["build", "lower", "schedule_to_module"]
