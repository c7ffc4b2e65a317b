"""``tvm.tir.schedule``: the lookups of a TensorIR schedule (:mod:`.schedule`) and TVM's comparison helper
(:mod:`.testing`)."""

from . import testing  # noqa: F401
from .schedule import BlockRV, LoopRV, Schedule, ScheduleError, StmtSRef  # noqa: F401
