"""kiln.topi.generic: target-independent schedules (TVM's ``topi.generic``): the default schedule (one loop per
axis, injective intermediates inlined), used where no tuned schedule applies and by tests of computes."""

from ..utils import auto_inline_injective, create_schedule_for

__all__ = ["default_schedule", "schedule_injective", "schedule_reduce", "schedule_extern"]


def default_schedule(outs, auto_inline=True):
    """A schedule of ``outs`` with every stage at the top level (injective intermediates inlined by default).

    Returns
    -------
    s : Schedule
    """
    s = create_schedule_for(outs)
    if auto_inline:
        auto_inline_injective(s)
    return s


def schedule_injective(outs, target=None):
    """The default schedule of an injective group."""
    return default_schedule(outs)


def schedule_reduce(outs, target=None):
    """The default schedule of a reduction group."""
    return default_schedule(outs)


def schedule_extern(outs, target=None):
    """The default schedule of operations computed outside TE (no loops to arrange)."""
    return default_schedule(outs, auto_inline=False)

