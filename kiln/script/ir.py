"""``I`` of TVMScript (TVM's ``tvm.script.ir``): ``@I.ir_module`` on a class of ``@T.prim_func`` methods."""

import inspect

from .function import parse_module_class

__all__ = ["ir_module"]


def ir_module(cls=None, *, check_well_formed=True):
    """Parse a class whose methods are ``@T.prim_func`` functions into an IRModule (one global per method).

    Examples
    --------
    >>> @I.ir_module                                                      # doctest: +SKIP
    ... class Module:
    ...     @T.prim_func
    ...     def main(A: T.Buffer((4,), "float32")):
    ...         A[0] = T.float32(1)
    """
    caller = inspect.currentframe().f_back
    caller_locals = dict(caller.f_locals) if caller is not None else {}

    def parse(c):
        if not inspect.isclass(c):
            raise TypeError("@I.ir_module decorates a class")
        return parse_module_class(c, caller_locals)

    return parse if cls is None else parse(cls)
