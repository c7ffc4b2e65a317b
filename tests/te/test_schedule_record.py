"""The schedule record under te.keep_schedule_record (kiln/te/schedule_record.py)."""

import kiln
from kiln import te


def _matmul():
    k = te.reduce_axis((0, 64), "k")
    A = te.placeholder((64, 64), name="A")
    B = te.placeholder((64, 64), name="B")
    return A, B, k, te.compute((64, 64), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")


def test_off_by_default():
    *_, C = _matmul()
    s = te.create_schedule(C.op)
    s[C].split(C.op.axis[0], factor=8)
    assert s.schedule_record == [] and s.primitive_record == []


def test_each_primitive_records_a_snapshot():
    with kiln.transform.PassContext(config={"te.keep_schedule_record": True}):
        A, B, k, C = _matmul()
        s = te.create_schedule(C.op)
        mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], 16, 16)
        s[C].vectorize(ni)
        s[C].pragma(mo, "unroll")
        CC = s.cache_write(C, "local")
    assert s.primitive_record == ["vanilla", "split", "split", "reorder", "vectorize", "pragma", "cache_write"]
    first, after_tile = s.schedule_record[0], s.schedule_record[3]
    assert len(first[C].leaf_iter_vars) == 3 and len(after_tile[C].leaf_iter_vars) == 5
    assert after_tile[C] is not s[C] and after_tile[C].schedule is after_tile
    assert CC.op not in s.schedule_record[5].stage_map and CC.op in s.schedule_record[6].stage_map
    # a recorded snapshot lowers on its own
    mod = kiln.lower(s.schedule_record[3], [A, B, C])
    assert "C" in str(mod)
