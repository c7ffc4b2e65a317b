"""Helpers of the data-dependent optimizations."""

from ...error import ArgumentTypeError
from ...ir.module import IRModule
from ...ir.transform import Pass

__all__ = ["_run_opt_pass"]


def _run_opt_pass(expr, opt_pass):
    """``opt_pass`` applied to ``expr`` as the main function of a module; the resulting main function."""
    if not isinstance(opt_pass, Pass):
        raise ArgumentTypeError(f"data_dep_optimization: expected a Pass, got {type(opt_pass).__name__}")
    return opt_pass(IRModule.from_expr(expr))["main"]
