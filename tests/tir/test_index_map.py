"""tir.IndexMap: mapped indices agree with the Python function, shapes bound the image, the inverse inverts on
every point, the padding predicate holds exactly on the points no index maps to, and map_ndarray moves every
element where map_indices says."""

import itertools

import numpy as np
import pytest

import kiln
from kiln import tir
from kiln.error import TIRError
from kiln.tir import IndexMap
from kiln.tir.evaluator import evaluate_expr

MAPS = [
    (lambda i: [i // 4, i % 4], [16]),
    (lambda i, j: [j, i], [3, 5]),
    (lambda i, j: [(i * 6 + j) // 4, (i * 6 + j) % 4], [4, 6]),
    (lambda i: [i // 32, (i // 4) % 8, i % 4], [128]),
]


def _points(shape):
    return itertools.product(*(range(int(s)) for s in shape))


@pytest.mark.parametrize("func, shape", MAPS, ids=range(len(MAPS)))
def test_map_indices_and_inverse_agree_with_the_function(func, shape):
    m = IndexMap.from_func(func, index_dtype="int32")
    inv = m.inverse(shape)
    out_shape = [int(d) for d in m.map_shape(shape)]
    images = set()
    for p in _points(shape):
        got = [int(v) for v in m.map_indices(list(p))]
        assert got == [int(v) if not hasattr(v, "dtype") else int(evaluate_expr(v)) for v in func(*p)]
        assert all(0 <= g < s for g, s in zip(got, out_shape, strict=True))
        images.add(tuple(got))
        back = [int(evaluate_expr(e, dict(zip(inv.initial_indices, got, strict=True)))) for e in inv.final_indices]
        assert back == list(p)
    assert len(images) == int(np.prod(shape)) == int(np.prod(out_shape))


def test_padding_predicate_marks_exactly_the_unmapped_points():
    m = IndexMap.from_func(lambda i: [(i + 1) // 4, (i + 1) % 4], index_dtype="int32")
    inv, pad = m.non_surjective_inverse([14])
    out_shape = [int(d) for d in m.map_shape([14])]
    assert out_shape == [4, 4]
    image = {tuple(int(v) for v in m.map_indices([i])) for i in range(14)}
    for q in _points(out_shape):
        env = dict(zip(inv.initial_indices, q, strict=True))
        assert bool(evaluate_expr(pad, env)) == (q not in image)
        if q in image:
            assert int(evaluate_expr(inv.final_indices[0], env)) * 1 + 1 == q[0] * 4 + q[1]


def test_map_shape_rounds_padded_dimensions_up_and_keeps_dtype():
    m = IndexMap.from_func(lambda i: [i // 4, i % 4], index_dtype="int32")
    assert [int(d) for d in m.map_shape([14])] == [4, 4]
    assert [d.dtype for d in m.map_shape([kiln.runtime.const(14, "int64")])] == ["int64", "int64"]
    assert [d.dtype for d in m.map_indices([kiln.runtime.const(42, "int64")])] == ["int64", "int64"]


def test_map_ndarray_moves_every_element():
    m = IndexMap.from_func(lambda a, b, c: [c // 2, a, b, c % 2])
    src = np.random.default_rng(0).standard_normal((2, 3, 4)).astype("float32")
    out = m.map_ndarray(kiln.nd.array(src)).numpy()
    for a, b, c in _points(src.shape):
        assert out[c // 2, a, b, c % 2] == src[a, b, c]
    back = m.inverse(src.shape).map_ndarray(kiln.nd.array(out)).numpy()
    np.testing.assert_array_equal(back, src)


def test_user_inverse_and_equivalence():
    m = IndexMap.from_func(lambda i: [i // 4, i % 4], inverse_index_map=lambda a, b: [a * 4 + b])
    assert m.inverse([16]).is_equivalent_to(IndexMap.from_func(lambda a, b: [a * 4 + b]))
    assert not m.is_equivalent_to(IndexMap.from_func(lambda i: [i // 4, i % 2]))


def test_errors_name_the_problem():
    m = IndexMap.from_func(lambda i: [i // 4, i % 4])
    with pytest.raises(TIRError, match="sum of iterators"):
        m.inverse([14])
    with pytest.raises(TIRError, match="2 indices"):
        m.map_indices([1, 2])
    with pytest.raises(TIRError, match="ndim"):
        IndexMap.from_func(lambda *args: list(args))
    with pytest.raises(TIRError, match="AXIS_SEPARATOR"):
        IndexMap.from_func(lambda i: [i, IndexMap.AXIS_SEPARATOR, i])
    index_map, separators = IndexMap.from_func_with_separators(lambda i, j: [i, IndexMap.AXIS_SEPARATOR, j])
    assert separators == [1] and len(index_map.final_indices) == 2
    assert isinstance(tir.IndexMap, type)
