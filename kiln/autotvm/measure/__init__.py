"""kiln.autotvm.measure: building and timing candidates (TVM's ``autotvm.measure``)."""

from .local import LocalBuilder, LocalRunner
from .measure import Builder, BuildResult, MeasureErrorNo, MeasureInput, MeasureResult, Runner
from .option import create_measure_batch, measure_option
from .ray_runner import RayRunner

__all__ = ["LocalBuilder", "LocalRunner", "RayRunner", "Builder", "Runner", "BuildResult", "MeasureErrorNo",
           "MeasureInput", "MeasureResult", "create_measure_batch", "measure_option"]
