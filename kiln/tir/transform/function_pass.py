"""``tir.transform.PrimFuncPass`` and ``prim_func_pass``: a pass applied to each ``tir.PrimFunc`` of a module.

As in TVM, the pass function receives each PrimFunc with the module; returning None removes the function.
"""

from ...error import KilnError
from ...ir.function_pass import FunctionLevelPass
from ...ir.transform import make_pass_decorator, pass_decorator_doc
from ..function import PrimFunc


class PrimFuncPass(FunctionLevelPass):
    """A pass over each PrimFunc of a module.

    Built from a function ``(func, mod, ctx) -> func or None`` by :func:`prim_func_pass`, or subclassed with
    ``transform_function``; returning None removes the function.
    """

    function_kind = "tir.PrimFunc"
    may_remove = True

    def applies_to(self, func) -> bool:
        return isinstance(func, PrimFunc)


def pass_options(name, defaults, config) -> dict:
    """``defaults`` updated by ``config``, the dict a pass reads from the PassContext config key ``name``
    (``tir.UnrollLoop``...); an option not in ``defaults`` is an error naming it."""
    options = dict(defaults)
    for key, value in (config or {}).items():
        if key not in defaults:
            raise KilnError(f"{name} config: unknown option {key!r} (options: {', '.join(defaults)})")
        options[key] = value
    return options


prim_func_pass = make_pass_decorator(PrimFuncPass, "transform_function", "prim_func_pass")
prim_func_pass.__name__ = "prim_func_pass"
prim_func_pass.__doc__ = pass_decorator_doc("PrimFunc pass", "(func, mod, ctx) -> func", """\
>>> @tir.transform.prim_func_pass(opt_level=0)   # doctest: +SKIP
... def rename(func, mod, ctx):
...     return func.with_attr("global_symbol", "renamed")""")
