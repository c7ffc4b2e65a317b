"""``relay.transform.FunctionPass`` and ``function_pass``: a pass applied to each Relay function of a module.

As in TVM (``src/relay/ir/transform.cc``), the pass function receives each ``relay.Function`` with a shallow copy of
the module, and the new functions replace the old ones once every function was visited. Functions marked
``SkipOptimization``, ``Primitive`` (fused operators) or ``Compiler`` (external codegen) are left alone. When
``transform.max_passes`` is set, bisection counts one step per function (``BISECT: running pass (N) <name> on
function (@f)``), so a bad rewrite can be narrowed down to one function.
"""

from ...error import KilnError
from ...ir.transform import Pass, PassInfo, make_pass_decorator, same_contents
from ..function import Function

_SKIP_ATTRS = ("SkipOptimization", "Primitive", "Compiler")


def skip_function(func) -> bool:
    """Whether a function pass leaves ``func`` alone (attrs ``SkipOptimization``, ``Primitive`` or ``Compiler``)."""
    attrs = func.attrs
    return any(attrs.get(key, 0) not in (0, None, "") for key in _SKIP_ATTRS)


class FunctionPass(Pass):
    """A pass over each Relay function of a module (it cannot add or remove functions).

    Built from a function ``(func, mod, ctx) -> func`` by :func:`function_pass`, or subclassed with
    ``transform_function``.
    """

    _bisects_itself = True

    def __init__(self, pass_func, info):
        if not callable(pass_func):
            raise TypeError(f"FunctionPass: pass_func must be callable, not {pass_func!r}")
        if not isinstance(info, PassInfo):
            raise TypeError(f"FunctionPass: info must be a PassInfo, not {info!r}")
        self._pass_func = pass_func
        self._info = info

    def transform_function(self, func, mod, ctx):
        """Return the new version of ``func`` (``mod`` is the module it belongs to)."""
        return self._pass_func(func, mod, ctx)

    def _run(self, mod, ctx):
        info = self.info
        work = mod.shallow_copy()
        updates = {}
        for gv, func in mod.functions.items():
            if not isinstance(func, Function) or skip_function(func):
                continue
            if not ctx.bisect_allows(info, f"function ({gv})"):
                continue
            new = self.transform_function(func, work, ctx)
            if not isinstance(new, Function):
                raise KilnError(f"pass {info.name} returned {type(new).__name__} for {gv}, not a relay.Function")
            if new is not func:
                updates[gv] = new
        if not updates and same_contents(work, mod):
            return mod
        out = work  # as in TVM, the copy the pass functions saw, with the new functions
        for gv, new in updates.items():
            out[gv] = new
        return out


function_pass = make_pass_decorator(FunctionPass, "transform_function", "function_pass")
function_pass.__name__ = "function_pass"
function_pass.__doc__ = """Make a function pass from ``(func, mod, ctx) -> func`` or a class with ``transform_function``.

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
>>> @relay.transform.function_pass(opt_level=1)   # doctest: +SKIP
... class TestReplaceFunc:
...     def __init__(self, new_func):
...         self.new_func = new_func
...
...     def transform_function(self, func, mod, ctx):
...         return self.new_func
"""
