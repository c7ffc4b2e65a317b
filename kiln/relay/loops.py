"""``while_loop`` (TVM's ``relay.loops``): a loop written as a recursive function, which the Relay VM runs.

Examples
--------
>>> i = relay.var("i", shape=(), dtype="int32")
>>> loop = while_loop(lambda i: relay.less(i, relay.const(10)), [i], lambda i: [relay.add(i, relay.const(1))])
>>> relay.Function([i], loop(i))   # doctest: +SKIP
"""

from ..ir.type import TupleType
from ..ir.type_poly import FuncType
from .expr import Let, Tuple, Var, var
from .function import Function
from .scope_builder import ScopeBuilder
from .transform.infer_type import infer_type

__all__ = ["while_loop"]


def while_loop(cond, loop_vars, loop_bodies):
    """A function of the loop variables that, while ``cond(*vars)`` holds, calls itself on ``loop_bodies(*vars)``,
    and returns the variables as a tuple once it does not.

    Parameters
    ----------
    cond : callable
        Loop variables -> a scalar bool expression.
    loop_vars : list of relay.Expr
        The initial values (their types are the loop variables' types).
    loop_bodies : callable
        Loop variables -> the next values, one per variable.

    Returns
    -------
    relay.Expr
        ``let %while_loop = fn (...) {...}; %while_loop``: call it with the initial values.
    """
    fresh = []
    for k, value in enumerate(loop_vars):
        name = value.name_hint if isinstance(value, Var) else f"arg{k}"
        ttype = value.type_annotation if isinstance(value, Var) and value.type_annotation is not None else \
            infer_type(value).checked_type
        fresh.append(var(name, ttype))
    types = tuple(v.type_annotation for v in fresh)
    loop = var("while_loop", FuncType(types, TupleType(types)))  # annotated: the function calls itself
    sb = ScopeBuilder()
    with sb.if_scope(cond(*fresh)):
        sb.ret(loop(*loop_bodies(*fresh)))
    with sb.else_scope():
        sb.ret(Tuple(fresh))
    return Let(loop, Function(fresh, sb.get()), loop)
