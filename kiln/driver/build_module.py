"""``build`` and ``lower`` of TE schedules and PrimFuncs (TVM's ``tvm.driver.build_module``); they live in
:mod:`kiln.target.build` and :mod:`kiln.te`."""

from ..target.build import build
from ..te import lower

__all__ = ["build", "lower"]
