"""``tir.transform.PrimFuncPass`` and ``prim_func_pass``: a pass applied to each ``tir.PrimFunc`` of a module.

As in TVM, the pass function receives each PrimFunc with the module; returning None removes the function. PrimFuncs
are recognised by their ``type_key`` (``"tir.PrimFunc"``), so this file does not depend on the TIR node classes.
"""

from ...error import KilnError
from ...ir.transform import Pass, PassInfo, make_pass_decorator, same_contents


def is_prim_func(func) -> bool:
    """Whether ``func`` is a ``tir.PrimFunc``."""
    return getattr(type(func), "type_key", "") == "tir.PrimFunc"


class PrimFuncPass(Pass):
    """A pass over each PrimFunc of a module.

    Built from a function ``(func, mod, ctx) -> func or None`` by :func:`prim_func_pass`, or subclassed with
    ``transform_function``.
    """

    _bisects_itself = True

    def __init__(self, pass_func, info):
        if not callable(pass_func):
            raise TypeError(f"PrimFuncPass: pass_func must be callable, not {pass_func!r}")
        if not isinstance(info, PassInfo):
            raise TypeError(f"PrimFuncPass: info must be a PassInfo, not {info!r}")
        self._pass_func = pass_func
        self._info = info

    def transform_function(self, func, mod, ctx):
        """Return the new version of ``func``, or None to remove it from the module."""
        return self._pass_func(func, mod, ctx)

    def _run(self, mod, ctx):
        info = self.info
        work = mod.shallow_copy()
        updates = {}
        for gv, func in mod.functions.items():
            if not is_prim_func(func) or not ctx.bisect_allows(info, f"function ({gv})"):
                continue
            new = self.transform_function(func, work, ctx)
            if new is not None and not is_prim_func(new):
                raise KilnError(f"pass {info.name} returned {type(new).__name__} for {gv}, not a tir.PrimFunc")
            if new is not func:
                updates[gv] = new
        if not updates and same_contents(work, mod):
            return mod
        out = work  # as in TVM, the copy the pass functions saw, with the new functions
        for gv, new in updates.items():
            if new is None:
                out.remove(gv)
            else:
                out[gv] = new
        return out


prim_func_pass = make_pass_decorator(PrimFuncPass, "transform_function", "prim_func_pass")
prim_func_pass.__name__ = "prim_func_pass"
prim_func_pass.__doc__ = """Make a PrimFunc pass from ``(func, mod, ctx) -> func`` or a class with ``transform_function``.

Parameters
----------
pass_func : callable or class, optional
    What to wrap; when omitted, a decorator is returned.
opt_level : int
    Required: the pass runs in a Sequential only when ``opt_level <= PassContext.current().opt_level``.
name : str, optional
    Defaults to the function or class name.
required : list of str, optional
    Passes a Sequential runs before this one.
preserves : list of str or ALL, optional
    Analyses the pass keeps valid (beyond TVM; see :mod:`kiln.ir.analysis`).

Examples
--------
>>> @tir.transform.prim_func_pass(opt_level=0)   # doctest: +SKIP
... def rename(func, mod, ctx):
...     return func.with_attr("global_symbol", "renamed")
"""
