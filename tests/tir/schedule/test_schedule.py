"""tir.Schedule's lookups (kiln/tir/schedule/schedule.py): blocks by name, their loops, StmtSRefs."""

import pytest

from kiln import tir
from kiln.script import tir as T
from kiln.tir.schedule import ScheduleError


@T.prim_func
def _two_blocks(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    B = T.alloc_buffer((4, 4))
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i in range(4):
        for j in range(4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


def test_get_block_loops_and_sref():
    s = tir.Schedule(_two_blocks, debug_mask="all")
    assert s.mod["main"] is _two_blocks
    rv = s.get_block("C")
    block = s.get(rv)
    assert isinstance(block, tir.Block) and block.name_hint == "C"
    sref = s.get_sref(rv)
    assert isinstance(sref, tir.schedule.StmtSRef) and sref.stmt is block
    loops = s.get_loops(rv)
    assert [s.get(lp).loop_var.name_hint for lp in loops] == ["i", "j"]
    assert s.get_sref(loops[0]).parent.stmt.name_hint == "root"
    assert s.get_sref(block) is sref


def test_lookup_errors():
    s = tir.Schedule(_two_blocks)
    with pytest.raises(ScheduleError, match="no blocks named 'D'"):
        s.get_block("D")
    with pytest.raises(ScheduleError, match="no function"):
        s.get_block("B", func_name="other")
    with pytest.raises(ScheduleError, match="debug_mask"):
        tir.Schedule(_two_blocks, debug_mask="some")
    with pytest.raises(ScheduleError, match="PrimFunc or IRModule"):
        tir.Schedule(3)
