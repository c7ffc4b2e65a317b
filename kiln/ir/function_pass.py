"""The per-function pass loop shared by ``relay.transform.FunctionPass`` and ``tir.transform.PrimFuncPass``."""

from ..error import KilnError
from .transform import Pass, PassInfo, same_contents


class FunctionLevelPass(Pass):
    """Base of the passes applied to each function of one kind: ``relay.transform.FunctionPass`` and
    ``tir.transform.PrimFuncPass``. Subclasses say which functions they take (``applies_to``), what those are
    called in messages (``function_kind``), and whether returning None removes a function (``may_remove``).

    As in TVM, every function sees the same shallow copy of the module, and the new functions replace the old ones
    once all were visited. With ``transform.max_passes`` set, bisection counts one step per function.
    """

    _bisects_itself = True
    function_kind = "function"
    may_remove = False

    def __init__(self, pass_func, info):
        if not callable(pass_func):
            raise TypeError(f"{type(self).__name__}: pass_func must be callable, not {pass_func!r}")
        if not isinstance(info, PassInfo):
            raise TypeError(f"{type(self).__name__}: info must be a PassInfo, not {info!r}")
        self._pass_func = pass_func
        self._info = info

    def applies_to(self, func) -> bool:
        """Whether the pass transforms ``func``."""
        raise NotImplementedError(f"{type(self).__name__} must implement applies_to(func)")

    def transform_function(self, func, mod, ctx):
        """Return the new version of ``func`` (``mod`` is the module it belongs to)."""
        return self._pass_func(func, mod, ctx)

    def _run(self, mod, ctx):
        info = self.info
        work = mod.shallow_copy()
        updates = {}
        for gv, func in mod.functions.items():
            if not self.applies_to(func) or not ctx.bisect_allows(info, f"function ({gv})"):
                continue
            new = self.transform_function(func, work, ctx)
            if (new is None and not self.may_remove) or (new is not None and not self.applies_to_kind(new)):
                raise KilnError(
                    f"pass {info.name} returned {type(new).__name__} for {gv}, not a {self.function_kind}"
                )
            if new is not func:
                updates[gv] = new
        if not updates and same_contents(work, mod):
            return mod
        for gv, new in updates.items():  # as in TVM, the copy the pass functions saw, with the new functions
            if new is None:
                work.remove(gv)
            else:
                work[gv] = new
        return work

    def applies_to_kind(self, func) -> bool:
        """Whether ``func`` is of the kind this pass works on (checked on what the pass returns)."""
        return self.applies_to(func)
