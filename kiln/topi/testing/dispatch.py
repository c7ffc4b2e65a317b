"""Which compute and schedule a topi test uses on a target (TVM's ``topi.testing.dispatch`` and the
``get_*_schedule`` helpers of ``topi/testing/common.py``).

A table maps target keys (``Target.keys``: ``"cpu"`` for ``llvm`` and ``c``) to a schedule (or a
``(compute, schedule)`` pair); the first key of the target found in the table wins, else its ``"generic"`` entry.
kiln compiles for CPUs only, so its tables hold the ``generic`` and ``cpu`` entries.
"""

from ...error import KilnError
from ...target.target import Target
from .. import generic, nn, x86

__all__ = ["dispatch", "get_injective_schedule", "get_reduce_schedule", "get_broadcast_schedule",
           "get_elemwise_schedule", "get_conv2d_nchw_implement"]

_injective_schedule = {"generic": generic.schedule_injective, "cpu": x86.schedule_injective}
_reduce_schedule = {"generic": generic.schedule_reduce, "cpu": x86.schedule_reduce}
_conv2d_nchw_implement = {
    "generic": (nn.conv2d_nchw, generic.schedule_conv2d_nchw),
    "cpu": (x86.conv2d_nchw, x86.schedule_conv2d_nchw),
}


def dispatch(target, dispatch_map):
    """The entry of ``dispatch_map`` for the first of ``target``'s keys it has, else its ``"generic"`` entry.

    Parameters
    ----------
    target : str or Target
    dispatch_map : dict
        Target key -> anything (a schedule, a ``(compute, schedule)`` pair).
    """
    if isinstance(target, str):
        target = Target(target)
    if not isinstance(target, Target):
        raise KilnError(f"topi.testing.dispatch: expected a target, got {type(target).__name__}")
    for key in target.keys:
        if key in dispatch_map:
            return dispatch_map[key]
    if "generic" not in dispatch_map:
        raise KilnError(f"topi.testing.dispatch: no entry for target {target} (keys {list(target.keys)}) and no "
                        "'generic' entry")
    return dispatch_map["generic"]


def get_injective_schedule(target):
    """The injective schedule for ``target``."""
    return dispatch(target, _injective_schedule)


def get_reduce_schedule(target):
    """The reduction schedule for ``target``."""
    return dispatch(target, _reduce_schedule)


get_broadcast_schedule = get_injective_schedule
get_elemwise_schedule = get_injective_schedule


def get_conv2d_nchw_implement(target):
    """The ``(compute, schedule)`` of an NCHW convolution for ``target``."""
    return dispatch(target, _conv2d_nchw_implement)
