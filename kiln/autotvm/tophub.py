"""TopHub (TVM's ``autotvm.tophub``): the pre-tuned configs of a target, applied with ``tophub.context(target)``.

TVM downloads its TopHub packages (logs of tuned configs per target) from the network. kiln ships none and fetches
nothing, so the context applies only the records of ``extra_files``; every other workload gets its template's
default config, exactly what TVM gives a target TopHub has no package for.
"""

from ..target.target import Target
from .task import ApplyHistoryBest

__all__ = ["context"]


def context(target, extra_files=None):
    """A dispatch context of the pre-tuned configs for ``target`` (see the module docstring).

    Parameters
    ----------
    target : str, Target or list of them
        The targets (checked, so a misspelled target fails here as in TVM).
    extra_files : list of str, optional
        Tuning logs whose records are applied too.

    Returns
    -------
    ctx : ApplyHistoryBest
    """
    for t in target if isinstance(target, list | tuple) else [target]:
        if not isinstance(t, Target):
            Target(t)
    ctx = ApplyHistoryBest(None)
    for path in extra_files or ():
        ctx.load(path)
    return ctx
