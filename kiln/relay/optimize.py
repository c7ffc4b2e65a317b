"""The standard Relay optimization pipeline that ``relay.build`` runs (TVM's ``RelayBuildModule::OptimizeImpl``).

Passes run in TVM's order inside one ``Sequential``, so the current PassContext decides which run: each pass's
``opt_level`` against the context's, then ``disabled_pass`` and ``required_pass``. Parameters given by name are bound
as constants first, so FoldConstant and FoldScaleAxis can fold them into the graph.
"""

import numpy as np

from ..error import KilnError
from ..ir.module import IRModule
from ..ir.transform import PassContext, Sequential, get_pass
from ..target.target import resolve_target
from .expr import bind, const
from .function import Function

#: pass names in the order the standard pipeline runs them (each gated by its own opt_level)
STANDARD_PIPELINE = (
    "InferType",
    "DynamicToStatic",
    "QnnCanonicalize",
    "Legalize",
    "SimplifyInference",
    "EliminateCommonSubexpr",
    "CombineParallelConv2d",  # these three at opt_level 4 only, as TVM's
    "CombineParallelDense",
    "CombineParallelBatchMatmul",
    "SimplifyExpr",
    "FoldConstant",
    "FoldScaleAxis",
    "SimplifyExpr",
    "CanonicalizeCast",
    "CanonicalizeOps",
    "FlattenAtrousConv",
    "AlterOpLayout",
    "FastMath",
    "FoldConstant",
    "FuseOps",
)


def bind_params_by_name(func: Function, params: dict) -> Function:
    """Replace the parameters of ``func`` named in ``params`` by constants (unknown names are ignored, as in TVM)."""
    by_name: dict = {}
    repeated = set()
    for p in func.params:
        if p.name_hint in by_name:
            repeated.add(p.name_hint)
        by_name[p.name_hint] = p
    binds = {}
    for name, value in params.items():
        if name in repeated:  # only a name given a value must be unique (TVM's rule: others may repeat)
            raise KilnError(f"bind_params_by_name: several parameters are named {name!r}")
        if name in by_name:
            array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
            binds[by_name[name]] = const(array, dtype=array.dtype)  # int64/float64 params keep their dtype
    return bind(func, binds) if binds else func


def standard_pipeline(fuse=True) -> Sequential:
    """The Sequential of :data:`STANDARD_PIPELINE` (without FuseOps when ``fuse`` is False)."""
    names = [n for n in STANDARD_PIPELINE if fuse or n != "FuseOps"]
    return Sequential([get_pass(n) for n in names], name="RelayOptimize")


def optimize(mod, target=None, params=None):
    """Bind ``params`` and run the standard pipeline under the current PassContext; returns ``(mod, params)``.

    Parameters
    ----------
    mod : IRModule or relay.Function
        The program; ``@main`` receives ``params``.
    target : str or Target, optional
        The target, made current while the passes run (target-specific hooks such as AlterOpLayout read it).
    params : dict of str to NDArray, optional
        Constant parameters of ``@main``.

    Examples
    --------
    >>> with kiln.transform.PassContext(opt_level=3):   # doctest: +SKIP
    ...     mod, params = relay.optimize(mod, "llvm", params)
    """
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise KilnError(f"relay.optimize takes an IRModule or a relay.Function, not {type(mod).__name__}")
    if params:
        mod = mod.shallow_copy()
        mod["main"] = bind_params_by_name(mod["main"], params)
    pipeline = standard_pipeline()
    if target is None:
        return pipeline(mod), {}
    with resolve_target(target):
        return pipeline(mod), {}


__all__ = ["optimize", "bind_params_by_name", "standard_pipeline", "STANDARD_PIPELINE", "PassContext"]
