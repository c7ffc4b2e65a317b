"""Schedule.create_group (kiln/te/schedule_group.py): groups, nesting, and computing a group inside a loop."""

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.error import TIRError


def _chain():
    A = te.placeholder((8, 6), name="A")
    x = te.compute((8, 6), lambda i, j: A[i, j] * 2.0, name="x")
    x1 = te.compute((8, 6), lambda i, j: x[i, j] + 1.0, name="x1")
    x2 = te.compute((8, 6), lambda i, j: x1[i, j] * 3.0, name="x2")
    return A, x, x1, x2


def test_group_members_and_nesting():
    A, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    g1 = s.create_group(outputs=x1, inputs=x)
    g2 = s.create_group(outputs=x1, inputs=x, include_inputs=True)
    assert s.groups == [g1, g2] and s[x1].group is g1 and s[x].group is g2 and g1.group is g2
    assert g2.num_child_stages == 2 and g1.num_child_stages == 1


def test_group_computed_inside_a_loop_runs():
    A, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    g = s.create_group(outputs=x1, inputs=A, include_inputs=False)
    g.compute_at(s[x2], x2.op.axis[0])
    assert g.attach_stage is s[x2]
    bounds = te.schedule.InferBound(s)
    assert int(bounds[x.op.axis[0]].extent) == 1 and int(bounds[x1.op.axis[1]].extent) == 6
    f = kiln.build(s, [A, x2])
    a = np.random.default_rng(0).random((8, 6), dtype="float32")
    out = kiln.nd.array(np.zeros((8, 6), "float32"))
    f(kiln.nd.array(a), out)
    np.testing.assert_allclose(out.numpy(), (a * 2 + 1) * 3, rtol=1e-6)


def test_compute_at_outside_the_group_is_refused():
    A, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    s.create_group(outputs=x1, inputs=A)
    with pytest.raises(TIRError, match="outside its group"):
        s[x1].compute_at(s[x2], x2.op.axis[0])
    s[x].compute_at(s[x1], x1.op.axis[0])  # within the group: allowed


def test_a_region_cutting_through_a_group_is_refused():
    A, x, x1, x2 = _chain()
    s = te.create_schedule(x2.op)
    s.create_group(outputs=x1, inputs=A)
    with pytest.raises(TIRError, match="cuts through"):
        s.create_group(outputs=x2, inputs=x)
