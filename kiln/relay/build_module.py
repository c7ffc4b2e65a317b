"""``relay.build_module`` at TVM's module path: ``build``, ``optimize``, ``bind_params_by_name``,
``create_executor`` and the ``GraphExecutor`` executor (they live in :mod:`kiln.relay.build` and its neighbours)."""

from .build import GraphExecutor, build
from .interpreter import create_executor
from .optimize import bind_params_by_name, optimize

__all__ = ["build", "optimize", "bind_params_by_name", "create_executor", "GraphExecutor"]
