"""structural_equal converts a Python number compared with an IR node, as TVM's converts both sides."""

import pytest

from kiln import ir, tir


def test_number_against_constant():
    assert ir.structural_equal(tir.const(32), 32)
    assert ir.structural_equal(0.5, tir.const(0.5, "float32"))
    assert not ir.structural_equal(tir.const(32, "int64"), 32)  # 32 converts to int32
    ir.assert_structural_equal(tir.const(3), 3)
    with pytest.raises(ValueError):
        ir.assert_structural_equal(tir.const(3), 4)
    assert ir.structural_equal(3, 3) and not ir.structural_equal(3, 4)


def test_sequences_compare_with_numbers_converted():
    from kiln import ir, tir

    assert ir.structural_equal((tir.IntImm("int32", 512),), [512])
    assert ir.structural_equal([tir.IntImm("int32", 2), tir.IntImm("int32", 3)], (2, 3))
    assert not ir.structural_equal((tir.IntImm("int32", 2),), [3])
    ir.assert_structural_equal(tir.decl_buffer([16, 32]).get_flattened_buffer().shape, [16 * 32])
