"""TVM's module path ``relay.backend._backend``: the backend functions TVM's tests call directly."""

from .graph_plan_memory import graph_plan_memory as GraphPlanMemory  # noqa: N812  (TVM's name)

__all__ = ["GraphPlanMemory"]
