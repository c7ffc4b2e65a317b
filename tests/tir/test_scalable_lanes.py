"""Scalable vector lanes (``vscale() * k``), TVM's 1-bit unsigned bool, and the TVM names kiln.ir and kiln.tir.op
lend from elsewhere."""

import pytest

import kiln
from kiln import tir
from kiln.error import TIRError
from kiln.tir import dtype as _dt


def test_scalable_dtype_round_trips():
    t = _dt.DataType.parse("float32xvscalex4")
    assert t.lanes == -4 and t.is_scalable_vector() and t.is_vector()
    assert str(t) == "float32xvscalex4"
    assert _dt.with_lanes("int32", -8) == "int32xvscalex8"
    assert _dt.binary_result("int32", "int32xvscalex4") == "int32xvscalex4"


def test_uint1_is_bool():
    assert _dt.normalize("uint1") == "bool"
    assert _dt.normalize("uint1x4") == "boolx4"
    assert tir.Var("c", "uint1").dtype == "bool"


def test_ramp_and_broadcast_take_scalable_lanes():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    lanes = tir.vscale() * 4
    ramp = tir.Ramp(x, 1, lanes)
    assert ramp.dtype == "int32xvscalex4" and ramp.lanes is lanes
    total = ramp + y  # the scalar is broadcast to the same scalable lanes
    assert total.dtype == "int32xvscalex4"
    assert isinstance(total.b, tir.Broadcast) and kiln.ir.structural_equal(total.b.lanes, lanes)
    assert tir.Broadcast(y, tir.IntImm("int32", 4)).lanes == 4


def test_bad_lanes_are_refused():
    x = tir.Var("x", "int32")
    with pytest.raises(TIRError, match="lanes"):
        tir.Ramp(x, 1, x * 4)
    with pytest.raises(TIRError, match="2 lanes"):
        tir.Broadcast(x, 1)


def test_names_at_tvm_places():
    rng = kiln.ir.Range(2, 10)
    assert isinstance(rng, kiln.ir.expr.Range) and rng.extent.value == 8
    assert isinstance(tir.Var("x", "int32"), kiln.ir.PrimExpr)
    assert kiln.tir.op.shift_right is tir.shift_right
    with pytest.raises(AttributeError, match="no_such_intrinsic"):
        _ = kiln.tir.op.no_such_intrinsic
    assert kiln.arith.Extension.ComparisonOfProductAndSum.value == 8


def test_intimm_compares_by_value_like_tvm():
    one = tir.const(1)
    assert one in {1} and one == 1 and not (one != 1)
    assert bool(one == tir.IntImm("int32", 1))
    # another dtype: TVM matches the dtypes first, then folds (test_tir_ops' const(1) == const(True))
    assert bool(one == tir.IntImm("int64", 1)) and not bool(one == tir.IntImm("int64", 2))
    assert not bool(one == tir.Var("v", "int32"))  # with a non-constant: an EqualOp, true only for the same node
    assert tir.Ramp(0, 1, 11 * tir.vscale()).lanes.b == 11  # the scalable count is kept as vscale() * k


def test_truth_value_of_expression_is_a_value_error():
    x = tir.Var("x", "int32")
    with pytest.raises(ValueError, match="run time"):
        _ = x or x
    with pytest.raises(TIRError, match="shift amount"):
        _ = x << 32
    with pytest.raises(TIRError, match="integer"):
        _ = ~tir.const(1.5, "float32")
    assert str(10 ^ x) == "T.bitwise_xor(10, x)" and str(1 << x) == "T.shift_left(1, x)"


def test_var_name_and_uint1_prim_type():
    assert tir.Var("xx", "float32").name == "xx"
    assert str(kiln.ir.PrimType("uint1")) == str(kiln.ir.PrimType("bool"))


def test_data_type_from_a_string():
    from kiln.tir import DataType

    scalable = DataType("float32xvscalex4")
    assert str(scalable) == "float32xvscalex4" and scalable.lanes == -4 and scalable.is_scalable_vector()
    assert DataType("int8x16") == DataType("int", 8, 16) == DataType.parse("int8x16")
    with pytest.raises(TIRError, match="unknown TIR dtype"):
        DataType("float32x4xvscale")
