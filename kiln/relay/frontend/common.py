"""Helpers frontends use (TVM's ``relay.frontend.common``): the type, shape or constant value of an expression
while a graph is being converted."""

from ...ir.module import IRModule
from ..analysis import free_vars
from ..expr import Constant
from ..function import Function
from ..interpreter import create_executor
from ..transform.infer_type import infer_type as _infer_type

__all__ = ["infer_type", "infer_shape", "infer_value"]


def infer_type(node, mod=None):
    """``node`` typed (with the global functions of ``mod`` when given)."""
    return _infer_type(node, mod)


def infer_shape(inputs, mod=None):
    """The static shape of ``inputs``, as a tuple of ints."""
    return tuple(infer_type(inputs, mod).checked_type.shape)


def infer_value(input_val, params, mod=None):
    """The value of ``input_val``, an expression of constants and of free variables named in ``params``, computed
    by the reference interpreter (an NDArray)."""
    if isinstance(input_val, Constant):
        return input_val.data
    variables = free_vars(input_val)
    func = Function(variables, input_val)
    if mod is None:
        module = IRModule.from_expr(func)
    else:
        module = mod.shallow_copy()
        module["main"] = func
    return create_executor("debug", mod=module).evaluate()(*[params[v.name_hint] for v in variables])
