"""The reference interpreter at TVM's module path ``relay.backend.interpreter``: its values (``ConstructorValue``,
``RefValue``, closures) and executors. The interpreter itself is :mod:`kiln.relay.interpreter`."""

from ..evaluator import Closure, ConstructorFunction, ConstructorValue, RefValue
from ..interpreter import Executor, FunctionCallable, Interpreter, create_executor

__all__ = ["Closure", "ConstructorFunction", "ConstructorValue", "Executor", "FunctionCallable", "Interpreter",
           "RefValue", "create_executor"]
