"""kiln/tir/layout.py: layouts map shapes to their primal axes and back, keeping symbolic dimensions by name."""

import pytest

from kiln import te
from kiln.error import KilnError
from kiln.ir.type import Any
from kiln.tir.layout import SCALAR, from_axes, layout


def test_primal_sizes_of_plain_and_blocked_layouts():
    assert layout("NHWC").shape_to_primal((2, 5, 6, 3)) == {"N": 2, "H": 5, "W": 6, "C": 3}
    assert layout("NCHW4c").shape_to_primal((1, 2, 5, 6, 4)) == {"N": 1, "C": 8, "H": 5, "W": 6}
    assert layout("OIHW4o4i").shape_from_primal({"O": 16, "I": 8, "H": 3, "W": 3}) == (4, 2, 3, 3, 4, 4)
    assert layout("NHWC").convert_shape((2, 5, 6, 3), layout("NCHW")) == (2, 3, 5, 6)
    with pytest.raises(KilnError, match="not divisible"):
        layout("NCHW8c").shape_from_primal({"N": 1, "C": 12, "H": 2, "W": 2})


def test_symbolic_dimensions_keep_their_names():
    n = Any(te.size_var("n"))
    sizes = layout("NWC").shape_to_primal((n, 7, 3))
    assert sizes["N"] is n
    assert layout("NCW").shape_from_primal(sizes) == (n, 3, 7)
    assert layout("NCW").shape_from_primal(sizes)[0] is n
    blocked = layout("NCHW4c").shape_to_primal((1, n, 5, 6, 4))
    assert blocked["C"] != n  # a dimension computed from a symbolic one is unknown, not the same variable


def test_parse_and_convert_shapes():
    lay = layout("NCHW16c")
    assert lay.primal == "NCHW" and lay.ndim == 5 and lay.ndim_primal == 4
    assert lay.shape_to_primal((1, 4, 8, 8, 16)) == {"N": 1, "C": 64, "H": 8, "W": 8}
    assert layout("NCHW").convert_shape((1, 64, 8, 8), lay) == (1, 4, 8, 8, 16)
    with pytest.raises(KilnError, match="not divisible"):
        layout("NCHW").convert_shape((1, 3, 8, 8), lay)
    for bad in ("", "NC16", "NCHWc", "N16C", "NCHWW", "NCHW4d"):
        with pytest.raises(KilnError):
            layout(bad)


def test_tvm_style_access():
    lay = layout("NCHW16c")
    assert len(lay) == 5 and lay[1] == "C" and lay[4] == "c" and lay[-1] == "c"
    assert "c" in lay and "D" not in lay
    assert lay.index_of("c") == 4 and lay.index_of("D") == -1


def test_sub_layout():
    lay = layout("NCHW16c")
    assert lay.sub_layout(1, 3).name == "CHW"
    assert lay.sub_layout(2, 10).name == "HW16c"  # fewer at the end
    assert lay.sub_layout(0, 0) == SCALAR and len(SCALAR) == 0
    assert lay.sub_layout(6, 1) is None  # past the end: undefined
    assert from_axes((("c", 16),)).name == "16c"  # a part of a layout need not be a layout on its own


def test_expand_primal():
    assert layout("C").expand_primal(layout("NCHW16c")).name == "NHWC"
    assert layout("HW").expand_primal(layout("NCHW")).name == "NCHW"
    assert layout("CHW").expand_primal(layout("NCHW4c")).name == "NCHW"


def test_tvm_layout_of_the_empty_string_is_undefined():
    # tvm.tir.layout("") is TVM's undefined layout; layout rules written for TVM start from it
    import kiln

    assert kiln.tir.layout("") is None
    assert kiln.tir.layout("NCHW16c").name == "NCHW16c"


def test_an_axis_split_twice():
    """TVM's OHWI16i64o2i: I is split into 16i and 2i; its factor is their product."""
    lay = layout("OHWI16i64o2i")
    assert lay.factor_of("I") == 32 and lay.sub_axes("I") == [4, 6] and lay.sub_axes("O") == [5]
    assert layout("OIHW").convert_shape((128, 64, 3, 3), lay) == (2, 3, 3, 2, 16, 64, 2)
    assert lay.shape_to_primal((2, 3, 3, 2, 16, 64, 2)) == {"O": 128, "H": 3, "W": 3, "I": 64}
    with pytest.raises(KilnError, match="not divisible"):
        layout("OIHW").convert_shape((128, 48, 3, 3), lay)


def test_bijective_layout_converts_shapes_both_ways_keeping_dynamic_dims():
    from kiln.tir import BijectiveLayout, bijective_layout

    nhwc = bijective_layout("NCHW", "NHWC")
    assert isinstance(nhwc, BijectiveLayout)
    n, w = Any(), Any()
    assert nhwc.forward_shape((n, 32, 7, w)) == (n, 7, w, 32)
    assert nhwc.backward_shape((n, 7, w, 32)) == (n, 32, 7, w)
    blocked = bijective_layout("NCHW", "NCHW16c")
    assert blocked.forward_shape((1, 32, 7, 7)) == (1, 2, 7, 7, 16)
    assert blocked.backward_shape((1, 2, 7, 7, 16)) == (1, 32, 7, 7)
    assert bijective_layout("NCHW", "NCDHW") is None  # not convertible: TVM's undefined layout
    assert bijective_layout("NCHW", "ABCD") is None
