"""``relay.build_module`` at TVM's module path: ``build``, ``optimize``, ``bind_params_by_name``,
``create_executor`` and the ``GraphExecutor`` executor (they live in :mod:`kiln.relay.build` and its neighbours)."""

from ..ir.pass_context import PassContext
from .build import GraphExecutor, build
from .interpreter import create_executor
from .optimize import bind_params_by_name, optimize

__all__ = ["build", "optimize", "bind_params_by_name", "create_executor", "GraphExecutor", "build_config"]


def build_config(opt_level=2, required_pass=None, disabled_pass=None, trace=None):
    """TVM's old name for a :class:`~kiln.ir.transform.PassContext` (``relay.build_config``), which TVM's scripts
    and tests still use: ``with relay.build_config(opt_level=3): lib = relay.build(mod, "llvm")``. ``trace`` (a
    callable TVM called around each pass) is not supported: pass instruments do that."""
    if trace is not None:
        from ..error import KilnError

        raise KilnError("relay.build_config: trace is not supported; use a pass instrument (PassContext(instruments=))")
    return PassContext(opt_level=opt_level, required_pass=required_pass, disabled_pass=disabled_pass)
