"""The schedule record (TVM's ``te.keep_schedule_record``): with the PassContext config ``te.keep_schedule_record``
set when a schedule is created, ``s.schedule_record`` holds a copy of the schedule after each primitive and
``s.primitive_record`` the primitives' names (``"vanilla"`` for the schedule as created). A primitive made of
others records those (``tile`` is ``split``, ``split``, ``reorder``), and one calling another records once.
"""

import copy
import functools

from ..ir.pass_context import PassContext, register_config

__all__ = ["STAGE_PRIMITIVES", "SCHEDULE_PRIMITIVES", "install", "copy_schedule"]

register_config("te.keep_schedule_record", bool, False)

STAGE_PRIMITIVES = ("split", "fuse", "reorder", "parallel", "vectorize", "unroll", "pragma", "bind", "compute_at",
                    "compute_inline", "compute_root", "set_scope", "transform_layout",
                    "tensorize")
SCHEDULE_PRIMITIVES = ("cache_write", "cache_read", "rfactor")


def keep_record() -> bool:
    """Whether schedules created now keep a record."""
    return bool(PassContext.current().config.get("te.keep_schedule_record", False))


def copy_schedule(sch):
    """A copy of ``sch`` whose stages can change without changing ``sch``'s (the operations are shared)."""
    new = copy.copy(sch)
    remap = {}
    for stage in sch.stages:
        twin = copy.copy(stage)
        for name in ("all_iter_vars", "leaf_iter_vars", "relations"):
            setattr(twin, name, list(getattr(stage, name)))
        twin.iter_var_attrs = {k: copy.copy(v) for k, v in stage.iter_var_attrs.items()}
        twin.schedule = new
        remap[id(stage)] = twin
    for twin in remap.values():
        if twin.attach_stage is not None:
            twin.attach_stage = remap.get(id(twin.attach_stage), twin.attach_stage)
    new.stages = [remap[id(s)] for s in sch.stages]
    new.stage_map = {op: remap[id(s)] for op, s in sch.stage_map.items()}
    new.outputs = list(sch.outputs)
    new.keep_record, new.schedule_record, new.primitive_record = False, [], []
    new._recording = 0
    return new


def record(sch, name):
    """Append the schedule's current state under the primitive ``name``."""
    if sch is not None and sch.keep_record:
        sch.schedule_record.append(copy_schedule(sch))
        sch.primitive_record.append(name)


def _recorded(method, name, schedule_of):
    @functools.wraps(method)
    def wrapped(self, *args, **kwargs):
        sch = schedule_of(self)
        if sch is None or not sch.keep_record:
            return method(self, *args, **kwargs)
        sch._recording += 1
        try:
            result = method(self, *args, **kwargs)
        finally:
            sch._recording -= 1
        if sch._recording == 0:
            record(sch, name)
        return result

    return wrapped


def install(stage_cls, schedule_cls):
    """Make the scheduling primitives of the two classes record themselves."""
    for name in STAGE_PRIMITIVES:
        setattr(stage_cls, name, _recorded(getattr(stage_cls, name), name, lambda st: st.schedule))
    for name in SCHEDULE_PRIMITIVES:
        setattr(schedule_cls, name, _recorded(getattr(schedule_cls, name), name, lambda s: s))
