"""Buffer.access_ptr (kiln/tir/buffer.py): the tvm_access_ptr call TVM's intrinsics pass to external code."""

import pytest

from kiln import tir
from kiln.error import TIRError
from kiln.ir import assert_structural_equal


def test_access_ptr_arguments():
    off = tir.Var("off", "int32")
    buf = tir.decl_buffer((4, 8), "float32", "A", elem_offset=off)
    call = buf.access_ptr("rw")
    assert call.op.name == "tir.tvm_access_ptr" and call.dtype == "handle"
    ptype, data, offset, extent, mask = call.args
    assert ptype.dtype == "float32" and data is buf.data and offset is off
    assert int(extent) == 32 and int(mask) == 3
    call = buf.access_ptr("r", offset=8, content_lanes=4)
    assert call.args[0].dtype == "float32x4" and int(call.args[4]) == 1
    assert_structural_equal(call.args[3], tir.floordiv(tir.const(32) - 8, 4))


def test_strided_extent_and_bad_mask():
    s = tir.Var("s", "int32")
    buf = tir.decl_buffer((4, 8), "float32", "B", strides=[s, 1])
    assert_structural_equal(buf.access_ptr(tir.Buffer.WRITE).args[3], s * 4 - 0)
    with pytest.raises(TIRError, match="unknown access mask"):
        buf.access_ptr("x")
