"""kiln/tir/layout.py: layouts map shapes to their primal axes and back, keeping symbolic dimensions by name."""

import pytest

from kiln import te
from kiln.error import KilnError
from kiln.ir.type import Any
from kiln.tir.layout import layout


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
