"""bijective_layout: index maps agree with numpy's reshaping of a tensor between the layouts, and round-trip."""

import numpy as np

from kiln import tir


def test_index_maps_match_numpy_relayout():
    b = tir.bijective_layout("NCHW", "NCHW16c")
    data = np.arange(2 * 32 * 3 * 3).reshape(2, 32, 3, 3)
    blocked = data.reshape(2, 2, 16, 3, 3).transpose(0, 1, 3, 4, 2)
    rng = np.random.default_rng(0)
    for _ in range(20):
        idx = [int(rng.integers(0, s)) for s in data.shape]
        dst = [int(v) for v in b.forward_index(idx)]
        assert blocked[tuple(dst)] == data[tuple(idx)]
        assert [int(v) for v in b.backward_index(dst)] == idx
    assert [int(d) for d in b.forward_shape((2, 32, 3, 3))] == list(blocked.shape)
    assert [int(d) for d in b.backward_shape(blocked.shape)] == [2, 32, 3, 3]


def test_twice_split_axis_and_symbolic_index():
    b = tir.bijective_layout("OIHW", "OIHW4i2i")
    assert [int(v) for v in b.forward_index([1, 13, 0, 2])] == [1, 1, 0, 2, 2, 1]  # 13 = 1*8 + 2*2 + 1
    i = tir.Var("i", "int32")
    assert "floordiv" in str(b.forward_index([0, i, 0, 0])[1]) or "//" in str(b.forward_index([0, i, 0, 0])[1])


def test_undefined_layout_converts_to_nothing():
    for src, dst in [("__undef__", "NCHW"), ("", "NCHW"), ("NCHW", ""), ("", "")]:
        assert tir.bijective_layout(src, dst) is None
