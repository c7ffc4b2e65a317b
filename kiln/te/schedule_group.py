"""``Schedule.create_group``: stages scheduled as one (TVM's stage groups).

A group is a stage without an operation. ``create_group(outputs, inputs, include_inputs)`` puts the stages between
``inputs`` and ``outputs`` in a new group; ``g.compute_at(s[C], axis)`` then computes every member left at the root
inside that loop (a member's own ``compute_at`` still wins, see :meth:`Stage.attach_spec`). Groups nest: a group
made over stages that already form whole groups contains those groups. The new group's parent is the innermost
group holding all the stages; a region that cuts through an existing group is refused.
"""

from ..error import TIRError
from .graph import get_subgraph
from .schedule import Stage
from .tensor import Tensor

__all__ = ["create_group", "group_scan_bodies"]


def _ancestors(group) -> list:
    out = []
    while group is not None:
        out.append(group)
        group = group.group
    return out


def _common_ancestor(a, b):
    """The innermost group holding both ``a`` and ``b`` (None: the schedule itself)."""
    if a is None or b is None:
        return None
    chain = _ancestors(a)
    for g in _ancestors(b):
        if any(g is x for x in chain):
            return g
    return None


def _tensors(value, what):
    values = list(value) if isinstance(value, list | tuple) else [value]
    for v in values:
        if not isinstance(v, Tensor):
            raise TIRError(f"create_group: {what} must be te.Tensors, got {type(v).__name__}")
    return values


def create_group(sch, outputs, inputs, include_inputs=False) -> Stage:
    """See the module docstring; returns the group stage, also listed in ``sch.groups``."""
    ops = get_subgraph(_tensors(outputs, "outputs"), _tensors(inputs, "inputs"), include_inputs)
    stages = [sch[op] for op in ops]
    if not stages:
        raise TIRError("create_group: no stage lies between the inputs and the outputs")
    parent = stages[0].group
    for s in stages[1:]:
        parent = _common_ancestor(parent, s.group)
    counter: dict = {}
    for s in stages:
        if s.group is not None:
            counter[id(s.group)] = (s.group, counter.get(id(s.group), (None, 0))[1] + 1)
    gstage = Stage(None, sch)
    gstage.group = parent
    if parent is not None:
        parent.num_child_stages += 1
    # a subgroup whose members are all in the region counts as one member of its own parent
    stack = [g for g, n in counter.values() if g is not parent and g.num_child_stages == n]
    while stack:
        g = stack.pop()
        pg = g.group
        if pg is not None and pg is not parent:
            counter[id(pg)] = (pg, counter.get(id(pg), (None, 0))[1] + 1)
            if pg.num_child_stages == counter[id(pg)][1]:
                stack.append(pg)
    for g, n in list(counter.values()):
        if g is parent:
            continue
        if g.num_child_stages != n:
            raise TIRError("create_group: the region cuts through a group created before (a group must hold all "
                           "or none of another group's stages)")
        if g.group is parent:
            _move(g, gstage, parent)
    for s in stages:
        if s.group is parent:
            _move(s, gstage, parent)
    for s in stages:
        # an attachment outside the group would pull a member out of it: compute it at the root instead (TVM)
        if s.attach_type == "scope" and _common_ancestor(s.attach_stage.group, gstage) is not gstage:
            s.compute_root()
    sch.groups.append(gstage)
    return gstage


def _move(stage, group, parent):
    stage.group = group
    group.num_child_stages += 1
    if parent is not None:
        parent.num_child_stages -= 1


def group_scan_bodies(sch):
    """Put each scan's body in a group computed in the scan's time loop (``attach_type`` ``"scan_update"``), as
    TVM's schedule does."""
    for stage in list(sch.stages):
        op = stage.op
        if getattr(op, "scan_axis", None) is None:
            continue
        group = create_group(sch, list(op.update), [*op.state_placeholder, *op.inputs], False)
        group.attach_type, group.attach_stage = "scan_update", stage
